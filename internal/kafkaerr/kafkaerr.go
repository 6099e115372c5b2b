package kafkaerr

import (
	"errors"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Of returns the Kafka error err maps to in any request: nil for nil; the
// error of the first row of the table, among those for every request, whose
// error err matches; else the *kerr.Error err is or wraps; else
// UNKNOWN_SERVER_ERROR.
func Of(err error) *kerr.Error { return find(err, -1, kerr.UnknownServerError) }

// Code is Of(err)'s code, 0 for nil.
func Code(err error) int16 { return code(Of(err)) }

// OfStorage is Of for the error of a storage operation (a log append,
// read, lookup, flush, truncation or deletion): an error that neither a
// row nor a *kerr.Error names is KAFKA_STORAGE_ERROR (the log failed in a
// way the table does not know, an I/O error), as Kafka answers a request
// whose log directory failed.
func OfStorage(err error) *kerr.Error { return find(err, -1, kerr.KafkaStorageError) }

// StorageCode is OfStorage(err)'s code, 0 for nil.
func StorageCode(err error) int16 { return code(OfStorage(err)) }

// OfAPI is Of for a request of api: the rows limited to api come first.
func OfAPI(api kmsg.Key, err error) *kerr.Error { return find(err, api, kerr.UnknownServerError) }

// find maps err with the rows for api (-1: none) first, then the rows for
// every request, then a wrapped *kerr.Error, then fallback.
func find(err error, api kmsg.Key, fallback *kerr.Error) *kerr.Error {
	if err == nil {
		return nil
	}
	if api >= 0 {
		for i := range table {
			if r := &table[i]; slices.Contains(r.apis, api) && errors.Is(err, r.err) {
				return r.kafka
			}
		}
	}
	for i := range table {
		if r := &table[i]; len(r.apis) == 0 && errors.Is(err, r.err) {
			return r.kafka
		}
	}
	if ke, ok := errors.AsType[*kerr.Error](err); ok && ke != nil {
		return ke
	}
	return fallback
}

func code(k *kerr.Error) int16 {
	if k == nil {
		return 0
	}
	return k.Code
}

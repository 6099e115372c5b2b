package wire

// What the topic and config admin APIs (19, 20, 33, 37, 44) and Metadata's
// auto-creation share: the round trip to the controller, proposal
// deadlines, and the mapping of errors to Kafka codes. The controller
// (cluster/metadata's Controller) decides every request; these files only
// turn the Kafka request into a metadata.Request and the typed result
// into the Kafka response.

import (
	"context"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/weirmq/weir/cluster/config"
	"github.com/weirmq/weir/cluster/metadata"
)

// askController sends req to the controller through the broker and returns
// its result. When the wait fails (ctx ended, the node stopped) the result
// is req refused with the wait's error (REQUEST_TIMED_OUT for a deadline),
// and the error says why.
func askController[R metadata.Result](ctx context.Context, b Broker, req metadata.Request) (R, error) {
	res, err := b.Metadata(ctx, req)
	if err == nil {
		if r, ok := res.(R); ok {
			return r, nil
		}
		err = fmt.Errorf("controller answered a %T with a %T", req, res)
	}
	return req.Refused(metadata.ErrorOf(err)).(R), err
}

// proposeContext bounds a proposal's wait by a request's timeout_ms; 0 or
// less waits without a deadline (until the connection closes).
func proposeContext(ctx context.Context, timeoutMs int32) (context.Context, context.CancelFunc) {
	if timeoutMs <= 0 {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, time.Duration(timeoutMs)*time.Millisecond)
}

// apiErr is a Kafka error decided by an admin API, with the message sent
// to the client.
func apiErr(k *kerr.Error, format string, args ...any) error {
	return metadata.APIError{Code: k.Code, Message: fmt.Sprintf(format, args...)}
}

// adminError maps an admin API's error to its Kafka error, with the
// message metadata.ErrorOf gives it.
func adminError(err error) KafkaError {
	e := metadata.ErrorOf(err)
	ke := KafkaError{Code: e.Code}
	if k, ok := kerr.ErrorForCode(e.Code).(*kerr.Error); ok {
		ke = kafkaError(k)
	}
	ke.Message = e.Message
	return ke
}

// errorFields is an item's error code and message as a response carries
// them: 0 and null when it has none.
func errorFields(e metadata.APIError) (int16, *string) {
	if !e.Failed() {
		return 0, nil
	}
	msg := e.Message
	return e.Code, &msg
}

// resolvedValue is a resolved config's value as the wire carries it: null
// when it has none or is sensitive.
func resolvedValue(c config.Resolved) *string {
	if c.Null || c.Sensitive {
		return nil
	}
	v := c.Value
	return &v
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

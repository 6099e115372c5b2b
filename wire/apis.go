package wire

import (
	"fmt"
	"slices"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// VersionRange is an inclusive range of API versions.
type VersionRange struct {
	Min, Max int16
}

// Contains reports whether v lies in the range.
func (r VersionRange) Contains(v int16) bool { return r.Min <= v && v <= r.Max }

// API is one row of the table of Kafka APIs the server offers.
type API struct {
	// Key is the API key.
	Key int16
	// Advertised is the range ApiVersions announces. A request outside it
	// closes the connection (ApiVersions excepted), as Kafka does.
	Advertised VersionRange
	// Served is the range really decoded and answered by wire or the
	// Handler; it lies inside Advertised. Produce is the one API whose
	// ranges differ: librdkafka < 2.11.1 needs v0 advertised before it
	// compresses, but only v3+ is served (docs/clients.md rule 1).
	Served VersionRange
	// Unserved answers a decoded request whose version is advertised but not
	// served; the Handler never sees it. Nil closes the connection.
	Unserved func(req *Request) Response
}

// apis is the one table of served APIs, in key order. Adding a row (and the
// NN_name.go file that documents and serves it) is all it takes to
// advertise an API: ApiVersions reads this table, and the server routes by
// it. Ranges follow docs/clients.md rule 11; every advertised version must
// work (rule 4).
var apis = apiTable{
	// Produce (00_produce.go): v0-2 advertised for librdkafka, answered
	// UNSUPPORTED_VERSION.
	{Key: 0, Advertised: VersionRange{0, 11}, Served: VersionRange{3, 11}, Unserved: unservedProduce},
	// Fetch (01_fetch.go), ListOffsets (02_listoffsets.go).
	{Key: 1, Advertised: VersionRange{4, 12}, Served: VersionRange{4, 12}},
	{Key: 2, Advertised: VersionRange{1, 7}, Served: VersionRange{1, 7}},
	{Key: 3, Advertised: VersionRange{0, 12}, Served: VersionRange{0, 12}}, // Metadata, 03_metadata.go
	{Key: 8, Advertised: VersionRange{2, 9}, Served: VersionRange{2, 9}},   // OffsetCommit, 08_offsetcommit.go
	{Key: 9, Advertised: VersionRange{1, 8}, Served: VersionRange{1, 8}},   // OffsetFetch, 09_offsetfetch.go
	// FindCoordinator (10_findcoordinator.go): v0 for librdkafka (docs/clients.md rule 2).
	{Key: 10, Advertised: VersionRange{0, 4}, Served: VersionRange{0, 4}},
	{Key: 11, Advertised: VersionRange{0, 9}, Served: VersionRange{0, 9}}, // JoinGroup, 11_joingroup.go
	{Key: 12, Advertised: VersionRange{0, 4}, Served: VersionRange{0, 4}}, // Heartbeat, 12_heartbeat.go
	{Key: 13, Advertised: VersionRange{0, 5}, Served: VersionRange{0, 5}}, // LeaveGroup, 13_leavegroup.go
	{Key: 14, Advertised: VersionRange{0, 5}, Served: VersionRange{0, 5}}, // SyncGroup, 14_syncgroup.go
	{Key: 15, Advertised: VersionRange{0, 5}, Served: VersionRange{0, 5}}, // DescribeGroups, 15_describegroups.go
	{Key: 16, Advertised: VersionRange{0, 4}, Served: VersionRange{0, 4}}, // ListGroups, 16_listgroups.go
	{Key: 18, Advertised: VersionRange{0, 4}, Served: VersionRange{0, 4}}, // ApiVersions, served by wire itself
	{Key: 19, Advertised: VersionRange{0, 7}, Served: VersionRange{0, 7}}, // CreateTopics, 19_createtopics.go
	{Key: 20, Advertised: VersionRange{1, 6}, Served: VersionRange{1, 6}}, // DeleteTopics, 20_deletetopics.go
	{Key: 21, Advertised: VersionRange{0, 2}, Served: VersionRange{0, 2}}, // DeleteRecords, 21_deleterecords.go
	{Key: 22, Advertised: VersionRange{0, 4}, Served: VersionRange{0, 4}}, // InitProducerId, 22_initproducerid.go
	{Key: 23, Advertised: VersionRange{3, 4}, Served: VersionRange{3, 4}}, // OffsetForLeaderEpoch, 23_offsetforleaderepoch.go
	{Key: 32, Advertised: VersionRange{1, 4}, Served: VersionRange{1, 4}}, // DescribeConfigs, 32_describeconfigs.go
	{Key: 33, Advertised: VersionRange{0, 2}, Served: VersionRange{0, 2}}, // AlterConfigs, 33_alterconfigs.go
	{Key: 37, Advertised: VersionRange{0, 3}, Served: VersionRange{0, 3}}, // CreatePartitions, 37_createpartitions.go
	{Key: 42, Advertised: VersionRange{0, 2}, Served: VersionRange{0, 2}}, // DeleteGroups, 42_deletegroups.go
	{Key: 44, Advertised: VersionRange{0, 1}, Served: VersionRange{0, 1}}, // IncrementalAlterConfigs, 44_incrementalalterconfigs.go
	{Key: 47, Advertised: VersionRange{0, 0}, Served: VersionRange{0, 0}}, // OffsetDelete, 47_offsetdelete.go
	{Key: 55, Advertised: VersionRange{0, 2}, Served: VersionRange{0, 2}}, // DescribeQuorum, 55_describequorum.go
	{Key: 60, Advertised: VersionRange{0, 1}, Served: VersionRange{0, 1}}, // DescribeCluster, 60_describecluster.go
	{Key: 61, Advertised: VersionRange{0, 0}, Served: VersionRange{0, 0}}, // DescribeProducers, 61_describeproducers.go
}

// APIs returns a copy of the table of served APIs, in key order.
func APIs() []API { return slices.Clone(apis) }

// apiTable is a table of API rows.
type apiTable []API

// index builds a key-indexed lookup for the table after checking it.
func (t apiTable) index() (apiIndex, error) {
	if err := t.check(); err != nil {
		return nil, err
	}
	var top int16
	for _, a := range t {
		top = max(top, a.Key)
	}
	idx := make(apiIndex, int(top)+1)
	for i := range t {
		idx[t[i].Key] = &t[i]
	}
	return idx, nil
}

// check verifies the table's invariants: keys kmsg knows, each once;
// non-empty ranges inside kmsg's versions; Served inside Advertised.
func (t apiTable) check() error {
	seen := map[int16]bool{}
	for _, a := range t {
		req := kmsg.RequestForKey(a.Key)
		switch {
		case req == nil:
			return fmt.Errorf("wire: API table: key %d unknown to kmsg", a.Key)
		case seen[a.Key]:
			return fmt.Errorf("wire: API table: key %d listed twice", a.Key)
		case a.Advertised.Min < 0 || a.Advertised.Min > a.Advertised.Max || a.Advertised.Max > req.MaxVersion():
			return fmt.Errorf("wire: API table: key %d advertised range %d-%d not within kmsg's 0-%d", a.Key, a.Advertised.Min, a.Advertised.Max, req.MaxVersion())
		case a.Served.Min > a.Served.Max || a.Served.Min < a.Advertised.Min || a.Served.Max > a.Advertised.Max:
			return fmt.Errorf("wire: API table: key %d served range %d-%d not within advertised %d-%d", a.Key, a.Served.Min, a.Served.Max, a.Advertised.Min, a.Advertised.Max)
		}
		seen[a.Key] = true
	}
	return nil
}

// apiIndex maps an API key to its row; a nil entry is a key not served.
type apiIndex []*API

// lookup returns the row of key, or nil.
func (x apiIndex) lookup(key int16) *API {
	if key < 0 || int(key) >= len(x) {
		return nil
	}
	return x[key]
}

// apiKeyName names an API key for log lines.
func apiKeyName(key int16) string {
	if kmsg.RequestForKey(key) == nil {
		return fmt.Sprintf("Unknown(%d)", key)
	}
	return kmsg.NameForKey(key)
}

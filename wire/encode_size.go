package wire

import "github.com/twmb/franz-go/pkg/kmsg"

// Large responses (a Fetch's records, the member list a JoinGroup leader
// or a DescribeGroups gets) are encoded into a buffer allocated at once at
// a bound of their size: grown by append instead, a response of n bytes
// allocates about 5n in steps and holds up to 2.25n while the last step
// copies.

// encodeOverhead bounds what one topic, partition or member adds to a
// response beyond its variable-length fields (ids, error codes, offsets,
// length prefixes, tagged-field markers, a topic id).
const encodeOverhead = 96

// responseSizeBound returns an upper bound of body's encoding for the
// responses that can be large, 0 for the others (whose buffers grow).
func responseSizeBound(body kmsg.Response) int {
	n := 0
	switch r := body.(type) {
	case *kmsg.FetchResponse:
		for i := range r.Topics {
			t := &r.Topics[i]
			n += encodeOverhead + len(t.Topic)
			for j := range t.Partitions {
				p := &t.Partitions[j]
				n += encodeOverhead + len(p.RecordBatches) + len(p.AbortedTransactions)*16
			}
		}
	case *kmsg.JoinGroupResponse:
		n = len(r.LeaderID) + len(r.MemberID)
		if r.Protocol != nil {
			n += len(*r.Protocol)
		}
		if r.ProtocolType != nil {
			n += len(*r.ProtocolType)
		}
		for i := range r.Members {
			m := &r.Members[i]
			n += encodeOverhead + len(m.MemberID) + len(m.ProtocolMetadata)
			if m.InstanceID != nil {
				n += len(*m.InstanceID)
			}
		}
	case *kmsg.DescribeGroupsResponse:
		for i := range r.Groups {
			g := &r.Groups[i]
			n += encodeOverhead + len(g.Group) + len(g.State) + len(g.ProtocolType) + len(g.Protocol)
			for j := range g.Members {
				m := &g.Members[j]
				n += encodeOverhead + len(m.MemberID) + len(m.ClientID) + len(m.ClientHost) +
					len(m.ProtocolMetadata) + len(m.MemberAssignment)
				if m.InstanceID != nil {
					n += len(*m.InstanceID)
				}
			}
		}
	default:
		return 0
	}
	if n < keepWriteBuffer {
		return 0 // the connection's kept buffer serves it
	}
	return n + encodeOverhead
}

// encodeBuffer returns buf emptied, or a new buffer of capacity
// responseSizeBound(body) when that is larger.
func encodeBuffer(buf []byte, body kmsg.Response) []byte {
	if n := responseSizeBound(body); n > cap(buf) {
		return make([]byte, 0, n)
	}
	return buf[:0]
}

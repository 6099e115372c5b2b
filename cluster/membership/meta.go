package membership

import (
	"crypto/rand"
	"fmt"

	"github.com/hashicorp/memberlist"
	"github.com/vmihailenco/msgpack/v5"
)

// Meta is what a node gossips about itself: memberlist's node meta,
// msgpack-encoded (Encode), at most memberlist.MetaMaxSize (512) bytes.
// Its facts are hints; the metadata quorum's records are the truth.
type Meta struct {
	// NodeID is the broker's node.id.
	NodeID int32
	// BrokerEpoch is the epoch the quorum gave this process's broker
	// registration; 0 until registered.
	BrokerEpoch int64
	// Incarnation is random per process start (NewIncarnation), so a
	// restarted process is told apart from its predecessor.
	Incarnation [16]byte
	// KafkaAddr is the advertised Kafka listener, host:port.
	KafkaAddr string
	// RemoteAddr is the protoactor remote address, host:port.
	RemoteAddr string
	// Rack is broker.rack ("" for none).
	Rack string
	// Voter says whether the node is a metadata quorum voter.
	Voter bool
}

// wireMeta is Meta as encoded: a msgpack map with short keys, so that
// fields can be added later and an older node ignores them. Leaving is
// set only while the node leaves gracefully (Members.Leave): memberlist
// v0.7.0 does not tell its event delegate whether a node left or failed,
// so the leaving node says so in its meta before it announces its
// departure.
type wireMeta struct {
	NodeID      int32    `msgpack:"n"`
	BrokerEpoch int64    `msgpack:"e,omitempty"`
	Incarnation [16]byte `msgpack:"i"`
	KafkaAddr   string   `msgpack:"k,omitempty"`
	RemoteAddr  string   `msgpack:"r,omitempty"`
	Rack        string   `msgpack:"rk,omitempty"`
	Voter       bool     `msgpack:"v,omitempty"`
	Leaving     bool     `msgpack:"l,omitempty"`
}

// Encode returns the meta as gossiped. It refuses a meta that would not
// fit memberlist.MetaMaxSize, room for the leaving mark included, with
// ErrMetaTooLarge.
func (m Meta) Encode() ([]byte, error) {
	if _, err := encodeMeta(m, true); err != nil {
		return nil, err
	}
	return encodeMeta(m, false)
}

// DecodeMeta decodes what Encode returned; errors wrap ErrBadMeta.
func DecodeMeta(b []byte) (Meta, error) {
	m, _, err := decodeMeta(b)
	return m, err
}

// NewIncarnation returns a random incarnation for Meta.Incarnation.
func NewIncarnation() [16]byte {
	var inc [16]byte
	_, _ = rand.Read(inc[:]) // crypto/rand.Read never fails (Go 1.24+)
	return inc
}

// nodeName is the memberlist node name of the process with this meta:
// unique per process start, so a restarted node never collides with its
// dead predecessor's entry.
func nodeName(m Meta) string {
	return fmt.Sprintf("%d-%x", m.NodeID, m.Incarnation[:6])
}

func encodeMeta(m Meta, leaving bool) ([]byte, error) {
	b, err := msgpack.Marshal(wireMeta{
		NodeID:      m.NodeID,
		BrokerEpoch: m.BrokerEpoch,
		Incarnation: m.Incarnation,
		KafkaAddr:   m.KafkaAddr,
		RemoteAddr:  m.RemoteAddr,
		Rack:        m.Rack,
		Voter:       m.Voter,
		Leaving:     leaving,
	})
	if err != nil {
		return nil, fmt.Errorf("membership: encode meta of node %d: %w", m.NodeID, err)
	}
	if len(b) > memberlist.MetaMaxSize {
		return nil, fmt.Errorf("%w: node %d's meta encodes to %d bytes, more than %d",
			ErrMetaTooLarge, m.NodeID, len(b), memberlist.MetaMaxSize)
	}
	return b, nil
}

func decodeMeta(b []byte) (Meta, bool, error) {
	var w wireMeta
	if err := msgpack.Unmarshal(b, &w); err != nil {
		return Meta{}, false, fmt.Errorf("%w (%d bytes): %w", ErrBadMeta, len(b), err)
	}
	return Meta{
		NodeID:      w.NodeID,
		BrokerEpoch: w.BrokerEpoch,
		Incarnation: w.Incarnation,
		KafkaAddr:   w.KafkaAddr,
		RemoteAddr:  w.RemoteAddr,
		Rack:        w.Rack,
		Voter:       w.Voter,
	}, w.Leaving, nil
}

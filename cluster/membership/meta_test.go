package membership

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/hashicorp/memberlist"
)

func testMeta(id int32) Meta {
	return Meta{
		NodeID:      id,
		BrokerEpoch: 0,
		Incarnation: NewIncarnation(),
		KafkaAddr:   fmt.Sprintf("127.0.0.1:%d", 9090+id%100),
		RemoteAddr:  fmt.Sprintf("127.0.0.1:%d", 8090+id%100),
		Rack:        fmt.Sprintf("rack-%d", id%2),
		Voter:       id%2 == 1,
	}
}

func TestMetaRoundTrip(t *testing.T) {
	for _, m := range []Meta{
		{NodeID: 1, Incarnation: [16]byte{1}},
		{NodeID: -1, BrokerEpoch: 1 << 40, Incarnation: NewIncarnation(), KafkaAddr: "[::1]:9092", RemoteAddr: "h:1", Rack: "r", Voter: true},
		testMeta(2147483647),
	} {
		b, err := m.Encode()
		if err != nil {
			t.Fatalf("Encode(%+v): %v", m, err)
		}
		got, err := DecodeMeta(b)
		if err != nil {
			t.Fatalf("DecodeMeta: %v", err)
		}
		if got != m {
			t.Fatalf("round trip: got %+v, want %+v", got, m)
		}
		lb, err := encodeMeta(m, true)
		if err != nil {
			t.Fatal(err)
		}
		got, leaving, err := decodeMeta(lb)
		if err != nil || !leaving || got != m {
			t.Fatalf("leaving round trip: %+v %v %v", got, leaving, err)
		}
		if _, leaving, _ := decodeMeta(b); leaving {
			t.Fatal("Encode set the leaving mark")
		}
	}
}

// TestMetaSizeLimit finds the largest rack that fits and checks that one
// byte more is refused: Encode keeps room for the leaving mark.
func TestMetaSizeLimit(t *testing.T) {
	m := testMeta(7)
	n := 0
	for r := 1; r < memberlist.MetaMaxSize; r++ {
		m.Rack = strings.Repeat("r", r)
		if b, err := encodeMeta(m, true); err == nil && len(b) <= memberlist.MetaMaxSize {
			n = r
		}
	}
	m.Rack = strings.Repeat("r", n)
	b, err := m.Encode()
	if err != nil {
		t.Fatalf("rack of %d bytes: %v", n, err)
	}
	lb, _ := encodeMeta(m, true)
	if len(lb) != memberlist.MetaMaxSize && len(lb) != memberlist.MetaMaxSize-1 {
		// msgpack's str8/str16 boundary may leave one byte unused
		t.Fatalf("largest meta with the leaving mark is %d bytes, want about %d", len(lb), memberlist.MetaMaxSize)
	}
	if len(b) >= len(lb) {
		t.Fatalf("meta %d bytes, with the leaving mark %d", len(b), len(lb))
	}
	m.Rack += "r"
	if _, err := m.Encode(); !errors.Is(err, ErrMetaTooLarge) {
		t.Fatalf("rack of %d bytes: %v, want ErrMetaTooLarge", n+1, err)
	}
}

func TestDecodeMetaRejectsGarbage(t *testing.T) {
	for _, b := range [][]byte{nil, {0xc1}, []byte("not msgpack"), {0x81, 0xa1, 'n', 0xa3, 'a', 'b', 'c'}} {
		if _, err := DecodeMeta(b); !errors.Is(err, ErrBadMeta) {
			t.Errorf("DecodeMeta(%q) = %v, want ErrBadMeta", b, err)
		}
	}
}

func TestNodeName(t *testing.T) {
	m := Meta{NodeID: 12, Incarnation: [16]byte{0x01, 0x02, 0xab, 0xcd, 0xef, 0x10, 0xff}}
	if got, want := nodeName(m), "12-0102abcdef10"; got != want {
		t.Fatalf("nodeName = %q, want %q", got, want)
	}
	a, b := NewIncarnation(), NewIncarnation()
	if a == b || bytes.Equal(a[:], make([]byte, 16)) {
		t.Fatalf("NewIncarnation: %x, %x", a, b)
	}
}

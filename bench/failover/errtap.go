package failover

import (
	"context"
	"encoding/binary"
	"fmt"
	"net"
	"reflect"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// The client errors the report names (the seed's client logs showed
// them); every other code is counted under its own name too.
const (
	ErrNotLeader           = "NOT_LEADER_OR_FOLLOWER"
	ErrFetchSessionMissing = "FETCH_SESSION_ID_NOT_FOUND"
	ErrCoordinatorLoading  = "COORDINATOR_LOAD_IN_PROGRESS"
	ErrNotCoordinator      = "NOT_COORDINATOR"
)

// NamedErrors lists the report's columns of client errors, in order.
var NamedErrors = []string{ErrNotLeader, ErrFetchSessionMissing, ErrCoordinatorLoading, ErrNotCoordinator}

// errorName is Kafka's name of code (kerr spells code 6 by its old name).
func errorName(code int16) string {
	if code == kerr.NotLeaderForPartition.Code {
		return ErrNotLeader
	}
	if e, ok := kerr.ErrorForCode(code).(*kerr.Error); ok {
		return e.Message
	}
	return fmt.Sprintf("UNKNOWN_CODE_%d", code)
}

// errorTally counts the error codes in the responses that the clients
// read, by name. franz-go handles retriable codes inside the client and
// none of its hooks carries them, so the tally decodes the responses
// itself: a Dialer wraps each connection, notes the key and version of
// each request written and decodes the matching response read.
type errorTally struct {
	// produceUnanswered is set for an acks=0 producer's tally: its
	// Produce requests get no response.
	produceUnanswered bool
	// iso, when set, counts the partition fault's isolated acks.
	iso atomic.Pointer[isolatedAcks]
	// produces, when set, notes the Produce answers without error (the
	// producer's tally; see fencing.go).
	produces *produceLog

	mu     sync.Mutex
	counts map[string]int64
}

func newErrorTally() *errorTally { return &errorTally{counts: map[string]int64{}} }

// snapshot copies the counts.
func (t *errorTally) snapshot() map[string]int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make(map[string]int64, len(t.counts))
	for k, v := range t.counts {
		out[k] = v
	}
	return out
}

// add counts one error.
func (t *errorTally) add(name string) {
	t.mu.Lock()
	t.counts[name]++
	t.mu.Unlock()
}

// dial is a kgo.Dialer whose connections count the errors.
func (t *errorTally) dial(ctx context.Context, network, host string) (net.Conn, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, network, host)
	if err != nil {
		return nil, err
	}
	return &tapConn{Conn: c, tally: t, addr: host, inflight: map[int32]request{}, produces: map[int32]produceSent{}}, nil
}

// request is what a response is decoded with.
type request struct{ key, version int16 }

// tapConn reads the request headers written and the responses read.
type tapConn struct {
	net.Conn
	tally *errorTally
	addr  string // the address dialed

	mu       sync.Mutex
	inflight map[int32]request // by correlation id
	whead    []byte            // the partial header of the request being written
	wskip    int               // bytes of the current request still to pass
	rbuf     []byte            // response bytes not yet decoded
	// For isolatedAcks: when the current request's first byte was
	// written, its whole frame while it is kept, and the records of the
	// Produce requests kept, by correlation id.
	wheadAt  time.Time
	wframe   []byte
	produces map[int32]produceSent
}

// Write notes each request's correlation id, key and version.
func (c *tapConn) Write(p []byte) (int, error) {
	at := time.Now()
	n, err := c.Conn.Write(p)
	c.mu.Lock()
	c.noteWritten(p[:n], at)
	c.mu.Unlock()
	return n, err
}

// requestHeader is size, key, version and correlation id.
const requestHeader = 4 + 2 + 2 + 4

func (c *tapConn) noteWritten(p []byte, at time.Time) {
	for len(p) > 0 {
		if c.wskip > 0 {
			k := min(c.wskip, len(p))
			c.wskip -= k
			if c.wframe != nil {
				c.keepFrame(p[:k])
			}
			p = p[k:]
			continue
		}
		if len(c.whead) == 0 {
			c.wheadAt = at
		}
		k := min(requestHeader-len(c.whead), len(p))
		c.whead = append(c.whead, p[:k]...)
		p = p[k:]
		if len(c.whead) < requestHeader {
			return
		}
		h := c.whead
		size := int(int32(binary.BigEndian.Uint32(h)))
		key, ver := int16(binary.BigEndian.Uint16(h[4:])), int16(binary.BigEndian.Uint16(h[6:]))
		corr := int32(binary.BigEndian.Uint32(h[8:]))
		if key != kmsg.Produce.Int16() || !c.tally.produceUnanswered {
			c.inflight[corr] = request{key, ver}
		}
		if iso := c.tally.iso.Load(); key == kmsg.Produce.Int16() && !c.tally.produceUnanswered && iso != nil && iso.watches(c.addr, c.wheadAt) {
			c.wframe = append([]byte(nil), h...)
		}
		c.whead = c.whead[:0]
		c.wskip = size + 4 - requestHeader
		if c.wframe != nil && c.wskip <= 0 {
			c.keepFrame(nil)
		}
	}
}

// Read decodes each whole response read.
func (c *tapConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 {
		c.mu.Lock()
		c.rbuf = append(c.rbuf, p[:n]...)
		c.decodeResponses()
		c.mu.Unlock()
	}
	return n, err
}

func (c *tapConn) decodeResponses() {
	for len(c.rbuf) >= 8 {
		size := int(int32(binary.BigEndian.Uint32(c.rbuf)))
		if len(c.rbuf) < 4+size {
			return
		}
		frame := c.rbuf[4 : 4+size]
		corr := int32(binary.BigEndian.Uint32(frame))
		if req, ok := c.inflight[corr]; ok {
			delete(c.inflight, corr)
			c.countErrors(corr, req, frame[4:])
		}
		c.rbuf = c.rbuf[4+size:]
	}
	if len(c.rbuf) == 0 {
		c.rbuf = nil // let a large response's buffer go
	}
}

// countErrors decodes one response body and counts its error codes.
func (c *tapConn) countErrors(corr int32, req request, body []byte) {
	resp := kmsg.ResponseForKey(req.key)
	if resp == nil {
		return
	}
	resp.SetVersion(req.version)
	if resp.IsFlexible() && req.key != kmsg.ApiVersions.Int16() {
		b := kbin{src: body}
		b.skipTags()
		if b.bad {
			return
		}
		body = b.src
	}
	if err := resp.ReadFrom(body); err != nil {
		return
	}
	if sent, ok := c.produces[corr]; ok {
		delete(c.produces, corr)
		if iso := c.tally.iso.Load(); iso != nil {
			iso.add(ackedRecords(sent, resp.(*kmsg.ProduceResponse)))
		}
	}
	if pr, ok := resp.(*kmsg.ProduceResponse); ok && c.tally.produces != nil {
		c.tally.produces.note(c.addr, pr)
	}
	walkErrorCodes(reflect.ValueOf(resp), func(code int16) { c.tally.add(errorName(code)) })
}

// walkErrorCodes calls f for every non-zero int16 field named ErrorCode
// in v, at any depth of structs, pointers and slices.
func walkErrorCodes(v reflect.Value, f func(int16)) {
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			walkErrorCodes(v.Elem(), f)
		}
	case reflect.Struct:
		t := v.Type()
		for i := range v.NumField() {
			fv := v.Field(i)
			if t.Field(i).Name == "ErrorCode" && fv.Kind() == reflect.Int16 {
				if code := int16(fv.Int()); code != 0 {
					f(code)
				}
				continue
			}
			walkErrorCodes(fv, f)
		}
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return // bytes: record batches, not messages
		}
		for i := range v.Len() {
			walkErrorCodes(v.Index(i), f)
		}
	}
}

// kbin skips a response header's tagged fields.
type kbin struct {
	src []byte
	bad bool
}

func (b *kbin) uvarint() uint64 {
	v, n := binary.Uvarint(b.src)
	if n <= 0 {
		b.bad = true
		return 0
	}
	b.src = b.src[n:]
	return v
}

func (b *kbin) skipTags() {
	for range b.uvarint() {
		b.uvarint() // tag
		size := b.uvarint()
		if b.bad || uint64(len(b.src)) < size {
			b.bad = true
			return
		}
		b.src = b.src[size:]
	}
}

// keepFrame appends p to the Produce request frame kept for
// isolatedAcks and, once it is whole, notes its records.
func (c *tapConn) keepFrame(p []byte) {
	c.wframe = append(c.wframe, p...)
	if c.wskip > 0 {
		return
	}
	frame := c.wframe
	c.wframe = nil
	corr := int32(binary.BigEndian.Uint32(frame[8:]))
	if sent, err := parseProduceRequest(frame); err == nil {
		c.produces[corr] = sent
	}
}

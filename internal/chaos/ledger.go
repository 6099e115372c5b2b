package chaos

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
)

// Ack is one record a producer had acknowledged: where the broker said it
// went, and its value.
type Ack struct {
	Partition int32
	Offset    int64
	Value     string
}

// Value returns the record value of producer's seq-th send:
// "<producer>-<seq>", seq zero-padded so values sort in send order.
func Value(producer string, seq int64) string {
	return fmt.Sprintf("%s-%09d", producer, seq)
}

// ParseValue splits a value made by Value; ok is false for anything else.
func ParseValue(v string) (producer string, seq int64, ok bool) {
	i := strings.LastIndexByte(v, '-')
	if i <= 0 {
		return "", 0, false
	}
	seq, err := strconv.ParseInt(v[i+1:], 10, 64)
	if err != nil {
		return "", 0, false
	}
	return v[:i], seq, true
}

// Ledger is what the producers of a test had acknowledged and what failed.
// It is safe for concurrent use.
type Ledger struct {
	mu     sync.Mutex
	acks   []Ack
	failed map[string]error // by value
}

// NewLedger returns an empty ledger.
func NewLedger() *Ledger { return &Ledger{failed: map[string]error{}} }

// Ack records an acknowledged record.
func (l *Ledger) Ack(a Ack) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.acks = append(l.acks, a)
}

// Fail records a send that failed: it may or may not be in the log.
func (l *Ledger) Fail(value string, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.failed[value] = err
}

// Acks returns a copy of the acknowledged records, in acknowledgement
// order.
func (l *Ledger) Acks() []Ack {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]Ack(nil), l.acks...)
}

// Failed returns how many sends failed.
func (l *Ledger) Failed() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.failed)
}

// FailedErrors returns up to n of the failures, as "value: error".
func (l *Ledger) FailedErrors(n int) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for v, err := range l.failed {
		if len(out) == n {
			break
		}
		out = append(out, v+": "+err.Error())
	}
	return out
}

// Count returns how many records were acknowledged, by producer.
func (l *Ledger) Count() map[string]int {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := map[string]int{}
	for _, a := range l.acks {
		p, _, _ := ParseValue(a.Value)
		out[p]++
	}
	return out
}

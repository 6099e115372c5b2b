package membership

import (
	"context"
	"log/slog"
	"sync"
	"testing"
)

// captureHandler keeps the records it handles.
type captureHandler struct {
	mu   sync.Mutex
	recs []slog.Record
	min  slog.Level
}

func (h *captureHandler) Enabled(_ context.Context, l slog.Level) bool { return l >= h.min }
func (h *captureHandler) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.recs = append(h.recs, r)
	return nil
}
func (h *captureHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *captureHandler) WithGroup(string) slog.Handler      { return h }

func TestMemberlistLogger(t *testing.T) {
	h := &captureHandler{min: slog.LevelDebug}
	l := newMemberlistLogger(slog.New(h))
	l.Printf("[WARN] memberlist: Refuting a suspect message (from: %s)", "x")
	l.Printf("plain line")
	if len(h.recs) != 2 {
		t.Fatalf("%d records", len(h.recs))
	}
	for i, want := range []struct{ msg, level string }{
		{"memberlist: Refuting a suspect message (from: x)", "WARN"},
		{"memberlist: plain line", ""},
	} {
		r := h.recs[i]
		var level string
		r.Attrs(func(a slog.Attr) bool {
			if a.Key == "ml_level" {
				level = a.Value.String()
			}
			return true
		})
		if r.Level != slog.LevelDebug || r.Message != want.msg || level != want.level {
			t.Errorf("record %d: %v %q ml_level=%q, want debug %q %q", i, r.Level, r.Message, level, want.msg, want.level)
		}
	}
	quiet := &captureHandler{min: slog.LevelInfo}
	newMemberlistLogger(slog.New(quiet)).Printf("[DEBUG] memberlist: x")
	if len(quiet.recs) != 0 {
		t.Fatal("debug line logged above debug")
	}
}

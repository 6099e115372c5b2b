package partition

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/weirmq/weir/log"
)

// TestStorageHealthChanges checks the decision alone: only the first
// failure of an operation and the first success after it change state;
// operations are independent.
func TestStorageHealthChanges(t *testing.T) {
	var h storageHealth
	boom := errors.New("boom")
	steps := []struct {
		op                 string
		err                error
		failing, recovered bool
	}{
		{storageAppend, nil, false, false},
		{storageAppend, boom, true, false},
		{storageAppend, boom, false, false},
		{storageRead, nil, false, false},
		{storageRead, boom, true, false},
		{storageAppend, nil, false, true},
		{storageAppend, nil, false, false},
		{storageRead, boom, false, false},
		{storageRead, nil, false, true},
		{storageRead, nil, false, false},
	}
	for i, s := range steps {
		f, r := h.note(s.op, s.err)
		if f != s.failing || r != s.recovered {
			t.Errorf("step %d (%s, %v): failing %v recovered %v, want %v %v", i, s.op, s.err, f, r, s.failing, s.recovered)
		}
	}
}

// lockedBuffer is a bytes.Buffer for a slog handler written from several
// goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) count(sub string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Count(l.b.String(), sub)
}

// TestStorageErrorLoggedOncePerStateChange fills the disk under a
// partition actor: every append while it is full gets
// KAFKA_STORAGE_ERROR, but the log gets one error line when appends start
// failing and one info line when space is back, not one per request; the
// same for reads of a disk that fails with EIO.
func TestStorageErrorLoggedOncePerStateChange(t *testing.T) {
	fsys := log.NewMemFS()
	var out lockedBuffer
	logger := slog.New(slog.NewTextHandler(&out, nil))
	e := startActorLogged(t, fsys, false, logger)
	defer e.stop()
	e.append(plain(t, 1), 1, 0, 0)

	fsys.SetFaults(func(op, path string) error {
		if op == "write" && strings.HasSuffix(path, ".log") {
			return syscall.ENOSPC
		}
		return nil
	})
	for range 5 {
		e.append(plain(t, 1), 1, kerr.KafkaStorageError.Code, -1)
	}
	fsys.SetFaults(nil)
	e.append(plain(t, 1), 1, 0, 1)
	e.append(plain(t, 1), 1, 0, 2)

	// Reads on the requester's goroutine: the same, for op=read.
	fsys.SetFaults(func(op, path string) error {
		if op == "read" && strings.HasSuffix(path, ".log") {
			return syscall.EIO
		}
		return nil
	})
	for range 3 {
		if res := e.c.ReadNow(&ReadRecords{Offset: 0, MaxBytes: 1 << 20}); res.ErrorCode != kerr.KafkaStorageError.Code {
			t.Fatalf("read on a failing disk: code %d", res.ErrorCode)
		}
	}
	fsys.SetFaults(nil)
	if res := e.c.ReadNow(&ReadRecords{Offset: 0, MaxBytes: 1 << 20}); res.ErrorCode != 0 || len(res.Records) == 0 {
		t.Fatalf("read after the disk healed: code %d, %d bytes", res.ErrorCode, len(res.Records))
	}
	if n := out.count("op=read"); n != 2 {
		t.Errorf("%d read state lines, want 2 (failing, recovered):\n%s", n, out.b.String())
	}
	if n := out.count("partition storage failing"); n != 2 {
		t.Errorf("%d failing lines, want 2 (append, read):\n%s", n, out.b.String())
	}
	if n := out.count("partition storage recovered"); n != 2 {
		t.Errorf("%d recovered lines, want 2:\n%s", n, out.b.String())
	}
	if !strings.Contains(out.b.String(), "no space left on device") || !strings.Contains(out.b.String(), "partition=t-0") {
		t.Errorf("the failing line names neither the error nor the partition:\n%s", out.b.String())
	}
}

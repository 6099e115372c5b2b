package log

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

// TestManagerLocksDir checks that a second Manager on a directory another
// one holds fails at once, naming the directory, on the OS and on MemFS,
// and that Close and Abandon release the lock.
func TestManagerLocksDir(t *testing.T) {
	for _, fsys := range []struct {
		name string
		fs   FS
		dir  string
	}{
		{"os", OSFS{}, filepath.Join(t.TempDir(), "data")},
		{"mem", NewMemFS(), "/data"},
	} {
		t.Run(fsys.name, func(t *testing.T) {
			clock := &testClock{ms: 1}
			first := openTestManager(t, fsys.fs, fsys.dir, clock)
			_, err := OpenManager(ManagerConfig{Dir: fsys.dir, FS: fsys.fs, NoBackground: true})
			if !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), fsys.dir) {
				t.Fatalf("second open: %v, want ErrLocked naming %s", err, fsys.dir)
			}
			// The refused opener changed nothing: the first closes cleanly.
			if err := first.Close(); err != nil {
				t.Fatal(err)
			}
			second := openTestManager(t, fsys.fs, fsys.dir, clock)
			if !second.CleanShutdown() {
				t.Error("the refused opener lost the first one's clean shutdown")
			}
			second.Abandon()
			third := openTestManager(t, fsys.fs, fsys.dir, clock)
			if err := third.Close(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestMemFSCrashReleasesLock checks that a simulated process crash or
// power cut releases a MemFS lock, as the kernel releases a dead
// process's flock, and that the dead holder's Close does not release the
// new holder's lock.
func TestMemFSCrashReleasesLock(t *testing.T) {
	m := NewMemFS()
	old, err := m.Lock("/d.lock")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Lock("/d.lock"); !errors.Is(err, ErrLocked) {
		t.Fatalf("second lock: %v, want ErrLocked", err)
	}
	m.Crash()
	cur, err := m.Lock("/d.lock")
	if err != nil {
		t.Fatalf("lock after crash: %v", err)
	}
	_ = old.Close()
	if _, err := m.Lock("/d.lock"); !errors.Is(err, ErrLocked) {
		t.Fatalf("the dead holder's Close released the new lock: %v", err)
	}
	m.PowerCutDropAll()
	if l, err := m.Lock("/d.lock"); err != nil {
		t.Fatalf("lock after power cut: %v", err)
	} else {
		_ = l.Close()
	}
	_ = cur.Close()
}

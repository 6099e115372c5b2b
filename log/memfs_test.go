package log

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
)

const memRW = os.O_RDWR | os.O_CREATE

// memOpen opens name or fails the test.
func memOpen(t *testing.T, fsys FS, name string, flag int) File {
	t.Helper()
	f, err := fsys.OpenFile(name, flag, 0o644)
	if err != nil {
		t.Fatalf("open %s: %v", name, err)
	}
	return f
}

// memWrite writes data at off or fails the test.
func memWrite(t *testing.T, f File, data string, off int64) {
	t.Helper()
	if n, err := f.WriteAt([]byte(data), off); err != nil || n != len(data) {
		t.Fatalf("write %s at %d: n=%d err=%v", f.Name(), off, n, err)
	}
}

// memSync syncs f or fails the test.
func memSync(t *testing.T, f File) {
	t.Helper()
	if err := f.Sync(); err != nil {
		t.Fatalf("sync %s: %v", f.Name(), err)
	}
}

// memSyncDir syncs a directory or fails the test.
func memSyncDir(t *testing.T, fsys FS, dir string) {
	t.Helper()
	if err := fsys.SyncDir(dir); err != nil {
		t.Fatalf("syncdir %s: %v", dir, err)
	}
}

// memContent returns the content of name, or "<missing>" if it does not exist.
func memContent(t *testing.T, fsys FS, name string) string {
	t.Helper()
	b, err := ReadFile(fsys, name)
	if errors.Is(err, fs.ErrNotExist) {
		return "<missing>"
	}
	if err != nil {
		t.Fatalf("read %s: %v", name, err)
	}
	return string(b)
}

// memDump lists every file and directory under dir with its content.
func memDump(t *testing.T, fsys FS, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	var walk func(string)
	walk = func(d string) {
		names, err := fsys.ReadDir(d)
		if err != nil {
			t.Fatalf("readdir %s: %v", d, err)
		}
		for _, n := range names {
			p := filepath.Join(d, n)
			if _, err := fsys.ReadDir(p); err == nil {
				out[p+"/"] = ""
				walk(p)
				continue
			}
			out[p] = memContent(t, fsys, p)
		}
	}
	walk(dir)
	return out
}

func TestMemFSOpenErrors(t *testing.T) {
	m := NewMemFS()
	if err := m.MkdirAll("/d", 0o755); err != nil {
		t.Fatal(err)
	}
	memOpen(t, m, "/d/f", memRW).Close()
	tests := []struct {
		name string
		path string
		flag int
		want error
	}{
		{"missing file", "/d/nope", os.O_RDONLY, fs.ErrNotExist},
		{"create in missing dir", "/nodir/f", memRW, fs.ErrNotExist},
		{"excl on existing", "/d/f", memRW | os.O_EXCL, fs.ErrExist},
		{"directory", "/d", os.O_RDONLY, nil},
		{"parent is a file", "/d/f/g", memRW, nil},
		{"append unsupported", "/d/f", os.O_RDWR | os.O_APPEND, fs.ErrInvalid},
		{"trunc read-only", "/d/f", os.O_RDONLY | os.O_TRUNC, fs.ErrInvalid},
		{"dot dot", "../x", memRW, fs.ErrInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := m.OpenFile(tt.path, tt.flag, 0o644)
			if err == nil {
				f.Close()
				t.Fatalf("open %s succeeded", tt.path)
			}
			if tt.want != nil && !errors.Is(err, tt.want) {
				t.Fatalf("open %s: %v, want %v", tt.path, err, tt.want)
			}
			var pe *fs.PathError
			if !errors.As(err, &pe) || pe.Path != tt.path {
				t.Fatalf("open %s: %v does not carry the path", tt.path, err)
			}
		})
	}
	if m.OpenFiles() != 0 {
		t.Fatalf("OpenFiles = %d after failed opens", m.OpenFiles())
	}
}

func TestMemFSReadWriteTruncate(t *testing.T) {
	m := NewMemFS()
	f := memOpen(t, m, "f", memRW)
	memWrite(t, f, "abc", 2)
	if got := memContent(t, m, "f"); got != "\x00\x00abc" {
		t.Fatalf("write past end: %q", got)
	}
	buf := make([]byte, 4)
	if n, err := f.ReadAt(buf, 3); n != 2 || err != io.EOF || string(buf[:n]) != "bc" {
		t.Fatalf("short read: n=%d err=%v %q", n, err, buf[:n])
	}
	if n, err := f.ReadAt(buf, 5); n != 0 || err != io.EOF {
		t.Fatalf("read at end: n=%d err=%v", n, err)
	}
	if n, err := f.ReadAt(buf[:3], 2); n != 3 || err != nil {
		t.Fatalf("read to exact end: n=%d err=%v", n, err)
	}
	if _, err := f.ReadAt(buf, -1); err == nil {
		t.Fatal("negative offset read succeeded")
	}
	if err := f.Truncate(8); err != nil {
		t.Fatal(err)
	}
	if got := memContent(t, m, "f"); got != "\x00\x00abc\x00\x00\x00" {
		t.Fatalf("truncate up: %q", got)
	}
	if err := f.Truncate(3); err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(6); err != nil { // the bytes cut off must not come back
		t.Fatal(err)
	}
	if got := memContent(t, m, "f"); got != "\x00\x00a\x00\x00\x00" {
		t.Fatalf("truncate down then up: %q", got)
	}
	if size, err := f.Size(); size != 6 || err != nil {
		t.Fatalf("Size = %d, %v", size, err)
	}
	if size, err := m.Stat("./f"); size != 6 || err != nil {
		t.Fatalf("Stat = %d, %v", size, err)
	}
	if _, err := m.Stat("g"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Stat missing: %v", err)
	}
	g := memOpen(t, m, "f", os.O_RDWR|os.O_TRUNC)
	if size, _ := f.Size(); size != 0 {
		t.Fatalf("O_TRUNC left size %d", size)
	}
	f.Close()
	g.Close()
}

func TestMemFSHandlesShareInode(t *testing.T) {
	m := NewMemFS()
	a := memOpen(t, m, "/x", memRW)
	b := memOpen(t, m, "//x/", os.O_RDONLY)
	memWrite(t, a, "hello", 0)
	buf := make([]byte, 5)
	if _, err := b.ReadAt(buf, 0); err != nil || string(buf) != "hello" {
		t.Fatalf("second handle reads %q, %v", buf, err)
	}

	// Renaming a new file over x leaves the old handles on the old inode.
	n := memOpen(t, m, "/y", memRW)
	memWrite(t, n, "new", 0)
	if err := m.Rename("/y", "/x"); err != nil {
		t.Fatal(err)
	}
	memWrite(t, a, "HELLO", 0)
	if _, err := b.ReadAt(buf, 0); err != nil || string(buf) != "HELLO" {
		t.Fatalf("old handle reads %q, %v", buf, err)
	}
	if got := memContent(t, m, "/x"); got != "new" {
		t.Fatalf("x after rename = %q", got)
	}
	if got := memContent(t, m, "/y"); got != "<missing>" {
		t.Fatalf("y after rename = %q", got)
	}

	// Removing the name keeps the inode alive for its handles.
	if err := m.Remove("/x"); err != nil {
		t.Fatal(err)
	}
	memWrite(t, n, "!", 3)
	memSync(t, n)
	if size, _ := n.Size(); size != 4 {
		t.Fatalf("removed file size %d", size)
	}
	for _, f := range []File{a, b, n} {
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

func TestMemFSClosedAndReadOnly(t *testing.T) {
	m := NewMemFS()
	f := memOpen(t, m, "f", memRW)
	r := memOpen(t, m, "f", os.O_RDONLY)
	w := memOpen(t, m, "f", os.O_WRONLY)
	if m.OpenFiles() != 3 {
		t.Fatalf("OpenFiles = %d, want 3", m.OpenFiles())
	}
	if _, err := r.WriteAt([]byte("x"), 0); err == nil {
		t.Fatal("read-only handle wrote")
	}
	if err := r.Truncate(0); err == nil {
		t.Fatal("read-only handle truncated")
	}
	if _, err := w.ReadAt(make([]byte, 1), 0); err == nil {
		t.Fatal("write-only handle read")
	}
	memWrite(t, w, "x", 0)
	for _, h := range []File{r, w} {
		if err := h.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if m.OpenFiles() != 0 {
		t.Fatalf("OpenFiles = %d after closes", m.OpenFiles())
	}
	ops := map[string]func() error{
		"read":     func() error { _, err := f.ReadAt(make([]byte, 1), 0); return err },
		"write":    func() error { _, err := f.WriteAt([]byte("x"), 0); return err },
		"truncate": func() error { return f.Truncate(0) },
		"size":     func() error { _, err := f.Size(); return err },
		"sync":     f.Sync,
		"close":    f.Close,
	}
	for name, op := range ops {
		if err := op(); !errors.Is(err, fs.ErrClosed) {
			t.Errorf("%s on closed file: %v, want fs.ErrClosed", name, err)
		}
	}
}

func TestMemFSDirectories(t *testing.T) {
	m := NewMemFS()
	if err := m.MkdirAll("/a/b/c", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := m.MkdirAll("/a/b", 0o755); err != nil {
		t.Fatalf("MkdirAll of an existing dir: %v", err)
	}
	for _, name := range []string{"/a/z", "/a/m", "/a/b/c/f"} {
		memOpen(t, m, name, memRW).Close()
	}
	if err := m.MkdirAll("/a/z/q", 0o755); err == nil {
		t.Fatal("MkdirAll through a file succeeded")
	}
	names, err := m.ReadDir("/a/")
	if err != nil || !slices.Equal(names, []string{"b", "m", "z"}) {
		t.Fatalf("ReadDir = %v, %v", names, err)
	}
	if _, err := m.ReadDir("/nope"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("ReadDir missing: %v", err)
	}
	if _, err := m.ReadDir("/a/z"); err == nil {
		t.Fatal("ReadDir of a file succeeded")
	}
	if err := m.Remove("/a/b"); err == nil {
		t.Fatal("Remove of a non-empty dir succeeded")
	}
	if err := m.Remove("/a/nope"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Remove missing: %v", err)
	}
	if err := m.Remove("/a/m"); err != nil {
		t.Fatal(err)
	}
	if err := m.Rename("/a/b", "/a/b/inside"); err == nil {
		t.Fatal("a directory moved into itself")
	}
	if err := m.Rename("/a/b", "/a/z"); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("directory rename onto an existing name: %v, want fs.ErrExist", err)
	}
	if err := m.Rename("/a/z", "/a/b"); err == nil {
		t.Fatal("rename over a directory succeeded")
	}
	if err := m.RemoveAll("/a/b"); err != nil {
		t.Fatal(err)
	}
	if err := m.RemoveAll("/a/b"); err != nil {
		t.Fatalf("RemoveAll missing: %v", err)
	}
	if err := m.MkdirAll("/a/e", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := m.Remove("/a/e"); err != nil {
		t.Fatalf("Remove empty dir: %v", err)
	}
	names, _ = m.ReadDir("/a")
	if !slices.Equal(names, []string{"z"}) {
		t.Fatalf("ReadDir after removals = %v", names)
	}
	if err := m.RemoveAll("/"); err == nil {
		t.Fatal("RemoveAll of the root succeeded")
	}
	// Relative and absolute paths are separate trees.
	memOpen(t, m, "z", memRW).Close()
	if names, _ := m.ReadDir("."); !slices.Equal(names, []string{"z"}) {
		t.Fatalf("ReadDir(.) = %v", names)
	}
}

func TestMemFSDropAllAndSyncedSurvive(t *testing.T) {
	setup := func(t *testing.T) (*MemFS, File) {
		m := NewMemFS()
		if err := m.MkdirAll("/d", 0o755); err != nil {
			t.Fatal(err)
		}
		f := memOpen(t, m, "/d/seg", memRW)
		memWrite(t, f, "durable", 0)
		memSync(t, f)
		memSyncDir(t, m, "/d")
		memWrite(t, f, "+volatile", 7)
		return m, f
	}
	t.Run("drop all", func(t *testing.T) {
		m, f := setup(t)
		m.PowerCutDropAll()
		if got := memContent(t, m, "/d/seg"); got != "durable" {
			t.Fatalf("after PowerCutDropAll: %q", got)
		}
		if _, err := f.WriteAt([]byte("x"), 0); !errors.Is(err, fs.ErrClosed) {
			t.Fatalf("write on a handle lost to the power cut: %v", err)
		}
		if m.OpenFiles() != 0 {
			t.Fatalf("OpenFiles = %d after power cut", m.OpenFiles())
		}
	})
	t.Run("synced survives", func(t *testing.T) {
		for seed := range uint64(200) {
			m, _ := setup(t)
			m.PowerCut(rand.New(rand.NewPCG(seed, 1)))
			got := memContent(t, m, "/d/seg")
			if len(got) < 7 || got[:7] != "durable" {
				t.Fatalf("seed %d: synced data lost: %q", seed, got)
			}
		}
	})
}

func TestMemFSUnsyncedNameVanishes(t *testing.T) {
	for _, syncDir := range []bool{false, true} {
		t.Run(fmt.Sprint("syncdir=", syncDir), func(t *testing.T) {
			m := NewMemFS()
			if err := m.MkdirAll("/d/sub", 0o755); err != nil {
				t.Fatal(err)
			}
			f := memOpen(t, m, "/d/new", memRW)
			memWrite(t, f, "data", 0)
			memSync(t, f)
			if syncDir {
				memSyncDir(t, m, "/d")
			}
			m.PowerCut(rand.New(rand.NewPCG(1, 2)))
			want := map[string]string{"/d/": "", "/d/sub/": ""}
			if syncDir {
				want["/d/new"] = "data"
			}
			if got := memDump(t, m, "/"); !maps.Equal(got, want) {
				t.Fatalf("after power cut: %v, want %v", got, want)
			}
		})
	}
}

func TestMemFSNameChangesNeedSyncDir(t *testing.T) {
	// setup leaves /d with durable old=v1 and gone=x, then writes a new
	// version atomically (minus the directory sync) and removes gone.
	setup := func(t *testing.T) *MemFS {
		m := NewMemFS()
		if err := m.MkdirAll("/d", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := WriteFileAtomic(m, "/d/old", []byte("v1")); err != nil {
			t.Fatal(err)
		}
		g := memOpen(t, m, "/d/gone", memRW)
		memWrite(t, g, "x", 0)
		memSync(t, g)
		g.Close()
		memSyncDir(t, m, "/d")
		f := memOpen(t, m, "/d/tmp", memRW)
		memWrite(t, f, "v2", 0)
		memSync(t, f)
		f.Close()
		if err := m.Rename("/d/tmp", "/d/old"); err != nil {
			t.Fatal(err)
		}
		if err := m.Remove("/d/gone"); err != nil {
			t.Fatal(err)
		}
		return m
	}
	t.Run("reverts", func(t *testing.T) {
		m := setup(t)
		m.PowerCutDropAll()
		want := map[string]string{"/d/old": "v1", "/d/gone": "x"}
		if got := memDump(t, m, "/d"); !maps.Equal(got, want) {
			t.Fatalf("got %v, want %v", got, want)
		}
	})
	t.Run("durable after syncdir", func(t *testing.T) {
		m := setup(t)
		memSyncDir(t, m, "/d")
		m.PowerCutDropAll()
		want := map[string]string{"/d/old": "v2"}
		if got := memDump(t, m, "/d"); !maps.Equal(got, want) {
			t.Fatalf("got %v, want %v", got, want)
		}
	})
	t.Run("writeFileAtomic", func(t *testing.T) {
		m := setup(t)
		if err := WriteFileAtomic(m, "/d/old", []byte("v3")); err != nil {
			t.Fatal(err)
		}
		m.PowerCutDropAll()
		if got := memContent(t, m, "/d/old"); got != "v3" {
			t.Fatalf("got %q, want v3", got)
		}
	})
	t.Run("removed tree comes back", func(t *testing.T) {
		m := setup(t)
		memSyncDir(t, m, "/d")
		if err := m.RemoveAll("/d"); err != nil {
			t.Fatal(err)
		}
		m.PowerCutDropAll()
		if got := memContent(t, m, "/d/old"); got != "v2" {
			t.Fatalf("got %q, want v2", got)
		}
		if err := m.RemoveAll("/d"); err != nil {
			t.Fatal(err)
		}
		memSyncDir(t, m, "/")
		m.PowerCutDropAll()
		if _, err := m.ReadDir("/d"); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("ReadDir after synced RemoveAll: %v", err)
		}
	})
}

// memOpT is a data operation in the reference model of TestMemFSPowerCutKeepsPrefix.
type memOpT struct {
	truncate bool
	off      int64
	data     []byte
}

// memApply applies op to b by the plain rules of pwrite and ftruncate.
func memApply(b []byte, op memOpT) []byte {
	b = slices.Clone(b)
	end := op.off
	if !op.truncate {
		end += int64(len(op.data))
	}
	for int64(len(b)) < end {
		b = append(b, 0)
	}
	if op.truncate {
		return b[:op.off]
	}
	copy(b[op.off:], op.data)
	return b
}

func TestMemFSPowerCutKeepsPrefix(t *testing.T) {
	seen := map[string]int{}
	for seed := range uint64(500) {
		gen := rand.New(rand.NewPCG(seed, 0))
		m := NewMemFS()
		f := memOpen(t, m, "seg", memRW)
		base := bytes.Repeat([]byte{'d'}, 1+gen.IntN(20))
		memWrite(t, f, string(base), 0)
		memSync(t, f)
		memSyncDir(t, m, ".")

		// Legal outcomes: base with ops[:k] applied, the k-th op, if a
		// write, possibly cut to any prefix of its bytes.
		legal := map[string]string{string(base): "none"}
		state := base
		nops := 1 + gen.IntN(8)
		for i := range nops {
			var op memOpT
			if gen.IntN(4) == 0 {
				op = memOpT{truncate: true, off: int64(gen.IntN(40))}
				if err := f.Truncate(op.off); err != nil {
					t.Fatal(err)
				}
			} else {
				op = memOpT{off: int64(gen.IntN(40)), data: bytes.Repeat([]byte{byte('a' + i)}, 1+gen.IntN(10))}
				memWrite(t, f, string(op.data), op.off)
				for cut := range len(op.data) {
					torn := op
					torn.data = op.data[:cut]
					if _, ok := legal[string(memApply(state, torn))]; !ok {
						legal[string(memApply(state, torn))] = "torn"
					}
				}
			}
			state = memApply(state, op)
			kind := "some"
			if i == nops-1 {
				kind = "all"
			}
			legal[string(state)] = kind
		}
		if got := memContent(t, m, "seg"); got != string(state) {
			t.Fatalf("seed %d: current content %q, model %q", seed, got, state)
		}
		m.PowerCut(rand.New(rand.NewPCG(seed, 1)))
		got := memContent(t, m, "seg")
		kind, ok := legal[got]
		if !ok {
			t.Fatalf("seed %d: %q is not a legal outcome of %v", seed, got, legal)
		}
		seen[kind]++

		// The survivor is durable: a second power cut keeps it.
		m.PowerCutDropAll()
		if again := memContent(t, m, "seg"); again != got {
			t.Fatalf("seed %d: second power cut changed %q to %q", seed, got, again)
		}
	}
	for _, kind := range []string{"none", "some", "all", "torn"} {
		if seen[kind] == 0 {
			t.Errorf("no seed produced a %q outcome: %v", kind, seen)
		}
	}
}

func TestMemFSCrashKeepsEverything(t *testing.T) {
	m := NewMemFS()
	if err := m.MkdirAll("/d", 0o755); err != nil {
		t.Fatal(err)
	}
	f := memOpen(t, m, "/d/a", memRW)
	memWrite(t, f, "synced", 0)
	memSync(t, f)
	memSyncDir(t, m, "/d")
	memWrite(t, f, "+cached", 6)
	g := memOpen(t, m, "/d/b", memRW)
	memWrite(t, g, "never synced", 0)
	before := memDump(t, m, "/")

	m.Crash()
	if m.OpenFiles() != 0 {
		t.Fatalf("OpenFiles = %d after crash", m.OpenFiles())
	}
	for _, h := range []File{f, g} {
		if _, err := h.ReadAt(make([]byte, 1), 0); !errors.Is(err, fs.ErrClosed) {
			t.Fatalf("read on a handle lost to the crash: %v", err)
		}
		if err := h.Close(); !errors.Is(err, fs.ErrClosed) {
			t.Fatalf("close of a handle lost to the crash: %v", err)
		}
	}
	if got := memDump(t, m, "/"); !maps.Equal(got, before) {
		t.Fatalf("after crash %v, want %v", got, before)
	}

	// The page cache survived, but nothing became durable.
	m.PowerCutDropAll()
	want := map[string]string{"/d/": "", "/d/a": "synced"}
	if got := memDump(t, m, "/"); !maps.Equal(got, want) {
		t.Fatalf("power cut after crash: %v, want %v", got, want)
	}
}

func TestMemFSClone(t *testing.T) {
	m := NewMemFS()
	f := memOpen(t, m, "a", memRW)
	memWrite(t, f, "one", 0)
	memSync(t, f)
	memSyncDir(t, m, ".")
	memWrite(t, f, "two", 0)

	c := m.Clone()
	if c.OpenFiles() != 0 || c.SyncCount() != 0 {
		t.Fatalf("clone: OpenFiles %d SyncCount %d", c.OpenFiles(), c.SyncCount())
	}
	if got := memContent(t, c, "a"); got != "two" {
		t.Fatalf("clone content %q", got)
	}
	memWrite(t, f, "three", 0)
	if got := memContent(t, c, "a"); got != "two" {
		t.Fatalf("clone shares data with the original: %q", got)
	}
	c.PowerCutDropAll()
	if got := memContent(t, c, "a"); got != "one" {
		t.Fatalf("clone lost durability state: %q", got)
	}
	if got := memContent(t, m, "a"); got != "three" {
		t.Fatalf("power cut of the clone reached the original: %q", got)
	}
}

func TestMemFSFaults(t *testing.T) {
	m := NewMemFS()
	errDisk := errors.New("disk on fire")
	m.SetFaults(func(op, path string) error {
		if path == "/d/bad" && (op == "sync" || op == "write") {
			return errDisk
		}
		if op == "rename" {
			return errDisk
		}
		return nil
	})
	if err := m.MkdirAll("/d", 0o755); err != nil {
		t.Fatal(err)
	}
	f := memOpen(t, m, "/d/../d/bad", memRW) // cleaned to /d/bad
	if _, err := f.WriteAt([]byte("x"), 0); !errors.Is(err, errDisk) {
		t.Fatalf("write fault: %v", err)
	}
	if size, _ := f.Size(); size != 0 {
		t.Fatalf("failed write changed the file: size %d", size)
	}
	if err := f.Sync(); !errors.Is(err, errDisk) {
		t.Fatalf("sync fault: %v", err)
	}
	var pe *fs.PathError
	if err := f.Sync(); !errors.As(err, &pe) || pe.Op != "sync" || pe.Path != "/d/bad" {
		t.Fatalf("sync fault does not name op and path: %v", err)
	}
	if m.SyncCount() != 0 {
		t.Fatalf("SyncCount = %d after failed syncs", m.SyncCount())
	}
	if err := WriteFileAtomic(m, "/d/good", []byte("v")); !errors.Is(err, errDisk) {
		t.Fatalf("writeFileAtomic swallowed the rename fault: %v", err)
	}
	if m.SyncCount() != 1 {
		t.Fatalf("SyncCount = %d, want 1", m.SyncCount())
	}
	m.SetFaults(nil)
	if err := f.Sync(); err != nil {
		t.Fatalf("sync after SetFaults(nil): %v", err)
	}
	f.Close()
}

func TestMemFSConcurrent(t *testing.T) {
	m := NewMemFS()
	if err := m.MkdirAll("/d", 0o755); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			name := fmt.Sprintf("/d/f%d", i)
			f, err := m.OpenFile(name, memRW, 0o644)
			if err != nil {
				t.Error(err)
				return
			}
			defer f.Close()
			for j := range 100 {
				if _, err := f.WriteAt([]byte{byte(j)}, int64(j)); err != nil {
					t.Error(err)
					return
				}
				if j%10 == 0 {
					if err := f.Sync(); err != nil {
						t.Error(err)
					}
					if _, err := m.ReadDir("/d"); err != nil {
						t.Error(err)
					}
				}
			}
		})
	}
	wg.Wait()
	if m.SyncCount() != 80 || m.OpenFiles() != 0 {
		t.Fatalf("SyncCount %d OpenFiles %d", m.SyncCount(), m.OpenFiles())
	}
}

func TestMemFSCrossDirRenameSyncedOnOneSide(t *testing.T) {
	m := NewMemFS()
	for _, d := range []string{"/a", "/b"} {
		if err := m.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	f := memOpen(t, m, "/a/f", memRW)
	memWrite(t, f, "v", 0)
	memSync(t, f)
	f.Close()
	memSyncDir(t, m, "/a")
	if err := m.Rename("/a/f", "/b/f"); err != nil {
		t.Fatal(err)
	}
	memSyncDir(t, m, "/b") // the old name's removal is not durable yet

	m.PowerCutDropAll()
	want := map[string]string{"/a/": "", "/a/f": "v", "/b/": "", "/b/f": "v"}
	if got := memDump(t, m, "/"); !maps.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	// Both names are links to one inode.
	g := memOpen(t, m, "/a/f", os.O_RDWR)
	memWrite(t, g, "w", 0)
	g.Close()
	if got := memContent(t, m, "/b/f"); got != "w" {
		t.Fatalf("/b/f = %q, want the write through /a/f", got)
	}
	if err := m.Rename("/a/f", "/b/f"); err != nil {
		t.Fatalf("rename between links of one inode: %v", err)
	}
	if got := memContent(t, m, "/a/f"); got != "w" {
		t.Fatalf("rename between links removed the source: %q", got)
	}
}

// A directory renamed keeps its contents; the new name is durable only
// once the parent directory is synced, and before that a power cut brings
// back the old name with everything in it.
func TestMemFSDirRename(t *testing.T) {
	for _, synced := range []bool{false, true} {
		m := NewMemFS()
		if err := m.MkdirAll("/d/p", 0o755); err != nil {
			t.Fatal(err)
		}
		f, err := m.OpenFile("/d/p/f", os.O_RDWR|os.O_CREATE, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.WriteAt([]byte("data"), 0); err != nil {
			t.Fatal(err)
		}
		if err := f.Sync(); err != nil {
			t.Fatal(err)
		}
		if err := m.SyncDir("/d/p"); err != nil {
			t.Fatal(err)
		}
		if err := m.Rename("/d/p", "/d/p.del"); err != nil {
			t.Fatalf("rename a directory: %v", err)
		}
		if got := memRead(t, m, "/d/p.del/f"); got != "data" {
			t.Fatalf("after the rename: %q", got)
		}
		if _, err := m.Stat("/d/p"); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("old name after the rename: %v", err)
		}
		if synced {
			if err := m.SyncDir("/d"); err != nil {
				t.Fatal(err)
			}
		}
		m.PowerCutDropAll()
		names, err := m.ReadDir("/d")
		if err != nil {
			t.Fatal(err)
		}
		want, gone := "p.del", "p"
		if !synced {
			want, gone = gone, want
		}
		if !slices.Contains(names, want) || slices.Contains(names, gone) {
			t.Fatalf("synced %v: /d holds %v after a power cut, want %s and not %s", synced, names, want, gone)
		}
		if got := memRead(t, m, "/d/"+want+"/f"); got != "data" {
			t.Fatalf("synced %v: %q after a power cut", synced, got)
		}
	}
}

// memRead returns the content of name or fails the test.
func memRead(t *testing.T, m *MemFS, name string) string {
	t.Helper()
	data, err := ReadFile(m, name)
	if err != nil {
		t.Fatalf("read %s: %v", name, err)
	}
	return string(data)
}

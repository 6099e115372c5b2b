package log

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
)

// MemFS is an in-memory FS for crash and power-loss tests. It keeps, for
// every file, what a power cut would leave behind apart from what the running
// process sees, following the durability contract of FS:
//
//   - File data: each file (inode) has durable content and current content.
//     File.Sync makes the current content durable. The data operations since
//     the last Sync (WriteAt, Truncate, O_TRUNC) are kept in order.
//   - Names: each directory has durable entries and current entries. Creating,
//     renaming and removing a name changes the current entries only; SyncDir
//     copies a directory's current entries to its durable ones. A rename is
//     therefore durable once the target's directory is synced, and the old
//     name is gone durably once the source's directory is synced (until then
//     a power cut may leave both names, as hard links to one inode).
//   - Simplification: a directory created by MkdirAll is durable at once, as if
//     its parent had been synced (and a re-created directory durably replaces
//     an earlier one of that name whose removal was not yet synced).
//
// PowerCut, PowerCutDropAll and Crash simulate failures; afterwards every
// handle opened before them returns errors wrapping fs.ErrClosed and the file
// system carries on from the surviving state.
//
// The power-cut model keeps, per inode, a prefix of the pending operations,
// the last write possibly torn. That is kinder than the worst real case (write
// back may persist later pages before earlier ones); code that is correct
// under MemFS must still checksum what it reads back after a crash.
//
// Paths are cleaned with filepath.Clean; absolute and relative paths live in
// two separate trees whose roots always exist. File modes are ignored. The
// flags O_APPEND and O_SYNC are rejected. MemFS is safe for concurrent use.
// Create one with NewMemFS; the zero value is not usable.
type MemFS struct {
	mu     sync.Mutex
	roots  [2]*memNode // rootAbs ("/") and rootRel (".")
	open   map[*memFile]struct{}
	locks  map[string]*memLock // held locks by cleaned path (Lock)
	gen    uint64              // bumped by every crash; handles of older generations are dead
	syncs  int
	faults func(op, path string) error
}

const (
	rootAbs = iota
	rootRel
)

var (
	_ FS   = (*MemFS)(nil)
	_ File = (*memFile)(nil)

	// errMemHandleLost is returned by handles opened before a simulated
	// crash or power cut.
	errMemHandleLost = fmt.Errorf("log: memfs handle lost in a simulated crash: %w", fs.ErrClosed)
	errMemDirRename  = fmt.Errorf("log: memfs cannot move a directory into itself: %w", fs.ErrInvalid)
	errMemRoot       = fmt.Errorf("log: memfs root directory: %w", fs.ErrInvalid)
	errMemFlag       = fmt.Errorf("log: memfs unsupported open flags: %w", fs.ErrInvalid)
	errMemNegative   = fmt.Errorf("log: memfs negative offset or size: %w", fs.ErrInvalid)
	errMemDotDot     = fmt.Errorf("log: memfs path with \"..\": %w", fs.ErrInvalid)
)

// memNode is a directory (entries != nil) or a file inode.
type memNode struct {
	entries        map[string]*memNode // current names
	durableEntries map[string]*memNode // names as of the last SyncDir

	data    []byte  // current content
	durable []byte  // content as of the last Sync
	pending []memOp // data operations since the last Sync, in order
}

// memOp is one data operation on an inode. Its data is never modified after
// it is recorded, so copies of the op may share it.
type memOp struct {
	write bool
	off   int64 // write offset, or the new size of a truncate
	data  []byte
}

// NewMemFS returns an empty in-memory file system: only the roots "/" and
// "." exist, and they are durable.
func NewMemFS() *MemFS {
	return &MemFS{
		roots: [2]*memNode{newMemDir(), newMemDir()},
		open:  make(map[*memFile]struct{}),
		locks: make(map[string]*memLock),
	}
}

// SetFaults installs a fault-injection hook called before each operation
// with the operation name and the cleaned path; a non-nil return fails the
// operation, which then changes nothing and returns the error wrapped in an
// *fs.PathError. Operation names: "open", "mkdir", "readdir", "stat",
// "rename" (with the old path), "remove", "removeall", "syncdir", "lock" and, on
// files, "read", "write", "truncate", "sync". The hook runs without MemFS's
// lock held, so it may call MemFS. SetFaults(nil) removes the hook.
func (m *MemFS) SetFaults(hook func(op, path string) error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.faults = hook
}

// SyncCount reports how many File.Sync calls have succeeded.
func (m *MemFS) SyncCount() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.syncs
}

// OpenFiles reports how many handles are open: opened, not closed, and not
// lost to a simulated crash.
func (m *MemFS) OpenFiles() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.open)
}

// Crash simulates a process crash (SIGKILL): every open handle and every
// lock is lost, but
// all current content and names survive, because the kernel's page cache
// outlives the process. What was not yet durable stays not durable, so a
// later PowerCut can still lose it.
func (m *MemFS) Crash() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.crashLocked()
}

// PowerCut simulates a power loss. Names revert to the durable directory
// entries. Each surviving file starts from its durable content and gets a
// random-length prefix (possibly none, possibly all) of its pending data
// operations applied in order, the last one, if a write, possibly torn so
// that only a prefix of its bytes lands. Files are visited in sorted path
// order, so a seeded rng gives a reproducible result. Every open handle is
// lost, and the surviving state is durable, as after a reboot.
func (m *MemFS) PowerCut(rng *rand.Rand) {
	m.reboot(func(n *memNode) []byte { return n.survivor(rng) })
}

// PowerCutDropAll simulates the harshest power loss: only durable names and
// durable content survive. Every open handle is lost.
func (m *MemFS) PowerCutDropAll() {
	m.reboot(func(n *memNode) []byte { return slices.Clone(n.durable) })
}

// Clone returns a deep copy of the file system: current and durable content,
// pending operations, current and durable names. The copy has no open
// handles, a zero SyncCount and no fault hook.
func (m *MemFS) Clone() *MemFS {
	m.mu.Lock()
	defer m.mu.Unlock()
	c := NewMemFS()
	seen := make(map[*memNode]*memNode)
	for i, r := range m.roots {
		c.roots[i] = r.deepCopy(seen)
	}
	return c
}

// OpenFile implements FS. O_CREATE in a missing directory, or a missing file
// without O_CREATE, fails with an error wrapping fs.ErrNotExist; O_EXCL on an
// existing file fails with one wrapping fs.ErrExist. O_TRUNC needs write
// access and is a pending data operation like Truncate(0).
func (m *MemFS) OpenFile(name string, flag int, perm os.FileMode) (File, error) {
	clean := filepath.Clean(name)
	if err := m.fault("open", clean); err != nil {
		return nil, err
	}
	access := flag & (os.O_RDONLY | os.O_WRONLY | os.O_RDWR)
	if flag&(os.O_APPEND|os.O_SYNC) != 0 || (flag&os.O_TRUNC != 0 && access == os.O_RDONLY) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: errMemFlag}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	parent, base, n, err := m.lookupLocked(clean)
	switch {
	case err != nil:
	case base == "" || (n != nil && n.isDir()):
		err = syscall.EISDIR
	case n == nil && flag&os.O_CREATE == 0:
		err = fs.ErrNotExist
	case n != nil && flag&os.O_CREATE != 0 && flag&os.O_EXCL != 0:
		err = fs.ErrExist
	}
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	if n == nil {
		n = &memNode{}
		parent.entries[base] = n
	}
	if flag&os.O_TRUNC != 0 && len(n.data) > 0 {
		n.apply(memOp{off: 0})
	}
	f := &memFile{
		m: m, node: n, name: name, path: clean, gen: m.gen,
		canRead:  access != os.O_WRONLY,
		canWrite: access != os.O_RDONLY,
	}
	m.open[f] = struct{}{}
	return f, nil
}

// MkdirAll implements FS. New directories are durable at once (see MemFS).
func (m *MemFS) MkdirAll(path string, perm os.FileMode) error {
	clean := filepath.Clean(path)
	if err := m.fault("mkdir", clean); err != nil {
		return err
	}
	root, parts, err := splitMemPath(clean)
	if err != nil {
		return &fs.PathError{Op: "mkdir", Path: path, Err: err}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	d := m.roots[root]
	for _, part := range parts {
		c := d.entries[part]
		if c == nil {
			c = newMemDir()
			d.entries[part] = c
			d.durableEntries[part] = c
		} else if !c.isDir() {
			return &fs.PathError{Op: "mkdir", Path: path, Err: syscall.ENOTDIR}
		}
		d = c
	}
	return nil
}

// ReadDir implements FS: the sorted names of the files and subdirectories
// in path.
func (m *MemFS) ReadDir(path string) ([]string, error) {
	clean := filepath.Clean(path)
	if err := m.fault("readdir", clean); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	d, err := m.dirLocked(clean)
	if err != nil {
		return nil, &fs.PathError{Op: "readdir", Path: path, Err: err}
	}
	return slices.Sorted(maps.Keys(d.entries)), nil
}

// Stat implements FS. A directory's size is 0.
func (m *MemFS) Stat(name string) (int64, error) {
	clean := filepath.Clean(name)
	if err := m.fault("stat", clean); err != nil {
		return 0, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	_, _, n, err := m.lookupLocked(clean)
	if err == nil && n == nil {
		err = fs.ErrNotExist
	}
	if err != nil {
		return 0, &fs.PathError{Op: "stat", Path: name, Err: err}
	}
	return int64(len(n.data)), nil
}

// Rename implements FS. A file replaces newpath atomically if newpath is a
// file; a directory moves with everything in it, and newpath must not
// exist nor lie inside it. The new name is durable after SyncDir of
// newpath's directory; the old name's removal after SyncDir of oldpath's
// directory.
func (m *MemFS) Rename(oldpath, newpath string) error {
	oldClean, newClean := filepath.Clean(oldpath), filepath.Clean(newpath)
	if err := m.fault("rename", oldClean); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.renameLocked(oldClean, newClean); err != nil {
		return &os.LinkError{Op: "rename", Old: oldpath, New: newpath, Err: err}
	}
	return nil
}

func (m *MemFS) renameLocked(oldpath, newpath string) error {
	oldDir, oldBase, n, err := m.lookupLocked(oldpath)
	if err != nil {
		return err
	}
	newDir, newBase, target, err := m.lookupLocked(newpath)
	switch {
	case err != nil:
		return err
	case oldBase == "" || newBase == "":
		return errMemRoot
	case n == nil:
		return fs.ErrNotExist
	case n.isDir() && target != nil:
		return fs.ErrExist
	case n.isDir() && strings.HasPrefix(newpath, oldpath+string(filepath.Separator)):
		return errMemDirRename
	case target != nil && target.isDir():
		return syscall.EISDIR
	case target == n:
		return nil // same name, or two names of one inode: rename(2) does nothing
	}
	delete(oldDir.entries, oldBase)
	newDir.entries[newBase] = n
	return nil
}

// Remove implements FS: it deletes a file or an empty directory. The removal
// is durable after SyncDir of the parent. Open handles keep working on the
// removed file.
func (m *MemFS) Remove(name string) error {
	clean := filepath.Clean(name)
	if err := m.fault("remove", clean); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	parent, base, n, err := m.lookupLocked(clean)
	switch {
	case err != nil:
	case base == "":
		err = errMemRoot
	case n == nil:
		err = fs.ErrNotExist
	case n.isDir() && len(n.entries) > 0:
		err = syscall.ENOTEMPTY
	}
	if err != nil {
		return &fs.PathError{Op: "remove", Path: name, Err: err}
	}
	delete(parent.entries, base)
	return nil
}

// RemoveAll implements FS: it deletes path and, for a directory, everything
// below it; a missing path is not an error. Only the removal of path's own
// name needs a SyncDir of its parent to be durable: until then a power cut
// brings back the whole tree as it was durably.
func (m *MemFS) RemoveAll(path string) error {
	clean := filepath.Clean(path)
	if err := m.fault("removeall", clean); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	parent, base, _, err := m.lookupLocked(clean)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err == nil && base == "":
		err = errMemRoot
	}
	if err != nil {
		return &fs.PathError{Op: "removeall", Path: path, Err: err}
	}
	delete(parent.entries, base)
	return nil
}

// SyncDir implements FS: the directory's current names become durable.
func (m *MemFS) SyncDir(path string) error {
	clean := filepath.Clean(path)
	if err := m.fault("syncdir", clean); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	d, err := m.dirLocked(clean)
	if err != nil {
		return &fs.PathError{Op: "syncdir", Path: path, Err: err}
	}
	d.durableEntries = maps.Clone(d.entries)
	return nil
}

// fault runs the fault hook, if any, outside the lock.
func (m *MemFS) fault(op, path string) error {
	m.mu.Lock()
	hook := m.faults
	m.mu.Unlock()
	if hook == nil {
		return nil
	}
	if err := hook(op, path); err != nil {
		return &fs.PathError{Op: op, Path: path, Err: err}
	}
	return nil
}

func (m *MemFS) crashLocked() {
	m.gen++
	clear(m.open)
	clear(m.locks)
}

// Lock implements FS. Like flock, a second Lock of the same path fails
// with ErrLocked until the first is closed or a simulated crash or power
// cut releases it. A missing file is created, as OpenFile with O_CREATE
// would create it (its name is durable only after SyncDir).
func (m *MemFS) Lock(name string) (io.Closer, error) {
	clean := filepath.Clean(name)
	if err := m.fault("lock", clean); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	parent, base, n, err := m.lookupLocked(clean)
	switch {
	case err != nil:
	case base == "" || (n != nil && n.isDir()):
		err = syscall.EISDIR
	case m.locks[clean] != nil:
		err = ErrLocked
	}
	if err != nil {
		return nil, &fs.PathError{Op: "lock", Path: name, Err: err}
	}
	if n == nil {
		n = &memNode{}
		parent.entries[base] = n
	}
	l := &memLock{m: m, path: clean}
	m.locks[clean] = l
	return l, nil
}

// memLock is a lock held on a MemFS path.
type memLock struct {
	m    *MemFS
	path string
}

// Close releases the lock, unless a crash already did.
func (l *memLock) Close() error {
	l.m.mu.Lock()
	defer l.m.mu.Unlock()
	if l.m.locks[l.path] == l {
		delete(l.m.locks, l.path)
	}
	return nil
}

// reboot loses every handle and rebuilds both trees from the durable names,
// each surviving file's content chosen by content.
func (m *MemFS) reboot(content func(*memNode) []byte) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.crashLocked()
	seen := make(map[*memNode]*memNode)
	for i, r := range m.roots {
		m.roots[i] = r.revive(seen, content)
	}
}

// lookupLocked resolves a cleaned path to its parent directory, its base
// name and its node (nil if the name does not exist). For a root, parent is
// nil and base is "". err is set only when the parent cannot be reached.
func (m *MemFS) lookupLocked(clean string) (parent *memNode, base string, n *memNode, err error) {
	root, parts, err := splitMemPath(clean)
	if err != nil {
		return nil, "", nil, err
	}
	if len(parts) == 0 {
		return nil, "", m.roots[root], nil
	}
	d := m.roots[root]
	for _, part := range parts[:len(parts)-1] {
		c := d.entries[part]
		if c == nil {
			return nil, "", nil, fs.ErrNotExist
		}
		if !c.isDir() {
			return nil, "", nil, syscall.ENOTDIR
		}
		d = c
	}
	base = parts[len(parts)-1]
	return d, base, d.entries[base], nil
}

// dirLocked resolves a cleaned path that must name a directory.
func (m *MemFS) dirLocked(clean string) (*memNode, error) {
	_, _, n, err := m.lookupLocked(clean)
	switch {
	case err != nil:
		return nil, err
	case n == nil:
		return nil, fs.ErrNotExist
	case !n.isDir():
		return nil, syscall.ENOTDIR
	}
	return n, nil
}

// splitMemPath splits a cleaned path into its root and its components.
func splitMemPath(clean string) (root int, parts []string, err error) {
	root, rest := rootRel, clean
	if filepath.IsAbs(clean) {
		root, rest = rootAbs, strings.TrimLeft(clean, string(filepath.Separator))
	}
	if rest == "" || rest == "." {
		return root, nil, nil
	}
	parts = strings.Split(rest, string(filepath.Separator))
	if slices.Contains(parts, "..") {
		return 0, nil, errMemDotDot
	}
	return root, parts, nil
}

func newMemDir() *memNode {
	return &memNode{entries: map[string]*memNode{}, durableEntries: map[string]*memNode{}}
}

func (n *memNode) isDir() bool { return n.entries != nil }

// apply performs a data operation on the current content and records it as
// pending.
func (n *memNode) apply(op memOp) {
	n.data = op.applyTo(n.data)
	n.pending = append(n.pending, op)
}

// sync makes the current content durable.
func (n *memNode) sync() {
	n.durable = slices.Clone(n.data)
	n.pending = nil
}

// survivor picks what a power cut leaves of a file: the durable content with
// a random prefix of the pending operations, the last write possibly torn.
func (n *memNode) survivor(rng *rand.Rand) []byte {
	data := slices.Clone(n.durable)
	k := rng.IntN(len(n.pending) + 1)
	for i, op := range n.pending[:k] {
		if i == k-1 && op.write && rng.IntN(2) == 0 {
			op.data = op.data[:rng.IntN(len(op.data))]
		}
		data = op.applyTo(data)
	}
	return data
}

// revive returns the node a reboot finds in place of n: directories hold
// their durable entries (now current too), files the chosen content (now
// durable too).
func (n *memNode) revive(seen map[*memNode]*memNode, content func(*memNode) []byte) *memNode {
	if r, ok := seen[n]; ok {
		return r
	}
	if !n.isDir() {
		data := content(n)
		r := &memNode{data: data, durable: slices.Clone(data)}
		seen[n] = r
		return r
	}
	r := newMemDir()
	seen[n] = r
	for _, name := range slices.Sorted(maps.Keys(n.durableEntries)) {
		c := n.durableEntries[name].revive(seen, content)
		r.entries[name] = c
		r.durableEntries[name] = c
	}
	return r
}

// deepCopy copies n and everything reachable from it by current or durable
// names; nodes reachable twice stay shared in the copy.
func (n *memNode) deepCopy(seen map[*memNode]*memNode) *memNode {
	if c, ok := seen[n]; ok {
		return c
	}
	c := &memNode{data: slices.Clone(n.data), durable: slices.Clone(n.durable), pending: slices.Clone(n.pending)}
	seen[n] = c
	if n.isDir() {
		c.entries = make(map[string]*memNode, len(n.entries))
		c.durableEntries = make(map[string]*memNode, len(n.durableEntries))
		for name, e := range n.entries {
			c.entries[name] = e.deepCopy(seen)
		}
		for name, e := range n.durableEntries {
			c.durableEntries[name] = e.deepCopy(seen)
		}
	}
	return c
}

// applyTo returns b with the operation applied, possibly reusing b.
func (op memOp) applyTo(b []byte) []byte {
	if !op.write {
		return resizeMem(b, op.off)
	}
	if len(op.data) == 0 {
		return b
	}
	if end := op.off + int64(len(op.data)); end > int64(len(b)) {
		b = resizeMem(b, end)
	}
	copy(b[op.off:], op.data)
	return b
}

// resizeMem shrinks b or grows it with zeros.
func resizeMem(b []byte, size int64) []byte {
	old := int64(len(b))
	if size <= old {
		return b[:size]
	}
	b = slices.Grow(b, int(size-old))[:size]
	clear(b[old:])
	return b
}

// memFile is an open handle of a MemFS. The content belongs to the node,
// shared by every handle and name of it.
type memFile struct {
	m        *MemFS
	node     *memNode
	name     string // as opened
	path     string // cleaned, for the fault hook
	gen      uint64 // MemFS generation at open
	canRead  bool
	canWrite bool
	closed   bool
}

// usableLocked reports why f cannot do op, if it cannot.
func (f *memFile) usableLocked(op string, allowed bool) error {
	var err error
	switch {
	case f.closed:
		err = fs.ErrClosed
	case f.gen != f.m.gen:
		err = errMemHandleLost
	case !allowed:
		err = syscall.EBADF
	}
	if err != nil {
		return &fs.PathError{Op: op, Path: f.name, Err: err}
	}
	return nil
}

// ReadAt implements File; like os.File it returns io.EOF when it reads
// fewer than len(p) bytes because the file ends.
func (f *memFile) ReadAt(p []byte, off int64) (int, error) {
	if err := f.m.fault("read", f.path); err != nil {
		return 0, err
	}
	f.m.mu.Lock()
	defer f.m.mu.Unlock()
	if err := f.usableLocked("read", f.canRead); err != nil {
		return 0, err
	}
	if off < 0 {
		return 0, &fs.PathError{Op: "read", Path: f.name, Err: errMemNegative}
	}
	if off >= int64(len(f.node.data)) {
		return 0, io.EOF
	}
	n := copy(p, f.node.data[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// WriteAt implements File; writing past the end grows the file with zeros.
func (f *memFile) WriteAt(p []byte, off int64) (int, error) {
	if err := f.m.fault("write", f.path); err != nil {
		return 0, err
	}
	f.m.mu.Lock()
	defer f.m.mu.Unlock()
	if err := f.usableLocked("write", f.canWrite); err != nil {
		return 0, err
	}
	if off < 0 {
		return 0, &fs.PathError{Op: "write", Path: f.name, Err: errMemNegative}
	}
	if len(p) > 0 {
		f.node.apply(memOp{write: true, off: off, data: slices.Clone(p)})
	}
	return len(p), nil
}

// Truncate implements File.
func (f *memFile) Truncate(size int64) error {
	if err := f.m.fault("truncate", f.path); err != nil {
		return err
	}
	f.m.mu.Lock()
	defer f.m.mu.Unlock()
	if err := f.usableLocked("truncate", f.canWrite); err != nil {
		return err
	}
	if size < 0 {
		return &fs.PathError{Op: "truncate", Path: f.name, Err: errMemNegative}
	}
	f.node.apply(memOp{off: size})
	return nil
}

// Size implements File.
func (f *memFile) Size() (int64, error) {
	f.m.mu.Lock()
	defer f.m.mu.Unlock()
	if err := f.usableLocked("stat", true); err != nil {
		return 0, err
	}
	return int64(len(f.node.data)), nil
}

// Sync implements File: the file's current content becomes durable. A
// failed (fault-injected) Sync makes nothing durable.
func (f *memFile) Sync() error {
	if err := f.m.fault("sync", f.path); err != nil {
		return err
	}
	f.m.mu.Lock()
	defer f.m.mu.Unlock()
	if err := f.usableLocked("sync", true); err != nil {
		return err
	}
	f.node.sync()
	f.m.syncs++
	return nil
}

// Close implements File. Closing twice, or after a simulated crash, returns
// an error wrapping fs.ErrClosed.
func (f *memFile) Close() error {
	f.m.mu.Lock()
	defer f.m.mu.Unlock()
	if err := f.usableLocked("close", true); err != nil {
		return err
	}
	f.closed = true
	delete(f.m.open, f)
	return nil
}

// Name implements File: the name the file was opened with.
func (f *memFile) Name() string { return f.name }

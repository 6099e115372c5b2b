package log

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// FS is the narrow file-system seam every byte the log stores goes through.
// OSFS is the real one; MemFS (memfs.go) keeps written-but-unsynced data apart
// so tests can simulate a power cut.
//
// Durability contract, as on Linux: data written to a File is durable only
// after File.Sync returns; a created, renamed or removed name is durable only
// after SyncDir on its parent directory returns.
type FS interface {
	// OpenFile opens name with os.O_* flags (O_RDONLY, O_RDWR, O_CREATE,
	// O_EXCL, O_TRUNC are honoured; O_APPEND is not used by the log).
	OpenFile(name string, flag int, perm os.FileMode) (File, error)
	// MkdirAll creates a directory and its parents.
	MkdirAll(path string, perm os.FileMode) error
	// ReadDir lists the names in a directory, sorted.
	ReadDir(path string) ([]string, error)
	// Stat reports the size of a file, or an error wrapping fs.ErrNotExist.
	Stat(name string) (size int64, err error)
	// Rename atomically replaces newpath with oldpath.
	Rename(oldpath, newpath string) error
	// Remove deletes a file or an empty directory.
	Remove(name string) error
	// RemoveAll deletes a directory tree.
	RemoveAll(path string) error
	// SyncDir makes the names in a directory durable.
	SyncDir(path string) error
	// Lock creates name if it is missing and takes an exclusive lock on
	// it, held until the returned closer is closed or the process dies.
	// A lock already held, by another process or by an earlier Lock in
	// this one, fails at once with an error wrapping ErrLocked.
	Lock(name string) (io.Closer, error)
}

// File is an open file of an FS. Writes are positional: the log always knows
// where its bytes go.
type File interface {
	ReadAt(p []byte, off int64) (int, error)
	WriteAt(p []byte, off int64) (int, error)
	// Truncate sets the file's size; growing it leaves a sparse hole of zeros.
	Truncate(size int64) error
	// Size reports the file's current size.
	Size() (int64, error)
	// Sync makes the file's data durable (fdatasync on Linux).
	Sync() error
	Close() error
	// Name returns the path the file was opened with.
	Name() string
}

// OSFS is the operating system's file system.
type OSFS struct{}

var _ FS = OSFS{}

// OpenFile implements FS.
func (OSFS) OpenFile(name string, flag int, perm os.FileMode) (File, error) {
	f, err := os.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return osFile{f}, nil
}

// MkdirAll implements FS.
func (OSFS) MkdirAll(path string, perm os.FileMode) error { return os.MkdirAll(path, perm) }

// ReadDir implements FS.
func (OSFS) ReadDir(path string) ([]string, error) {
	entries, err := os.ReadDir(path)
	if err != nil {
		return nil, err
	}
	names := make([]string, len(entries))
	for i, e := range entries {
		names[i] = e.Name()
	}
	return names, nil
}

// Stat implements FS.
func (OSFS) Stat(name string) (int64, error) {
	fi, err := os.Stat(name)
	if err != nil {
		return 0, err
	}
	return fi.Size(), nil
}

// Rename implements FS.
func (OSFS) Rename(oldpath, newpath string) error { return os.Rename(oldpath, newpath) }

// Remove implements FS.
func (OSFS) Remove(name string) error { return os.Remove(name) }

// RemoveAll implements FS.
func (OSFS) RemoveAll(path string) error { return os.RemoveAll(path) }

// SyncDir implements FS.
func (OSFS) SyncDir(path string) error {
	d, err := os.Open(path)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("sync directory %s: %w", path, err)
	}
	return nil
}

// Lock implements FS with flock(2): the lock belongs to the open file
// description, so a second Lock in the same process conflicts too, and the
// kernel releases it when the process dies, however it dies.
func (OSFS) Lock(name string) (io.Closer, error) {
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", name, err)
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	if err != nil {
		_ = f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("lock %s: %w", name, ErrLocked)
		}
		return nil, fmt.Errorf("lock %s: %w", name, err)
	}
	return f, nil // closing the file releases the lock
}

type osFile struct{ f *os.File }

func (o osFile) ReadAt(p []byte, off int64) (int, error)  { return o.f.ReadAt(p, off) }
func (o osFile) WriteAt(p []byte, off int64) (int, error) { return o.f.WriteAt(p, off) }
func (o osFile) Truncate(size int64) error                { return o.f.Truncate(size) }
func (o osFile) Close() error                             { return o.f.Close() }
func (o osFile) Name() string                             { return o.f.Name() }

func (o osFile) Size() (int64, error) {
	fi, err := o.f.Stat()
	if err != nil {
		return 0, err
	}
	return fi.Size(), nil
}

func (o osFile) Sync() error {
	for {
		err := syscall.Fdatasync(int(o.f.Fd()))
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil {
			return &fs.PathError{Op: "fdatasync", Path: o.f.Name(), Err: err}
		}
		return nil
	}
}

// WriteFileAtomic replaces name with data durably: write a temporary file,
// sync it, rename it over name and sync the directory. Checkpoint files of
// the log and of the metadata quorum are written this way.
func WriteFileAtomic(fsys FS, name string, data []byte) error {
	tmp := name + ".tmp"
	f, err := fsys.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	if _, err = f.WriteAt(data, 0); err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = fsys.Rename(tmp, name)
	}
	if err == nil {
		err = fsys.SyncDir(filepath.Dir(name))
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	return nil
}

// ReadFile reads a whole (small) file; a missing one gives an error wrapping
// fs.ErrNotExist.
func ReadFile(fsys FS, name string) ([]byte, error) {
	f, err := fsys.OpenFile(name, os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	size, err := f.Size()
	if err != nil {
		return nil, fmt.Errorf("stat %s: %w", name, err)
	}
	buf := make([]byte, size)
	if _, err := f.ReadAt(buf, 0); err != nil && size > 0 {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	return buf, nil
}

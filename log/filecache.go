package log

import (
	"container/list"
	"fmt"
	"os"
	"sync"
)

// fileCache keeps segment files open lazily and closes the least recently
// used idle ones beyond a limit, so thousands of partitions fit the process's
// open-file limit. A handle in use (acquired, not yet released) is never
// closed under its user.
type fileCache struct {
	fs   FS
	max  int
	mu   sync.Mutex
	open map[string]*cachedFile
	idle list.List // of *cachedFile with refs == 0, most recent at the back
}

type cachedFile struct {
	f      File
	path   string
	refs   int
	elem   *list.Element
	doomed bool // removed from the cache; close on last release
}

func newFileCache(fsys FS, max int) *fileCache {
	return &fileCache{fs: fsys, max: max, open: make(map[string]*cachedFile)}
}

// acquire returns an open read-write handle to path (creating the file when
// create is set). The caller must release it.
func (c *fileCache) acquire(path string, create bool) (*cachedFile, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if cf, ok := c.open[path]; ok {
		if cf.refs == 0 && cf.elem != nil {
			c.idle.Remove(cf.elem)
			cf.elem = nil
		}
		cf.refs++
		return cf, nil
	}
	c.evictLocked(c.max - 1)
	flag := os.O_RDWR
	if create {
		flag |= os.O_CREATE
	}
	f, err := c.fs.OpenFile(path, flag, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open segment %s: %w", path, err)
	}
	cf := &cachedFile{f: f, path: path, refs: 1}
	c.open[path] = cf
	return cf, nil
}

// release returns a handle acquired before.
func (c *fileCache) release(cf *cachedFile) {
	c.mu.Lock()
	defer c.mu.Unlock()
	cf.refs--
	if cf.refs > 0 {
		return
	}
	if cf.doomed {
		_ = cf.f.Close()
		return
	}
	cf.elem = c.idle.PushBack(cf)
	c.evictLocked(c.max)
}

// evictLocked closes idle handles until at most limit files are open.
func (c *fileCache) evictLocked(limit int) {
	for len(c.open) > limit && c.idle.Len() > 0 {
		cf := c.idle.Remove(c.idle.Front()).(*cachedFile)
		cf.elem = nil
		delete(c.open, cf.path)
		_ = cf.f.Close()
	}
}

// drop forgets path (before it is removed or renamed), closing the handle
// now if idle or when its last user releases it.
func (c *fileCache) drop(path string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	cf, ok := c.open[path]
	if !ok {
		return
	}
	delete(c.open, path)
	if cf.refs == 0 {
		if cf.elem != nil {
			c.idle.Remove(cf.elem)
			cf.elem = nil
		}
		_ = cf.f.Close()
		return
	}
	cf.doomed = true
}

// closeAll closes every idle handle (on manager close).
func (c *fileCache) closeAll() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.evictLocked(0)
}

// openCount is the number of handles the cache holds open.
func (c *fileCache) openCount() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.open)
}

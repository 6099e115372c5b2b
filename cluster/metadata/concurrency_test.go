package metadata

import (
	"sync"
	"sync/atomic"
	"testing"
)

// TestConcurrentReaders publishes images while readers walk them: under
// -race it shows that building a new image never writes to a published
// one.
func TestConcurrentReaders(t *testing.T) {
	entries := history(t, 7, 300)
	var current atomic.Pointer[Image]
	current.Store(Empty())
	var done atomic.Bool
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !done.Load() {
				img := current.Load()
				_ = img.Records()
				for _, tp := range img.Topics() {
					if p, ok := tp.Partition(0); ok {
						for _, r := range p.ISR {
							_ = r
						}
						for _, r := range p.ELR {
							_ = r
						}
					}
				}
			}
		}()
	}
	b := NewBuilder(current.Load())
	for i, entry := range entries {
		for _, rec := range entry {
			if err := b.Apply(rec, int64(i)); err != nil {
				t.Error(err)
			}
		}
		current.Store(b.Image())
	}
	done.Store(true)
	wg.Wait()
	if !current.Load().Equal(replay(t, entries)) {
		t.Fatal("the concurrently built image differs")
	}
}

package partition

import (
	"log/slog"
	"sync"
	"sync/atomic"
)

// Storage operations whose health a partition tracks.
const (
	storageAppend = "append"
	storageFlush  = "flush"
	storageRead   = "read"
	storageLookup = "lookup" // ListOffsets by timestamp
)

// storageHealth says, per storage operation of one partition, whether it
// is failing (its last outcome was a storage error), so that a full disk
// or a corrupt batch is logged once when the operation starts failing and
// once when it works again, never once per request. Pure: it only
// decides; the caller logs. Safe for concurrent use: reads and lookups run
// on the requesters' goroutines, appends and flushes in the actor.
type storageHealth struct {
	anyFailing atomic.Bool // fast path: a success changes nothing while false
	mu         sync.Mutex
	failing    map[string]bool
}

// note records the outcome of op (err nil: it worked) and reports whether
// op entered (failing) or left (recovered) the failing state.
func (h *storageHealth) note(op string, err error) (failing, recovered bool) {
	if err == nil && !h.anyFailing.Load() {
		return false, false
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	was := h.failing[op]
	switch {
	case err != nil && !was:
		if h.failing == nil {
			h.failing = map[string]bool{}
		}
		h.failing[op] = true
		h.anyFailing.Store(true)
		return true, false
	case err == nil && was:
		delete(h.failing, op)
		h.anyFailing.Store(len(h.failing) > 0)
		return false, true
	}
	return false, false
}

// noteStorage records op's outcome on the board and logs a change of
// state: an error when op starts failing, an info line when it recovers.
func (b *Board) noteStorage(logger *slog.Logger, op string, err error) {
	failing, recovered := b.storage.note(op, err)
	switch {
	case failing:
		logger.Error("partition storage failing; requests get KAFKA_STORAGE_ERROR until it works again",
			"op", op, "err", err)
	case recovered:
		logger.Info("partition storage recovered", "op", op)
	}
}

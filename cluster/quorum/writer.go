package quorum

import (
	"sync"

	"go.etcd.io/raft/v3"
	pb "go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
)

// writeJob is one write the node hands its writer, done in the order
// handed: raft's MsgStorageAppend (entries, hard state, a received
// snapshot) or a snapshot of the applied image to take.
type writeJob struct {
	append *pb.Message
	snap   *snapshotJob
}

// snapshotJob is a snapshot of the image at index to write, then the log
// to compact up to it.
type snapshotJob struct {
	index uint64
	cs    *pb.ConfState
	data  []byte
}

// writer does the node's storage writes, in order, off the caller's
// goroutine once started (Node.Async), so that a slow fsync delays no raft
// tick, message or election: raft's asynchronous storage writes
// (raft.Config.AsyncStorageWrites), with writes taken together where they
// can be (one hard-state write and one fsync wait for all the appends
// queued meanwhile). Unstarted, every write is done in the calling
// goroutine (tests, tools, a node without an actor).
//
// A write that fails stays first in the queue, and nothing after it is
// written, until retry: raft's writes must become durable in the order
// raft handed them.
type writer struct {
	st *Storage

	mu      sync.Mutex
	cond    *sync.Cond
	queue   []writeJob // not yet durable, oldest first
	done    []writeJob // durable, not yet collected by the node
	err     error      // why queue[0] failed; nothing is written until retry
	retry   bool       // a retry was asked for and has not run yet
	started bool
	closed  bool
	exited  chan struct{}
	wake    func()
}

func newWriter(st *Storage) *writer {
	w := &writer{st: st}
	w.cond = sync.NewCond(&w.mu)
	return w
}

// start runs the writes on a goroutine of their own from now on; wake is
// called from it whenever a write finished or failed.
func (w *writer) start(wake func()) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.started || w.closed {
		return
	}
	w.started, w.wake, w.exited = true, wake, make(chan struct{})
	go w.run()
}

// close stops the goroutine once the write under way is done; queued
// writes are dropped (nothing of them was acknowledged).
func (w *writer) close() {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return
	}
	w.closed = true
	w.cond.Broadcast()
	started := w.started
	w.mu.Unlock()
	if started {
		<-w.exited
	}
}

// submit queues a job. Unstarted, it writes the queue at once.
func (w *writer) submit(j writeJob) {
	w.mu.Lock()
	w.queue = append(w.queue, j)
	started := w.started
	w.cond.Broadcast()
	w.mu.Unlock()
	if !started {
		w.writeQueued()
	}
}

// askRetry asks for the failed write to be tried again (after
// Storage.Recover). Unstarted, it retries at once. It reports whether a
// retry was started (false: none failed, or one is under way).
func (w *writer) askRetry() bool {
	w.mu.Lock()
	if w.err == nil || w.retry {
		w.mu.Unlock()
		return false
	}
	w.retry = true
	started := w.started
	w.cond.Broadcast()
	w.mu.Unlock()
	if !started {
		w.writeQueued()
	}
	return true
}

// retrying reports whether a retry was asked for and has not finished.
func (w *writer) retrying() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.retry
}

// collect returns the jobs that became durable since the last call, in
// order, whether a retry is under way (its outcome not known yet: err is
// nil then), and the error the oldest queued job failed with (nil when
// none), all read together: a retry that ends between two separate looks
// would otherwise pass for a success.
func (w *writer) collect() (done []writeJob, retrying bool, err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	done = w.done
	w.done = nil
	if w.retry {
		return done, true, nil
	}
	return done, false, w.err
}

// pending reports whether jobs are waiting to be collected.
func (w *writer) pending() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.done) > 0
}

func (w *writer) run() {
	defer close(w.exited)
	for {
		w.mu.Lock()
		for !w.closed && (len(w.queue) == 0 || (w.err != nil && !w.retry)) {
			w.cond.Wait()
		}
		if w.closed {
			w.mu.Unlock()
			return
		}
		w.mu.Unlock()
		w.writeQueued()
		w.mu.Lock()
		wake := w.wake
		w.mu.Unlock()
		wake()
	}
}

// writeQueued writes what is queued, until the queue is empty or a write
// fails. Only one goroutine runs it at a time (the writer's, or the
// caller's while unstarted).
func (w *writer) writeQueued() {
	for {
		w.mu.Lock()
		if len(w.queue) == 0 || (w.err != nil && !w.retry) {
			w.mu.Unlock()
			return
		}
		recovering := w.err != nil
		batch := w.nextBatch()
		w.mu.Unlock()

		var err error
		if recovering {
			err = w.st.Recover()
		}
		if err == nil {
			err = w.write(batch)
		}

		w.mu.Lock()
		w.retry = false
		if err != nil {
			w.err = err
			w.mu.Unlock()
			return
		}
		w.err = nil
		w.queue = w.queue[len(batch):]
		w.done = append(w.done, batch...)
		w.mu.Unlock()
	}
}

// nextBatch is the queued jobs to write together: the appends at the head
// of the queue, or the snapshot there alone. w.mu is held.
func (w *writer) nextBatch() []writeJob {
	if w.queue[0].snap != nil {
		return w.queue[:1:1]
	}
	n := 1
	for n < len(w.queue) && w.queue[n].append != nil {
		n++
	}
	return w.queue[:n:n]
}

// write makes a batch durable: each append's snapshot and entries in
// order, then the newest hard state among them, fsynced before it
// returns. A failed batch is written again whole by the retry; every step
// of it may be repeated.
func (w *writer) write(batch []writeJob) error {
	if j := batch[0]; j.snap != nil {
		_, err := w.st.CreateSnapshot(j.snap.index, j.snap.cs, j.snap.data)
		if err == raft.ErrSnapOutOfDate {
			return nil // a retry after the snapshot was written
		}
		return err
	}
	var hs *pb.HardState
	var flushTo int64 = -1
	for _, j := range batch {
		m := j.append
		if snap := m.GetSnapshot(); snap != nil && !raft.IsEmptySnap(snap) {
			if err := w.st.ApplySnapshot(snap); err != nil && err != raft.ErrSnapOutOfDate {
				return err
			}
		}
		end, err := w.st.write(m.GetEntries())
		if err != nil {
			return err
		}
		flushTo = max(flushTo, end)
		if m.Term != nil || m.Vote != nil || m.Commit != nil {
			hs = &pb.HardState{Term: new(m.GetTerm()), Vote: new(m.GetVote()), Commit: new(m.GetCommit())}
		}
	}
	// Entries before the hard state: a crash between the two never leaves
	// a commit index past the durable log.
	if flushTo >= 0 {
		if err := w.st.waitFlushed(flushTo); err != nil {
			return err
		}
	}
	if hs != nil && !raft.IsEmptyHardState(hs) && !proto.Equal(hs, w.st.HardState()) {
		return w.st.SetHardState(hs)
	}
	return nil
}

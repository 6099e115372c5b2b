package partition

import (
	"context"
	"sync"

	"github.com/asynkron/protoactor-go/actor"
)

// Inbox is a PID whose messages queue up for a goroutine outside any actor
// (a Kafka request's deferred answer): the caller sends requests to actors
// with the inbox as the sender from a handler that must not block, and
// collects the answers later with Receive. Unlike a future it takes any
// number of answers, in arrival order, and waits under a context. A
// request to an actor that no longer exists is answered by protoactor with
// *actor.DeadLetterResponse, which arrives here like any other answer but
// does not say which actor is gone (the pinned protoactor leaves its
// Target nil), and a request still in an actor's mailbox when it stops
// gets no answer at all. Watch the actors the inbox waits on: an
// *actor.Terminated naming one arrives once it is gone (at once if it is
// gone already), after every answer it sent before it stopped.
// Close it when done: until then it is registered in the actor system.
type Inbox struct {
	registry *actor.ProcessRegistryValue
	pid      *actor.PID

	mu     sync.Mutex
	queue  []any
	closed bool
	signal chan struct{} // capacity 1: something was queued
	nextID uint64
	// watched are the PIDs Watch was called with, unwatched on Close.
	watched []*actor.PID
}

// NewInbox registers a new inbox in system.
func NewInbox(system *actor.ActorSystem) *Inbox {
	in := &Inbox{registry: system.ProcessRegistry, signal: make(chan struct{}, 1)}
	in.pid, _ = system.ProcessRegistry.Add(in, "inbox"+system.ProcessRegistry.NextId())
	return in
}

// PID is where answers go: pass it as the sender or ReplyTo.
func (in *Inbox) PID() *actor.PID { return in.pid }

// NextID returns a request id unique within the inbox, counting from 1.
// Not safe for concurrent use with itself.
func (in *Inbox) NextID() uint64 {
	in.nextID++
	return in.nextID
}

// Receive returns the oldest queued message, waiting for one until ctx is
// done.
func (in *Inbox) Receive(ctx context.Context) (any, error) {
	for {
		in.mu.Lock()
		if len(in.queue) > 0 {
			m := in.queue[0]
			in.queue[0] = nil
			in.queue = in.queue[1:]
			in.mu.Unlock()
			return m, nil
		}
		in.mu.Unlock()
		select {
		case <-in.signal:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// Watch asks pid's actor to tell the inbox when it stops: an
// *actor.Terminated with Who equal to pid arrives (at once when the actor
// is gone already). Watching the same PID again does nothing.
func (in *Inbox) Watch(pid *actor.PID) {
	in.mu.Lock()
	for _, w := range in.watched {
		if w.Equal(pid) {
			in.mu.Unlock()
			return
		}
	}
	in.watched = append(in.watched, pid)
	in.mu.Unlock()
	proc, _ := in.registry.Get(pid) // dead letters when gone: they answer Terminated
	proc.SendSystemMessage(pid, &actor.Watch{Watcher: in.pid})
}

// Alive reports whether pid names a local actor that still exists.
func (in *Inbox) Alive(pid *actor.PID) bool {
	_, ok := in.registry.GetLocal(pid.Id)
	return ok
}

// Close unregisters the inbox and unwatches what it watched; later
// messages to it go to dead letters.
func (in *Inbox) Close() {
	in.mu.Lock()
	if in.closed {
		in.mu.Unlock()
		return
	}
	in.closed = true
	in.queue = nil
	in.registry.Remove(in.pid)
	watched := in.watched
	in.watched = nil
	in.mu.Unlock()
	for _, pid := range watched {
		if proc, ok := in.registry.GetLocal(pid.Id); ok {
			proc.SendSystemMessage(pid, &actor.Unwatch{Watcher: in.pid})
		}
	}
}

// SendUserMessage queues message (unwrapped from its envelope); it never
// blocks. It implements actor.Process.
func (in *Inbox) SendUserMessage(_ *actor.PID, message any) {
	_, m, _ := actor.UnwrapEnvelope(message)
	in.mu.Lock()
	if in.closed {
		in.mu.Unlock()
		return
	}
	in.queue = append(in.queue, m)
	in.mu.Unlock()
	select {
	case in.signal <- struct{}{}:
	default:
	}
}

// SendSystemMessage queues an *actor.Terminated (see Watch) and ignores
// other system messages. It implements actor.Process.
func (in *Inbox) SendSystemMessage(pid *actor.PID, message any) {
	if t, ok := message.(*actor.Terminated); ok {
		in.SendUserMessage(pid, t)
	}
}

// Stop closes the inbox. It implements actor.Process.
func (in *Inbox) Stop(*actor.PID) { in.Close() }

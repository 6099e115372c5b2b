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
// *actor.DeadLetterResponse, which arrives here like any other answer.
// Close it when done: until then it is registered in the actor system.
type Inbox struct {
	registry *actor.ProcessRegistryValue
	pid      *actor.PID

	mu     sync.Mutex
	queue  []any
	closed bool
	signal chan struct{} // capacity 1: something was queued
	nextID uint64
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

// Close unregisters the inbox; later messages to it go to dead letters.
func (in *Inbox) Close() {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.closed {
		return
	}
	in.closed = true
	in.queue = nil
	in.registry.Remove(in.pid)
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

// SendSystemMessage ignores system messages. It implements actor.Process.
func (in *Inbox) SendSystemMessage(*actor.PID, any) {}

// Stop closes the inbox. It implements actor.Process.
func (in *Inbox) Stop(*actor.PID) { in.Close() }

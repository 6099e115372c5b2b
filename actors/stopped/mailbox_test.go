package stopped

import (
	"sync"
	"testing"

	"github.com/asynkron/protoactor-go/actor"
)

// request is a test request: answered to its sender, or to ReplyTo when
// set (a reply PID in the body, sent without a sender).
type request struct {
	ID      int
	ReplyTo *actor.PID
}

// answer is what a request gets, from the actor (Gone false) or from the
// mailbox after the stop.
type answer struct {
	ID   int
	Gone bool
}

// recorder is a Process that keeps what it is sent.
type recorder struct {
	mu  sync.Mutex
	got []any
	ch  chan struct{}
}

func newRecorder(t *testing.T, system *actor.ActorSystem) (*recorder, *actor.PID) {
	r := &recorder{ch: make(chan struct{}, 100)}
	pid, _ := system.ProcessRegistry.Add(r, "recorder"+system.ProcessRegistry.NextId())
	t.Cleanup(func() { system.ProcessRegistry.Remove(pid) })
	return r, pid
}

func (r *recorder) SendUserMessage(_ *actor.PID, m any) {
	_, msg, _ := actor.UnwrapEnvelope(m)
	r.mu.Lock()
	r.got = append(r.got, msg)
	r.mu.Unlock()
	r.ch <- struct{}{}
}
func (r *recorder) SendSystemMessage(*actor.PID, any) {}
func (r *recorder) Stop(*actor.PID)                   {}

func (r *recorder) messages() []any {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]any(nil), r.got...)
}

// handled signals each user message the mailbox has finished with (a
// MailboxMiddleware: called after the invoker returns).
type handled chan any

func (h handled) MailboxStarted()       {}
func (h handled) MessagePosted(any)     {}
func (h handled) MessageReceived(m any) { h <- m }
func (h handled) MailboxEmpty()         {}
func isUser(m any) bool                 { _, msg, _ := actor.UnwrapEnvelope(m); _, ok := msg.(*request); return ok }
func (h handled) waitUser(t *testing.T) { // the next user message done
	t.Helper()
	for m := range h {
		if isUser(m) {
			return
		}
	}
}

// echo answers each request to its sender or ReplyTo.
func echo(ctx actor.Context) {
	if m, ok := ctx.Message().(*request); ok {
		to := m.ReplyTo
		if to == nil {
			to = ctx.Sender()
		}
		ctx.Send(to, &answer{ID: m.ID})
	}
}

// goneAnswer is the test actors' Answer.
func goneAnswer(msg any, sender *actor.PID) (*actor.PID, any) {
	m, ok := msg.(*request)
	if !ok {
		return nil, nil
	}
	if m.ReplyTo != nil {
		return m.ReplyTo, &answer{ID: m.ID, Gone: true}
	}
	return sender, &answer{ID: m.ID, Gone: true}
}

// queueThenStop suspends pid's mailbox, queues a request with a sender (1)
// and one with a reply PID in its body (2), stops the actor (system
// messages are still handled while suspended) and resumes the mailbox,
// so that both requests meet a stopped actor.
func queueThenStop(t *testing.T, system *actor.ActorSystem, pid, to *actor.PID) actor.Process {
	t.Helper()
	proc, _ := system.ProcessRegistry.Get(pid)
	proc.SendSystemMessage(pid, &actor.SuspendMailbox{})
	system.Root.RequestWithCustomSender(pid, &request{ID: 1}, to)
	system.Root.Send(pid, &request{ID: 2, ReplyTo: to})
	if err := system.Root.StopFuture(pid).Wait(); err != nil {
		t.Fatal(err)
	}
	proc.SendSystemMessage(pid, &actor.ResumeMailbox{})
	return proc
}

// TestProtoactorDropsQueuedRequests pins down what the pinned protoactor
// does, which this package exists for: requests in the mailbox when the
// actor stops are dropped without an answer, whether sent with a sender
// or with a reply PID in the body, as is one posted to the stopped
// actor's process later; through the PID after the stop, one with a
// sender gets a DeadLetterResponse (not saying which request it answers)
// and one without gets nothing.
func TestProtoactorDropsQueuedRequests(t *testing.T) {
	system := actor.NewActorSystem()
	rec, to := newRecorder(t, system)
	done := make(handled, 100)
	pid := system.Root.Spawn(actor.PropsFromFunc(echo, actor.WithMailbox(actor.Unbounded(done))))
	proc := queueThenStop(t, system, pid, to)
	done.waitUser(t)
	done.waitUser(t)
	proc.SendUserMessage(pid, &actor.MessageEnvelope{Message: &request{ID: 3}, Sender: to})
	done.waitUser(t)
	if got := rec.messages(); len(got) != 0 {
		t.Fatalf("queued requests answered: %v", got)
	}
	system.Root.RequestWithCustomSender(pid, &request{ID: 4}, to) // dead letters, synchronously
	system.Root.Send(pid, &request{ID: 5, ReplyTo: to})
	got := rec.messages()
	if len(got) != 1 {
		t.Fatalf("after the stop: %v, want one DeadLetterResponse", got)
	}
	if _, ok := got[0].(*actor.DeadLetterResponse); !ok {
		t.Fatalf("after the stop: %T, want *actor.DeadLetterResponse", got[0])
	}
}

// TestMailboxAnswersAfterStop checks that the package's mailbox answers
// the requests queued at the stop (both kinds) and one posted to the
// process later, and that the stopped actor never sees them.
func TestMailboxAnswersAfterStop(t *testing.T) {
	system := actor.NewActorSystem()
	rec, to := newRecorder(t, system)
	pid := system.Root.Spawn(actor.PropsFromFunc(echo, actor.WithMailbox(Mailbox(system, goneAnswer))))
	system.Root.RequestWithCustomSender(pid, &request{ID: 0}, to)
	<-rec.ch // running: answered by the actor
	proc := queueThenStop(t, system, pid, to)
	proc.SendUserMessage(pid, &actor.MessageEnvelope{Message: &request{ID: 3}, Sender: to})
	for range 3 {
		<-rec.ch
	}
	want := map[int]bool{0: false, 1: true, 2: true, 3: true}
	got := rec.messages()
	if len(got) != len(want) {
		t.Fatalf("answers %v, want 4", got)
	}
	for _, m := range got {
		a := m.(*answer)
		if gone, ok := want[a.ID]; !ok || gone != a.Gone {
			t.Errorf("answer %+v, want gone=%v", a, gone)
		}
	}
}

package stopped

import (
	"testing"

	"github.com/asynkron/protoactor-go/actor"
)

// benchmarkMailbox sends b.N requests to a counting actor and waits for
// the last: the per-message cost of a mailbox.
func benchmarkMailbox(b *testing.B, mailbox func(*actor.ActorSystem) actor.MailboxProducer) {
	system := actor.NewActorSystem()
	done := make(chan struct{})
	n := 0
	pid := system.Root.Spawn(actor.PropsFromFunc(func(ctx actor.Context) {
		if _, ok := ctx.Message().(*request); ok {
			if n++; n == b.N {
				close(done)
			}
		}
	}, actor.WithMailbox(mailbox(system))))
	proc, _ := system.ProcessRegistry.Get(pid)
	m := &request{}
	b.ResetTimer()
	for range b.N {
		proc.SendUserMessage(pid, m)
	}
	<-done
}

func BenchmarkMailboxUnbounded(b *testing.B) {
	benchmarkMailbox(b, func(*actor.ActorSystem) actor.MailboxProducer { return actor.Unbounded() })
}

func BenchmarkMailboxAnswering(b *testing.B) {
	benchmarkMailbox(b, func(s *actor.ActorSystem) actor.MailboxProducer { return Mailbox(s, goneAnswer) })
}

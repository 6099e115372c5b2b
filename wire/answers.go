package wire

import (
	"context"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/weirmq/weir/actors/partition"
)

// awaitAnswers collects the partition actors' answers to the requests
// sent with ids in slots, until every slot is answered, ctx ends or wait
// passes. answerID names the request an inbox message answers (false: not
// an answer of this kind); apply copies the answer into its slot. An actor
// that is gone fails one slot with NOT_LEADER_OR_FOLLOWER (a dead letter
// does not say which); slots still open at the end get REQUEST_TIMED_OUT
// through fail.
func awaitAnswers[S any](ctx context.Context, inbox *partition.Inbox, wait time.Duration, slots map[uint64]S,
	answerID func(m any) (uint64, bool), apply func(slot S, m any), fail func(slot S, code int16)) {
	wctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	for len(slots) > 0 {
		m, err := inbox.Receive(wctx)
		if err != nil {
			break
		}
		if _, gone := m.(*actor.DeadLetterResponse); gone {
			for id, s := range slots {
				fail(s, kerr.NotLeaderForPartition.Code)
				delete(slots, id)
				break
			}
			continue
		}
		if id, ok := answerID(m); ok {
			if s, open := slots[id]; open {
				delete(slots, id)
				apply(s, m)
			}
		}
	}
	for _, s := range slots {
		fail(s, kerr.RequestTimedOut.Code)
	}
}

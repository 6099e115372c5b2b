package partition

import (
	"github.com/asynkron/protoactor-go/actor"
)

// parkedWatch is a WatchHighWatermark waiting for its condition.
type parkedWatch struct {
	req WatchHighWatermark
	// epoch and role are the replica's when the watch arrived: any change
	// fires it.
	epoch int32
	role  Role
}

// watchKey names a watch: its watcher and the watcher's id.
type watchKey struct {
	owner string
	id    uint64
}

func keyOf(pid *actor.PID, id uint64) watchKey {
	if pid == nil {
		return watchKey{id: id}
	}
	return watchKey{owner: pid.Address + "/" + pid.Id, id: id}
}

// fired reports whether w's condition holds for a replica at st.
func (w *parkedWatch) fired(st *Status) bool {
	return st.HighWatermark > w.req.Above || st.LogStartOffset > w.req.Above ||
		st.LeaderEpoch != w.epoch || st.Role != w.role ||
		(w.req.LogEnd && st.replicaEnd > w.req.Above)
}

// onWatch parks m, or answers it at once when its condition already holds
// or the replica is not running.
func (a *partitionActor) onWatch(ctx actor.Context, m *WatchHighWatermark) {
	if m.ReplyTo == nil {
		return
	}
	if a.r == nil {
		ctx.Send(m.ReplyTo, &HighWatermarkReached{ID: m.ID, HighWatermark: -1})
		return
	}
	st := a.r.Status()
	w := &parkedWatch{req: *m, epoch: st.LeaderEpoch, role: st.Role}
	if w.fired(&st) {
		ctx.Send(m.ReplyTo, &HighWatermarkReached{ID: m.ID, HighWatermark: st.HighWatermark})
		return
	}
	if a.watches == nil {
		a.watches = map[watchKey]*parkedWatch{}
	}
	a.watches[keyOf(m.ReplyTo, m.ID)] = w
}

// onCancelWatch drops a parked watch.
func (a *partitionActor) onCancelWatch(m *CancelWatch) {
	delete(a.watches, keyOf(m.ReplyTo, m.ID))
}

// wakeWatches answers the parked watches whose condition now holds, and,
// with expire, those whose deadline the last tick passed; all with stop.
func (a *partitionActor) wakeWatches(ctx actor.Context, expire, stop bool) {
	if len(a.watches) == 0 {
		return
	}
	var st Status
	if a.r != nil {
		st = a.r.Status()
	}
	for k, w := range a.watches {
		switch {
		case stop || a.r == nil || w.fired(&st):
			ctx.Send(w.req.ReplyTo, &HighWatermarkReached{ID: w.req.ID, HighWatermark: st.HighWatermark})
		case expire && w.req.DeadlineMs > 0 && w.req.DeadlineMs <= a.tickMs:
			ctx.Send(w.req.ReplyTo, &HighWatermarkReached{ID: w.req.ID, HighWatermark: st.HighWatermark, Expired: true})
		default:
			continue
		}
		delete(a.watches, k)
	}
}

package brokerbench

import (
	"context"
)

// Target names a broker setup under measurement.
type Target string

// The brokers a run measures.
const (
	// Weir is `weir serve` with the topic defaults: no fsync
	// (flush.messages unset), acknowledgements after the append.
	Weir Target = "weir"
	// WeirFsync is `weir serve` with topics created with
	// flush.messages=1, the group-commit fsync policy: an acknowledgement
	// waits for the fsync round that made the batch durable.
	WeirFsync Target = "weir flush.messages=1"
	// KfakeDataDir is franz-go's kfake in this process with
	// kfake.DataDir: the reference without fsync.
	KfakeDataDir Target = "kfake DataDir"
	// KfakeSync is kfake with kfake.DataDir and kfake.SyncWrites (an fsync
	// per batch): the reference with fsync.
	KfakeSync Target = "kfake DataDir+SyncWrites"
)

// isWeir reports whether t is a `weir serve` child process.
func (t Target) isWeir() bool { return t == Weir || t == WeirFsync }

// topicConfigs returns the configs t's topics are created with.
func (t Target) topicConfigs() map[string]*string {
	if t != WeirFsync {
		return nil
	}
	one := "1"
	return map[string]*string{"flush.messages": &one}
}

// start starts a fresh broker of target t with its data in dir.
func (r *runner) start(ctx context.Context, t Target, dir string) (broker, error) {
	switch t {
	case KfakeDataDir:
		return startKfake(dir, false)
	case KfakeSync:
		return startKfake(dir, true)
	default:
		return startWeir(ctx, r.cfg.WeirPath, dir, r.cfg.WeirArgs, r.cfg.WeirEnv, r.cfg.StartTimeout)
	}
}

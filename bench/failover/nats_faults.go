package failover

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/weirmq/weir/bench/cluster"
)

// natsFaultSkip says why fault f does not apply to the NATS reference
// ("" when it does).
func natsFaultSkip(f Fault) string {
	switch f {
	case FaultLeader, FaultController, FaultTwo, FaultAll, FaultPause, FaultRolling:
		return ""
	}
	return fmt.Sprintf("fault %s is not built for the NATS reference", f)
}

// streamLead is one stream's leader as its info named it.
type streamLead struct {
	leader int // server index, -1 when none
	since  time.Time
}

// natsFaulter injects faults into the NATS servers. Victims are reported
// as server numbers 1 to n (server index + 1), as the table shows weir's
// node ids.
type natsFaulter struct {
	cfg     Config
	servers *cluster.NATSServers
	streams []string
	// ctl holds one control connection per server, each to that server
	// alone, so a poll goes through a server chosen to be up.
	ctl []jetstream.JetStream
	// conns are ctl's connections.
	conns []*nats.Conn
	http  *http.Client

	mu     sync.Mutex
	paused int // the server under SIGSTOP, -1 when none
}

// newNATSFaulter connects its control connections.
func newNATSFaulter(cfg Config, servers *cluster.NATSServers, streams []string) (*natsFaulter, error) {
	fl := &natsFaulter{cfg: cfg, servers: servers, streams: streams, paused: -1, http: &http.Client{Timeout: time.Second}}
	for i := range servers.Len() {
		conn, err := nats.Connect(servers.URL(i), nats.DontRandomize(), nats.MaxReconnects(-1), nats.ReconnectWait(50*time.Millisecond),
			nats.RetryOnFailedConnect(true))
		if err != nil {
			fl.close()
			return nil, fmt.Errorf("nats control connection to %s: %w", servers.Name(i), err)
		}
		fl.conns = append(fl.conns, conn)
		js, err := jetstream.New(conn)
		if err != nil {
			fl.close()
			return nil, err
		}
		fl.ctl = append(fl.ctl, js)
	}
	return fl, nil
}

func (fl *natsFaulter) close() {
	for _, c := range fl.conns {
		c.Close()
	}
}

// up reports whether server i runs and is not paused.
func (fl *natsFaulter) up(i int) bool {
	fl.mu.Lock()
	defer fl.mu.Unlock()
	return i != fl.paused && fl.servers.Running(i)
}

// via is a server that is up and connected, -1 when none.
func (fl *natsFaulter) via() int {
	for i := range fl.servers.Len() {
		if fl.up(i) && fl.conns[i].IsConnected() {
			return i
		}
	}
	return -1
}

// leads asks, through a server that is up, each stream's info for its
// leader.
func (fl *natsFaulter) leads(ctx context.Context) ([]streamLead, error) {
	v := fl.via()
	if v < 0 {
		return nil, errors.New("no NATS server up and connected")
	}
	out := make([]streamLead, len(fl.streams))
	for k, name := range fl.streams {
		out[k] = streamLead{leader: -1}
		cctx, cancel := context.WithTimeout(ctx, 250*time.Millisecond)
		st, err := fl.ctl[v].Stream(cctx, name)
		cancel()
		if err != nil {
			continue
		}
		ci := st.CachedInfo().Cluster
		if ci == nil || ci.Leader == "" {
			continue
		}
		out[k].leader = fl.servers.Index(ci.Leader)
		if ci.LeaderSince != nil {
			out[k].since = *ci.LeaderSince
		}
	}
	return out, nil
}

// natsLedAnew reports whether every stream has a leader that is up and
// either not a victim or a victim elected after at (its leadership since
// after the fault).
func natsLedAnew(leads []streamLead, victims []int, at time.Time, up func(int) bool) bool {
	for _, l := range leads {
		if l.leader < 0 || !up(l.leader) {
			return false
		}
		if slices.Contains(victims, l.leader) && !l.since.After(at) {
			return false
		}
	}
	return true
}

// mostLeading is the server leading the most streams (the lowest on a tie).
func mostLeading(leads []streamLead, n int) int {
	counts := make([]int, n)
	for _, l := range leads {
		if l.leader >= 0 {
			counts[l.leader]++
		}
	}
	best := 0
	for i, c := range counts {
		if c > counts[best] {
			best = i
		}
	}
	return best
}

// current polls until every stream has a leader that is up.
func (fl *natsFaulter) current(ctx context.Context) ([]streamLead, error) {
	var leads []streamLead
	_, err := cluster.PollUntil(ctx, fl.cfg.RoundTimeout, fl.cfg.PollEvery, "every NATS stream led before the fault", func(ctx context.Context) (bool, error) {
		var err error
		leads, err = fl.leads(ctx)
		return err == nil && natsLedAnew(leads, nil, time.Time{}, fl.up), nil
	})
	return leads, err
}

// jsz is the part of a server's /jsz the faulter reads.
type jsz struct {
	Meta *struct {
		Leader string `json:"leader"`
	} `json:"meta_cluster"`
}

// metaLeader asks a server that is up (its monitoring endpoint) for the
// JetStream meta leader: the index of a server that is up, or -1.
func (fl *natsFaulter) metaLeader(ctx context.Context, except int) int {
	for i := range fl.servers.Len() {
		if !fl.up(i) {
			continue
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, fl.servers.MonitorURL(i)+"/jsz", nil)
		if err != nil {
			return -1
		}
		resp, err := fl.http.Do(req)
		if err != nil {
			continue
		}
		var j jsz
		err = json.NewDecoder(resp.Body).Decode(&j)
		resp.Body.Close()
		if err != nil || j.Meta == nil {
			continue
		}
		if l := fl.servers.Index(j.Meta.Leader); l >= 0 && l != except && fl.up(l) {
			return l
		}
	}
	return -1
}

// inject runs fault f on the NATS servers and returns once they are whole
// again: every server running, every stream led with both replicas
// current.
func (fl *natsFaulter) inject(ctx context.Context, f Fault) (faultOutcome, error) {
	out := faultOutcome{elected: -1}
	before, err := fl.current(ctx)
	if err != nil {
		return out, err
	}
	n := fl.servers.Len()
	switch f {
	case FaultLeader:
		err = fl.killRestart(ctx, &out, []int{mostLeading(before, n)}, false, false)
	case FaultController:
		var v int
		_, err = cluster.PollUntil(ctx, fl.cfg.RoundTimeout, fl.cfg.PollEvery, "a NATS meta leader", func(ctx context.Context) (bool, error) {
			v = fl.metaLeader(ctx, -1)
			return v >= 0, nil
		})
		if err == nil {
			err = fl.killRestart(ctx, &out, []int{v}, false, true)
		}
	case FaultTwo:
		v := mostLeading(before, n)
		err = fl.killRestart(ctx, &out, []int{v, (v + 1) % n}, true, false)
	case FaultAll:
		all := make([]int, n)
		for i := range all {
			all[i] = i
		}
		err = fl.killRestart(ctx, &out, all, true, false)
	case FaultPause:
		err = fl.pause(ctx, &out, mostLeading(before, n))
	case FaultRolling:
		err = fl.rolling(ctx, &out)
	default:
		err = errors.New(natsFaultSkip(f))
	}
	if err != nil {
		return out, err
	}
	at, err := fl.waitWhole(ctx)
	if err != nil {
		out.problems = append(out.problems, fmt.Sprintf("after the fault: %v", err))
		at = time.Now()
	}
	out.recovered = at
	return out, nil
}

// victimIDs are servers' numbers (index + 1) for faultOutcome.victims.
func victimIDs(v []int) []int32 {
	out := make([]int32, len(v))
	for i, x := range v {
		out[i] = int32(x + 1)
	}
	return out
}

// killRestart SIGKILLs victims at once and starts them again: at once
// when together, else once every stream has a new leader (and, for
// controller, a new meta leader shows).
func (fl *natsFaulter) killRestart(ctx context.Context, out *faultOutcome, victims []int, together, controller bool) error {
	out.victims = victimIDs(victims)
	out.at = time.Now()
	for _, v := range victims {
		if err := fl.servers.Signal(v, syscall.SIGKILL); err != nil {
			return err
		}
	}
	for _, v := range victims {
		fl.servers.Kill(v) // reap
	}
	if together {
		errc := make(chan error, 1)
		go func() { errc <- fl.startAll(victims) }()
		out.elected = fl.waitElected(ctx, out, victims, out.at, nil)
		return <-errc
	}
	out.elected = fl.waitElected(ctx, out, victims, out.at, nil)
	if controller {
		at, err := cluster.PollUntil(ctx, fl.cfg.RoundTimeout, fl.cfg.PollEvery, "a new NATS meta leader", func(ctx context.Context) (bool, error) {
			return fl.metaLeader(ctx, victims[0]) >= 0, nil
		})
		if err != nil || out.elected < 0 {
			if err != nil {
				out.problems = append(out.problems, err.Error())
			}
			out.elected = -1
		} else {
			out.elected = max(out.elected, at.Sub(out.at))
		}
	}
	return fl.startAll(victims)
}

// startAll starts servers at once and waits until all accept clients.
func (fl *natsFaulter) startAll(ids []int) error {
	errs := make([]error, len(ids))
	var wg sync.WaitGroup
	for k, i := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[k] = fl.servers.Start(i, fl.cfg.StartTimeout)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// waitElected polls the streams' infos until every stream is led anew
// (natsLedAnew) and returns the time since at, -1 on timeout. It gives
// up early (-1, with a problem) once kept reports true: every stream led
// by a server that is up, one of them a victim that kept its leadership
// (a paused leader resumed before an election).
func (fl *natsFaulter) waitElected(ctx context.Context, out *faultOutcome, victims []int, at time.Time, kept func() bool) time.Duration {
	var gaveUp bool
	done, err := cluster.PollUntil(ctx, fl.cfg.RoundTimeout, fl.cfg.PollEvery, "every NATS stream led anew", func(ctx context.Context) (bool, error) {
		leads, err := fl.leads(ctx)
		if err != nil {
			return false, nil
		}
		if natsLedAnew(leads, victims, at, fl.up) {
			return true, nil
		}
		gaveUp = kept != nil && kept() && natsLedAnew(leads, nil, time.Time{}, fl.up)
		return gaveUp, nil
	})
	if gaveUp {
		out.problems = append(out.problems, "no new leader: the paused server resumed still leading")
		return -1
	}
	if err != nil {
		out.problems = append(out.problems, err.Error())
		return -1
	}
	return done.Sub(at)
}

// pause SIGSTOPs victim for Config.Pause and SIGCONTs it.
func (fl *natsFaulter) pause(ctx context.Context, out *faultOutcome, victim int) error {
	out.victims = victimIDs([]int{victim})
	out.at = time.Now()
	if err := fl.servers.Signal(victim, syscall.SIGSTOP); err != nil {
		return err
	}
	fl.mu.Lock()
	fl.paused = victim
	fl.mu.Unlock()
	// Once resumed for a second (time to learn of a newer term) and still
	// leading, the paused server kept its leadership.
	var resumedAt atomic.Int64
	kept := func() bool {
		at := resumedAt.Load()
		return at != 0 && time.Since(time.Unix(0, at)) > time.Second
	}
	elected := make(chan time.Duration, 1)
	go func() { elected <- fl.waitElected(ctx, out, []int{victim}, out.at, kept) }()
	cont := time.NewTimer(fl.cfg.Pause)
	defer cont.Stop()
	select {
	case <-cont.C:
	case <-ctx.Done():
	}
	fl.mu.Lock()
	fl.paused = -1
	fl.mu.Unlock()
	if err := fl.servers.Signal(victim, syscall.SIGCONT); err != nil {
		return err
	}
	resumedAt.Store(time.Now().UnixNano())
	out.elected = <-elected
	return ctx.Err()
}

// rolling SIGTERMs each server in turn, starts it again and waits until
// the streams are whole before the next.
func (fl *natsFaulter) rolling(ctx context.Context, out *faultOutcome) error {
	out.at = time.Now()
	var longest time.Duration
	for v := range fl.servers.Len() {
		if _, err := fl.current(ctx); err != nil {
			return err
		}
		out.victims = append(out.victims, int32(v+1))
		at := time.Now()
		if err := fl.servers.Signal(v, syscall.SIGTERM); err != nil {
			return err
		}
		if err := fl.servers.WaitExited(v, fl.cfg.RoundTimeout); err != nil {
			out.problems = append(out.problems, err.Error())
			fl.servers.Kill(v)
		}
		d := fl.waitElected(ctx, out, []int{v}, at, nil)
		if d < 0 || longest < 0 {
			longest = -1
		} else {
			longest = max(longest, d)
		}
		if err := fl.servers.Start(v, fl.cfg.StartTimeout); err != nil {
			return err
		}
		if _, err := fl.waitWhole(ctx); err != nil {
			out.problems = append(out.problems, fmt.Sprintf("after server %d's restart: %v", v+1, err))
		}
	}
	out.elected = longest
	return nil
}

// waitWhole waits until every server runs and every stream has a leader
// and both replicas current, and returns when.
func (fl *natsFaulter) waitWhole(ctx context.Context) (time.Time, error) {
	return cluster.PollUntil(ctx, fl.cfg.RoundTimeout, fl.cfg.PollEvery, "every NATS stream led with every replica current", func(ctx context.Context) (bool, error) {
		for i := range fl.servers.Len() {
			if !fl.up(i) {
				return false, nil
			}
		}
		v := fl.via()
		if v < 0 {
			return false, nil
		}
		for _, name := range fl.streams {
			cctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
			st, err := fl.ctl[v].Stream(cctx, name)
			cancel()
			if err != nil {
				return false, nil
			}
			if !streamWhole(st.CachedInfo().Cluster, fl.servers.Len()-1) {
				return false, nil
			}
		}
		return true, nil
	})
}

// streamWhole reports whether ci names a leader and want replicas, every
// one current and online.
func streamWhole(ci *jetstream.ClusterInfo, want int) bool {
	if ci == nil || ci.Leader == "" || len(ci.Replicas) != want {
		return false
	}
	for _, p := range ci.Replicas {
		if !p.Current || p.Offline {
			return false
		}
	}
	return true
}

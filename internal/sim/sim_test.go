package sim

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// defaultSeeds is how many seeds TestSimulation runs in CI (sized to stay
// well inside a minute on two cores), and shortSeeds under -short (the
// -race run).
const (
	defaultSeeds = 5000
	shortSeeds   = 200
)

// result is one seed's outcome.
type result struct {
	seed  uint64
	err   error
	steps int
	hash  uint64
	tail  string
	stats runStats
}

// runStats are a run's figures.
type runStats struct {
	sent, ackedAll, ackedOne, failed, leaderships, fencedAcksAll, commits, healthyFenced int
	// elrElections and lastKnownElections count the leaders elected from
	// the ELR and from the last known ELR (KIP-966).
	elrElections, lastKnownElections int
	// handOvers and handOverCancels count the rebalance hand-overs
	// started and called off, plannedMoves the planned moves committed
	// and plannedChecked those whose successor took over (and was
	// checked, invariant 7); moveIneligible and moveRetries count the
	// MoveLeaders answers INELIGIBLE_REPLICA and those sent again.
	handOvers, handOverCancels, plannedMoves, plannedChecked int
	moveIneligible, moveRetries                              int
	// codes counts the failed produces by Kafka error code (-2: no answer).
	codes map[int16]int
}

// runSeed runs one seed of the CI scenario.
func runSeed(seed uint64) result { return runSeedTrace(seed, false, nil) }

// runSeedTrace runs one seed; with full, every trace entry is written to
// sb.
func runSeedTrace(seed uint64, full bool, sb *strings.Builder) result {
	cfg := defaultScenario()
	applyEnvKnobs(&cfg)
	w := newWorld(seed, cfg)
	w.tr.keepAll = full
	err := w.run()
	for _, e := range w.tr.all {
		e.format(sb)
	}
	r := result{seed: seed, err: err, steps: w.steps, hash: w.tr.hash}
	if err != nil {
		r.tail = w.tr.tail(120)
	}
	for _, p := range w.producers {
		r.stats.sent += p.sent
		r.stats.ackedAll += p.ackedAll
		r.stats.ackedOne += p.ackedOne
		r.stats.failed += p.failed
		if r.stats.codes == nil {
			r.stats.codes = map[int16]int{}
		}
		for c, k := range p.codes {
			r.stats.codes[c] += k
		}
	}
	r.stats.leaderships = w.chk.leaderships
	r.stats.fencedAcksAll = w.chk.fencedAcksAll
	r.stats.elrElections = w.chk.elrElections
	r.stats.lastKnownElections = w.chk.lastKnownElections
	r.stats.handOvers = w.chk.handOvers
	r.stats.handOverCancels = w.chk.handOverCancels
	r.stats.plannedMoves = w.chk.plannedMoves
	r.stats.plannedChecked = w.chk.plannedChecked
	r.stats.moveIneligible = w.chk.moveIneligible
	r.stats.moveRetries = w.chk.moveRetries
	r.stats.commits = int(w.quorum.head())
	r.stats.healthyFenced = w.quorum.healthyFenced
	return r
}

// envInt reads an integer environment variable.
func envInt(t *testing.T, name string) (uint64, bool) {
	v := os.Getenv(name)
	if v == "" {
		return 0, false
	}
	n, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		t.Fatalf("%s=%q: %v", name, v, err)
	}
	return n, true
}

// TestSimulation runs the deterministic simulation of a three-node
// cluster for many seeds (WEIR_SIM_SEEDS, from WEIR_SIM_FIRST), or one
// (WEIR_SIM_SEED, with its trace), and fails with the first violated
// invariant's seed, a replay command and the trace's tail.
func TestSimulation(t *testing.T) {
	if seed, ok := envInt(t, "WEIR_SIM_SEED"); ok {
		var sb strings.Builder
		r := runSeedTrace(seed, os.Getenv("WEIR_SIM_TRACE") == "1", &sb)
		if sb.Len() > 0 {
			t.Logf("trace:\n%s", sb.String())
		}
		t.Logf("seed %d: %d steps, %+v", seed, r.steps, r.stats)
		if r.err != nil {
			t.Fatalf("seed %d: %v\ntrace tail:\n%s", seed, r.err, r.tail)
		}
		return
	}
	n := uint64(defaultSeeds)
	if testing.Short() {
		n = shortSeeds
	}
	if v, ok := envInt(t, "WEIR_SIM_SEEDS"); ok {
		n = v
	}
	first, _ := envInt(t, "WEIR_SIM_FIRST")
	// WEIR_SIM_ALL=1 runs every seed and counts the failures by
	// invariant, rather than stopping at the first (mutation runs).
	all := os.Getenv("WEIR_SIM_ALL") == "1"
	fails := map[string]int{}
	var failedSeeds []uint64
	start := time.Now()
	var next atomic.Uint64
	next.Store(first)
	var mu sync.Mutex
	var failed *result
	var total runStats
	var steps int
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				seed := next.Add(1) - 1
				if seed >= first+n {
					return
				}
				r := runSeed(seed)
				mu.Lock()
				steps += r.steps
				total.sent += r.stats.sent
				total.ackedAll += r.stats.ackedAll
				total.ackedOne += r.stats.ackedOne
				total.failed += r.stats.failed
				total.leaderships += r.stats.leaderships
				total.fencedAcksAll += r.stats.fencedAcksAll
				total.commits += r.stats.commits
				total.healthyFenced += r.stats.healthyFenced
				total.elrElections += r.stats.elrElections
				total.lastKnownElections += r.stats.lastKnownElections
				total.handOvers += r.stats.handOvers
				total.handOverCancels += r.stats.handOverCancels
				total.plannedMoves += r.stats.plannedMoves
				total.plannedChecked += r.stats.plannedChecked
				total.moveIneligible += r.stats.moveIneligible
				total.moveRetries += r.stats.moveRetries
				if total.codes == nil {
					total.codes = map[int16]int{}
				}
				for c, k := range r.stats.codes {
					total.codes[c] += k
				}
				if r.err != nil && (failed == nil || r.seed < failed.seed) {
					failed = &r
				}
				if r.err != nil {
					fails[invariantOf(r.err)]++
					if len(failedSeeds) < 10 {
						failedSeeds = append(failedSeeds, r.seed)
					}
				}
				stop := failed != nil && !all
				mu.Unlock()
				if stop {
					return
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	t.Logf("%d seeds from %d in %v (%v per seed, %d steps): %+v", n, first, elapsed.Round(time.Millisecond),
		(elapsed / time.Duration(max(n, 1))).Round(time.Microsecond), steps, total)
	if len(fails) > 0 {
		t.Logf("failures by invariant: %v; some failing seeds: %v", fails, failedSeeds)
	}
	if failed != nil {
		model := ""
		if m := os.Getenv("WEIR_SIM_MODEL"); m != "" {
			model = "WEIR_SIM_MODEL=" + m + " "
		}
		t.Fatalf("seed %d: %v\nreplay: %sWEIR_SIM_SEED=%d go test ./internal/sim -run 'TestSimulation$' -v\ntrace tail:\n%s",
			failed.seed, failed.err, model, failed.seed, failed.tail)
	}
	if total.ackedAll == 0 || total.leaderships == 0 {
		t.Fatalf("the runs acknowledged %d acks=all batches and elected %d leaders: the scenario does not exercise the cluster", total.ackedAll, total.leaderships)
	}
	if n >= 100 && !strings.Contains(os.Getenv("WEIR_SIM_MODEL"), "norebalance") && total.plannedChecked == 0 {
		t.Fatalf("the runs made %d planned moves, none of whose successors took over: the scenario does not exercise the rebalance", total.plannedMoves)
	}
}

// TestSimulationReplays checks determinism: a seed run twice gives the
// same trace.
func TestSimulationReplays(t *testing.T) {
	for seed := range uint64(20) {
		a, b := runSeed(seed), runSeed(seed)
		if a.hash != b.hash || a.steps != b.steps {
			t.Fatalf("seed %d: two runs differ: %d steps, trace hash %x; %d steps, trace hash %x", seed, a.steps, a.hash, b.steps, b.hash)
		}
		if fmt.Sprint(a.err) != fmt.Sprint(b.err) {
			t.Fatalf("seed %d: two runs end differently: %v; %v", seed, a.err, b.err)
		}
	}
}

// applyEnvKnobs turns on the scenario's optional behaviours named in
// WEIR_SIM_MODEL (comma-separated: hints, deposed, wiregap, heldlease, specanswers; nodrop turns message loss off,
// norebalance the preferred-leader rebalance, noslowcommit the slow commits).
func applyEnvKnobs(cfg *scenario) {
	for _, k := range strings.Split(os.Getenv("WEIR_SIM_MODEL"), ",") {
		switch strings.TrimSpace(k) {
		case "hints":
			cfg.Hints = true
		case "deposed":
			cfg.DeposedAnswers = true
		case "wiregap":
			cfg.WireGapMs = 2
		case "nodrop":
			cfg.DropRate = 0
		case "heldlease":
			cfg.HeldUnleased = true
		case "specanswers":
			cfg.SpecAnswers = true
		case "noslowcommit":
			cfg.SlowCommitRate = 0
		case "norebalance":
			cfg.RebalanceMs = 0
		}
	}
}

// invariantOf names the invariant an error reports.
func invariantOf(err error) string {
	msg := err.Error()
	if i := strings.Index(msg, "invariant "); i >= 0 && i+len("invariant 1") <= len(msg) {
		return msg[i : i+len("invariant 1")]
	}
	return "other"
}

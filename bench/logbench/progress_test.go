package logbench_test

import (
	"bytes"
	"context"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weirmq/weir/bench/logbench"
)

// progressWatcher collects a run's output and cancels the run once it has
// seen want progress lines.
type progressWatcher struct {
	mu     sync.Mutex
	out    bytes.Buffer
	seen   int
	want   int
	cancel context.CancelFunc
}

func (w *progressWatcher) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if bytes.HasPrefix(p, []byte(logbench.ProgressPrefix+" ")) {
		if w.seen++; w.seen == w.want {
			w.cancel()
		}
	}
	return w.out.Write(p)
}

// TestRunReportsProgress runs without a bound but the context, which is
// cancelled after the third progress line: the lines come while the run
// goes on, their windows add up to at most the run's batches, and each
// line's total is the sum of the windows so far.
func TestRunReportsProgress(t *testing.T) {
	cfg := logbench.DefaultConfig()
	cfg.Dir = t.TempDir()
	cfg.Partitions, cfg.Writers = 2, 2
	cfg.RecordSize, cfg.BatchBytes = 100, 400
	cfg.SegmentBytes = 1 << 20
	cfg.Duration = time.Hour // ended by the cancel, not the clock
	cfg.ReportInterval = time.Millisecond
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w := &progressWatcher{want: 3, cancel: cancel}
	res, err := logbench.Run(ctx, cfg, w)
	if err != nil {
		t.Fatal(err)
	}
	var sum int64
	progress := 0
	for _, l := range strings.Split(strings.TrimSuffix(w.out.String(), "\n"), "\n")[1:] {
		f := strings.Fields(l)
		if len(f) != 9 || f[0] != logbench.ProgressPrefix {
			t.Fatalf("line %q is not a progress line", l)
		}
		progress++
		fields := map[string]int64{}
		for _, kv := range f[1:] {
			k, v, _ := strings.Cut(kv, "=")
			if n, err := strconv.ParseInt(v, 10, 64); err == nil {
				fields[k] = n
			}
		}
		sum += fields["batches"]
		if fields["total_batches"] != sum || fields["records"] != 4*fields["batches"] {
			t.Errorf("line %q: total %d, windows so far %d; want equal, 4 records a batch", l, fields["total_batches"], sum)
		}
	}
	if progress < 3 || sum > res.Batches {
		t.Errorf("%d progress lines counting %d batches, run %d; want at least 3, at most the run's", progress, sum, res.Batches)
	}
}

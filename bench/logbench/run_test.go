package logbench_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/weirmq/weir/bench/logbench"
	"github.com/weirmq/weir/log"
	"github.com/weirmq/weir/log/batch"
)

// smallConfig is a run of a few dozen small batches with group commit.
func smallConfig(dir string) logbench.Config {
	cfg := logbench.DefaultConfig()
	cfg.Dir = dir
	cfg.Partitions, cfg.Writers = 2, 3
	cfg.RecordSize, cfg.BatchBytes = 100, 500
	cfg.SegmentBytes = 8 << 10
	cfg.Fsync, cfg.ReportSynced = true, true
	cfg.Duration, cfg.Batches = 0, 40
	cfg.ReportInterval = 0 // the tests read every line after the ready one as synced
	return cfg
}

// runLines runs cfg and returns its output split into the ready line and
// the synced lines.
func runLines(t *testing.T, cfg logbench.Config) (logbench.Result, string, []logbench.Synced) {
	t.Helper()
	var out bytes.Buffer
	res, err := logbench.Run(context.Background(), cfg, &out)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if !strings.HasPrefix(lines[0], logbench.ReadyPrefix+" ") {
		t.Fatalf("first line %q, want the ready line", lines[0])
	}
	var synced []logbench.Synced
	for _, l := range lines[1:] {
		s, err := logbench.ParseSynced(l)
		if err != nil {
			t.Fatal(err)
		}
		synced = append(synced, s)
	}
	return res, lines[0], synced
}

func TestRunReportsEveryAppendAndAppendsOnTop(t *testing.T) {
	cfg := smallConfig(t.TempDir())
	var all []runSynced
	for run := range int64(2) {
		cfg.Run = run
		res, ready, synced := runLines(t, cfg)
		if want := fmt.Sprintf("clean_shutdown=%t", run > 0); !strings.Contains(ready, want) {
			t.Errorf("run %d: ready line %q lacks %s", run, ready, want)
		}
		if res.Batches != cfg.Batches || int64(len(synced)) != cfg.Batches {
			t.Errorf("run %d: %d batches, %d synced lines; want %d", run, res.Batches, len(synced), cfg.Batches)
		}
		if want := cfg.Batches * int64(cfg.RecordsPerBatch()); res.Records != want {
			t.Errorf("run %d: %d records, want %d", run, res.Records, want)
		}
		if res.SyncRounds == 0 || res.P50 <= 0 || res.P99 < res.P50 || res.Max < res.P99 {
			t.Errorf("run %d: implausible figures %+v", run, res)
		}
		if !strings.HasPrefix(res.String(), logbench.SummaryPrefix+" batches=40 ") {
			t.Errorf("run %d: summary %q", run, res)
		}
		for _, sy := range synced {
			all = append(all, runSynced{run, sy})
		}
	}
	checkSynced(t, cfg, all)
}

// runSynced is a synced line of one run.
type runSynced struct {
	run int64
	logbench.Synced
}

// checkSynced opens cfg.Dir and checks that each synced append is the batch
// at its offsets, every record verifying, and that the partitions hold
// nothing else.
func checkSynced(t *testing.T, cfg logbench.Config, synced []runSynced) {
	t.Helper()
	m, err := log.OpenManager(log.ManagerConfig{Dir: cfg.Dir, NoBackground: true})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	perPartition := map[int32]int64{}
	for _, s := range synced {
		l, err := m.OpenLog(logbench.TopicPartition(s.Partition), cfg.LogConfig(), logbench.TopicID())
		if err != nil {
			t.Fatal(err)
		}
		data, err := l.Read(s.FirstOffset, log.ReadOptions{MaxBytes: 1})
		if err != nil {
			t.Fatal(err)
		}
		if batch.BaseOffset(data) != s.FirstOffset || batch.LastOffset(data) != s.LastOffset {
			t.Fatalf("%v: found batch [%d, %d]", s, batch.BaseOffset(data), batch.LastOffset(data))
		}
		recs, err := batch.Records(data, len(data))
		if err != nil {
			t.Fatal(err)
		}
		for i, r := range recs {
			k, err := logbench.VerifyRecord(r.Key, r.Value)
			want := logbench.Key{Run: s.run, Partition: s.Partition, Writer: s.Writer, Seq: s.Seq, Index: int32(i)}
			if err != nil || k != want || len(r.Value) != cfg.RecordSize {
				t.Fatalf("%v: record %d: key %+v, %d-byte value, %v; want %+v", s, i, k, len(r.Value), err, want)
			}
		}
		perPartition[s.Partition] += s.LastOffset - s.FirstOffset + 1
	}
	for p, n := range perPartition {
		l, _ := m.Log(logbench.TopicPartition(p))
		if l.LogEndOffset() != n || l.SegmentCount() < 2 {
			t.Errorf("partition %d: log end %d, %d segments; want %d records in several segments", p, l.LogEndOffset(), l.SegmentCount(), n)
		}
	}
}

func TestRunStopsOnCancel(t *testing.T) {
	cfg := smallConfig(t.TempDir())
	cfg.Batches, cfg.Duration = 0, time.Hour
	ctx, cancel := context.WithCancel(context.Background())
	res, err := logbench.Run(ctx, cfg, writerFunc(func(p []byte) (int, error) {
		if bytes.HasPrefix(p, []byte("synced ")) {
			cancel() // stop after the first durable append
		}
		return len(p), nil
	}))
	if err != nil || res.Batches < 1 {
		t.Fatalf("Run after cancel = %+v, %v; want a clean stop after at least one batch", res, err)
	}
}

func TestRunFailsOnOutputError(t *testing.T) {
	broken := errors.New("broken pipe")
	_, err := logbench.Run(context.Background(), smallConfig(t.TempDir()), writerFunc(func(p []byte) (int, error) {
		return 0, broken
	}))
	if !errors.Is(err, broken) {
		t.Fatalf("Run = %v, want the output's error", err)
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

func TestConfigValidate(t *testing.T) {
	ok := smallConfig("dir")
	if err := ok.Validate(); err != nil {
		t.Fatal(err)
	}
	for name, mutate := range map[string]func(*logbench.Config){
		"no dir":               func(c *logbench.Config) { c.Dir = "" },
		"no partitions":        func(c *logbench.Config) { c.Partitions = 0 },
		"no writers":           func(c *logbench.Config) { c.Writers = 0 },
		"empty records":        func(c *logbench.Config) { c.RecordSize = 0 },
		"no bound":             func(c *logbench.Config) { c.Batches, c.Duration = 0, 0 },
		"synced without fsync": func(c *logbench.Config) { c.Fsync = false },
		"tiny segments":        func(c *logbench.Config) { c.SegmentBytes = 500 },
		"negative run":         func(c *logbench.Config) { c.Run = -1 },
		"negative interval":    func(c *logbench.Config) { c.ReportInterval = -time.Second },
		"segments below 14":    func(c *logbench.Config) { c.SegmentBytes = 13 },
	} {
		c := ok
		mutate(&c)
		err := c.Validate()
		if !errors.Is(err, logbench.ErrInvalidConfig) {
			t.Errorf("%s: Validate = %v, want ErrInvalidConfig", name, err)
		}
		// The text is the detail alone: a command prints it after its name.
		if err != nil && (strings.Contains(err.Error(), "logbench") || strings.Contains(err.Error(), "invalid config")) {
			t.Errorf("%s: Validate = %q, want no prefix", name, err)
		}
	}
}

package cluster

import (
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/weirmq/weir/cluster/config"
	"github.com/weirmq/weir/log"
)

// TestSecondNodeOnDirRefused checks that a second StartNode on the data
// directory of a running node in the same process fails at once, naming
// the directory, for the real file system and for MemFS, and that the
// first node keeps its directory and restarts on it after Stop.
func TestSecondNodeOnDirRefused(t *testing.T) {
	for _, c := range []struct {
		name string
		fs   log.FS
		dir  string
	}{{"os", nil, t.TempDir()}, {"mem", log.NewMemFS(), "/data"}} {
		t.Run(c.name, func(t *testing.T) {
			props := map[string]string{"log.dirs": c.dir}
			n, sys := startTestNode(t, props, c.fs)
			b := config.NewBroker()
			if err := b.Override("log.dirs", c.dir); err != nil {
				t.Fatal(err)
			}
			cfg := NewConfig(b)
			cfg.FS = c.fs
			cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
			if err := b.Override("listeners", "PLAINTEXT://127.0.0.1:0"); err != nil {
				t.Fatal(err)
			}
			sys2 := actor.NewActorSystem()
			defer sys2.Shutdown()
			if n2, err := StartNode(sys2, cfg); err == nil {
				_ = n2.Stop()
				t.Fatal("a second node started on a directory in use")
			} else if !errors.Is(err, log.ErrLocked) || !strings.Contains(err.Error(), c.dir) {
				t.Fatalf("second node: %v, want ErrLocked naming %s", err, c.dir)
			}
			stopNode(t, n, sys)
			n, sys = startTestNode(t, props, c.fs)
			stopNode(t, n, sys)
		})
	}
}

package cluster

import (
	"net/netip"
	"testing"

	"github.com/weirmq/weir/cluster/config"
)

// The connections, the segment-file cache and the reserve always fit under
// the open-file limit when max.connections is unset, and a configured
// max.connections shrinks the cache, not the reserve.
func TestPlanFiles(t *testing.T) {
	for _, tc := range []struct {
		limit                 uint64
		configured            int64
		conns, files, reserve int
		warn                  bool
	}{
		{limit: 1024, configured: -1, conns: 384, files: 384, reserve: 256},
		{limit: 65536, configured: -1, conns: 61184, files: 4096, reserve: 256},
		{limit: 1 << 20, configured: -1, conns: 1<<20 - 4096 - 256, files: 4096, reserve: 256},
		{limit: 128, configured: -1, conns: 48, files: 48, reserve: 32},
		{limit: 16, configured: -1, conns: 0, files: 12, reserve: 4},
		{limit: 1024, configured: 500, conns: 500, files: 268, reserve: 256},
		{limit: 1024, configured: 5000, conns: 5000, files: 32, reserve: 256, warn: true},
		{limit: ^uint64(0), configured: -1, conns: 1<<31 - 1 - 256 - 4096, files: 4096, reserve: 256},
	} {
		p := planFiles(tc.limit, tc.configured)
		if p.Connections != tc.conns || p.SegmentFiles != tc.files || p.Reserve != tc.reserve || (p.Warning != "") != tc.warn {
			t.Errorf("planFiles(%d, %d) = %+v, want %d connections, %d files, %d reserved, warning %v",
				tc.limit, tc.configured, p, tc.conns, tc.files, tc.reserve, tc.warn)
		}
		if tc.configured < 0 && uint64(p.Connections+p.SegmentFiles+p.Reserve) > tc.limit {
			t.Errorf("planFiles(%d): %+v exceeds the limit", tc.limit, p)
		}
	}
}

func TestPerIPOverrides(t *testing.T) {
	b := config.NewBroker()
	if err := b.Override("max.connections.per.ip.overrides", "127.0.0.1:200, [::1]:7,localhost:100"); err != nil {
		t.Fatal(err)
	}
	c := NewConfig(b)
	got, err := c.perIPOverrides()
	if err != nil {
		t.Fatal(err)
	}
	if got[netip.MustParseAddr("::1")] != 7 && got[netip.MustParseAddr("::1")] != 100 {
		t.Errorf("::1: %d", got[netip.MustParseAddr("::1")])
	}
	if n := got[netip.MustParseAddr("127.0.0.1")]; n != 100 && n != 200 {
		t.Errorf("127.0.0.1: %d", n)
	}
	if err := b.Override("max.connections.per.ip.overrides", "127.0.0.1"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.perIPOverrides(); err == nil {
		t.Error("a pair without a count was accepted")
	}
}

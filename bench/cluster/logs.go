package cluster

import (
	"bufio"
	"fmt"
	"os"
	"strings"
	"time"
)

// timeline is what the survivors' logs say about one failover: when
// gossip first declared the victim dead, and when the controller first
// fenced it. A zero time means no such line was found (the log lines are
// weir's, and may change).
type timeline struct {
	detected, fenced time.Time
}

// The log lines read (slog text format, `weir serve --log-level info`).
const (
	memberFailedMsg = `msg="membership: member failed"`
	fencingMsg      = `msg="fencing brokers whose sessions expired"`
)

// readTimeline scans the logs of the nodes other than victim for the
// first gossip verdict on victim and its first fencing after since.
func readTimeline(c *weirCluster, victim int32, since time.Time) timeline {
	var tl timeline
	for _, n := range c.nodes {
		if n.id == victim {
			continue
		}
		f, err := os.Open(n.logPth)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			var at *time.Time
			switch {
			case strings.Contains(line, memberFailedMsg) && strings.Contains(line, fmt.Sprintf(" node_id=%d ", victim)):
				at = &tl.detected
			case strings.Contains(line, fencingMsg) && strings.Contains(line, fmt.Sprintf("NodeID:%d ", victim)):
				at = &tl.fenced
			default:
				continue
			}
			t, ok := lineTime(line)
			if ok && !t.Before(since.Truncate(time.Millisecond)) && (at.IsZero() || t.Before(*at)) {
				*at = t
			}
		}
		f.Close()
	}
	return tl
}

// lineTime reads the time= field opening a slog text line.
func lineTime(line string) (time.Time, bool) {
	rest, ok := strings.CutPrefix(line, "time=")
	if !ok {
		return time.Time{}, false
	}
	v, _, _ := strings.Cut(rest, " ")
	t, err := time.Parse(time.RFC3339Nano, v)
	return t, err == nil
}

// after returns t - since, or -1 when t is zero.
func after(t, since time.Time) time.Duration {
	if t.IsZero() {
		return -1
	}
	return t.Sub(since)
}

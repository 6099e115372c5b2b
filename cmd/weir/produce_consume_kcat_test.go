package main

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weirmq/weir/internal/harness"
)

// kcat runs the kcat binary (librdkafka) with stdin and returns its
// stdout; it fails the test unless kcat exits 0.
func kcat(t *testing.T, stdin string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "kcat", args...)
	cmd.Stdin = strings.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("kcat %s: %v\nstderr:\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return stdout.String()
}

// sortedLines splits output into lines and sorts them.
func sortedLines(output string) []string {
	return slices.Sorted(slices.Values(strings.Split(strings.TrimSuffix(output, "\n"), "\n")))
}

// weir produce and weir consume interoperate with librdkafka through kcat
// on a weir serve process: keys, values (spaces and an empty one among
// them) and headers survive in both directions, and weir's keyed records
// land on the partitions of Kafka's murmur2 partitioner. Before kcat,
// weir produce to a topic that does not exist creates it, as the broker
// auto-creates topics (auto.create.topics.enable, true by default).
func TestProduceConsumeWithKcat(t *testing.T) {
	addr := harness.FreeAddr(t)
	startServe(t, "--data", t.TempDir(), "--listen", addr)
	mustProduce(t, "first\nsecond\n", "new-topic", "--bootstrap-server", addr, "--output-format", "")
	if got := consumeLines(t, "new-topic", "--bootstrap-server", addr, "-o", ":end"); strings.Join(got, " ") != "first second" {
		t.Errorf("auto-created topic holds %q", got)
	}

	_, err := exec.LookPath("kcat")
	harness.NeedClient(t, "kcat", err)
	for _, topic := range []string{"from-weir", "from-kcat"} {
		mustRun(t, "topics", "create", "--bootstrap-server", addr, "--topic", topic, "--partitions", "3")
	}

	t.Run("weir produce to kcat", func(t *testing.T) {
		var input strings.Builder
		var want []string
		for i := range 10 {
			key, value := fmt.Sprintf("key-%d", i), fmt.Sprintf("value %d with spaces", i)
			if i == 9 {
				value = ""
			}
			fmt.Fprintf(&input, "%s %s\n", key, value)
			want = append(want, fmt.Sprintf("%d\t%s\t%s\torigin=weir,trace=a=b", murmur2Partition(key, 3), key, value))
		}
		mustProduce(t, input.String(), "--topic", "from-weir", "--bootstrap-server", addr,
			"-f", `%k %v\n`, "-H", "origin=weir", "-H", "trace=a=b", "--output-format", "")
		got := kcat(t, "", "-C", "-b", addr, "-t", "from-weir", "-o", "beginning", "-e", "-q", "-f", `%p\t%k\t%s\t%h\n`)
		if g, w := strings.Join(sortedLines(got), "\n"), strings.Join(slices.Sorted(slices.Values(want)), "\n"); g != w {
			t.Errorf("kcat read\n%s\nwant\n%s", g, w)
		}
	})

	t.Run("kcat to weir consume", func(t *testing.T) {
		var input strings.Builder
		var want []string
		for i := range 10 {
			key, value := fmt.Sprintf("key-%d", i), fmt.Sprintf("value %d: with a colon", i)
			if i == 9 {
				value = ""
			}
			fmt.Fprintf(&input, "%s:%s\n", key, value)
			want = append(want, fmt.Sprintf("%s\t%s\torigin=kcat;trace=xyz;", key, value))
		}
		kcat(t, input.String(), "-P", "-b", addr, "-t", "from-kcat", "-K:", "-H", "origin=kcat", "-H", "trace=xyz")
		got := consumeLines(t, "from-kcat", "--bootstrap-server", addr, "-o", ":end", "-f", `%k\t%v\t%h{%k=%v;}\n`)
		if g, w := strings.Join(slices.Sorted(slices.Values(got)), "\n"), strings.Join(slices.Sorted(slices.Values(want)), "\n"); g != w {
			t.Errorf("weir consume read\n%s\nwant\n%s", g, w)
		}
		json := consumeLines(t, "from-kcat", "--bootstrap-server", addr, "-o", ":end", "-n", "1", "-f", "json")
		if len(json) != 1 || !strings.Contains(json[0], `"headers":[{"key":"origin","value":"kcat"},{"key":"trace","value":"xyz"}]`) {
			t.Errorf("json record %q", json)
		}
	})
}

package main

import (
	"net"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/weirmq/weir/internal/cli"
)

// clusterInfoRE matches `weir cluster info` of a one-broker weir.
var clusterInfoRE = regexp.MustCompile(`^ClusterId:     ([A-Za-z0-9_-]{22})
ControllerId:  1
ID  ADDRESS +RACK
1\* +(\S+) +(\S+)
$`)

// jsonConfig is a config as the --format json of `weir cluster config`
// prints it.
type jsonConfig struct {
	Name      string  `json:"name"`
	Value     *string `json:"value"`
	Source    string  `json:"source"`
	Sensitive bool    `json:"sensitive"`
	Synonyms  []struct {
		Name   string  `json:"name"`
		Value  *string `json:"value"`
		Source string  `json:"source"`
	} `json:"synonyms"`
}

// synonymsText prints c's synonyms as kafka-configs.sh does.
func (c jsonConfig) synonymsText() string {
	s := make([]string, len(c.Synonyms))
	for i, syn := range c.Synonyms {
		s[i] = syn.Source + ":" + syn.Name + "=" + nullable(syn.Value)
	}
	return strings.Join(s, ", ")
}

// TestCluster runs `weir cluster info` and `weir cluster config` against a
// real weir serve whose server.properties sets a rack and a retention, so
// the broker's configs show a static value over its default.
func TestCluster(t *testing.T) {
	addr := startPropsServe(t, "broker.rack=rack-a\nlog.retention.hours=1\n")

	t.Run("info", func(t *testing.T) {
		out := mustRun(t, "cluster", "info", "--bootstrap-server", addr)
		m := clusterInfoRE.FindStringSubmatch(out)
		if m == nil || m[2] != addr || m[3] != "rack-a" {
			t.Fatalf("cluster info printed:\n%s", out)
		}
		var info struct {
			ClusterID    string `json:"cluster_id"`
			ControllerID int32  `json:"controller_id"`
			Brokers      []struct {
				NodeID  int32   `json:"node_id"`
				Host    string  `json:"host"`
				Port    int32   `json:"port"`
				Address string  `json:"address"`
				Rack    *string `json:"rack"`
			} `json:"brokers"`
		}
		decodeJSON(t, mustRun(t, "cluster", "info", "--format", "json", "--brokers", addr), &info)
		host, port, _ := net.SplitHostPort(addr)
		if info.ClusterID != m[1] || info.ControllerID != 1 || len(info.Brokers) != 1 {
			t.Fatalf("cluster info json: %+v", info)
		}
		if b := info.Brokers[0]; b.NodeID != 1 || b.Host != host || strconv.Itoa(int(b.Port)) != port || b.Address != addr ||
			b.Rack == nil || *b.Rack != "rack-a" {
			t.Errorf("broker: %+v", b)
		}
		// The same cluster id as the metadata quorum reports.
		if st := mustRun(t, "metadata-quorum", "describe", "--status", "--brokers", addr); !strings.HasPrefix(st, "ClusterId:              "+m[1]+"\n") {
			t.Errorf("quorum status names another cluster:\n%s", st)
		}
	})

	t.Run("config-get", func(t *testing.T) {
		t.Setenv(cli.BrokersEnv, addr)
		for key, want := range map[string]string{
			"log.retention.hours":       "1",
			"broker.rack":               "rack-a",
			"auto.create.topics.enable": "true",
			"advertised.listeners":      "null",
			"listeners":                 "PLAINTEXT://" + addr,
		} {
			if out := mustRun(t, "cluster", "config", "get", key); out != want+"\n" {
				t.Errorf("get %s printed %q, want %q", key, out, want)
			}
		}
		if out := mustRun(t, "cluster", "config", "get", "--broker", "1", "log.retention.hours"); out != "1\n" {
			t.Errorf("get --broker 1 printed %q", out)
		}
		var got []struct {
			Broker int32 `json:"broker"`
			jsonConfig
		}
		decodeJSON(t, mustRun(t, "cluster", "config", "get", "log.retention.hours", "--format", "json"), &got)
		if len(got) != 1 || got[0].Broker != 1 || got[0].Name != "log.retention.hours" || got[0].Value == nil ||
			*got[0].Value != "1" || got[0].Source != "STATIC_BROKER_CONFIG" || got[0].Sensitive ||
			got[0].synonymsText() != "STATIC_BROKER_CONFIG:log.retention.hours=1, DEFAULT_CONFIG:log.retention.hours=168" {
			t.Errorf("get --format json: %+v", got)
		}

		stderr := mustFail(t, 1, "cluster", "config", "get", "log.retention.hour")
		if !strings.Contains(stderr, `broker 1 has no config "log.retention.hour": did you mean "log.retention.hours"?`) {
			t.Errorf("typo: %q", stderr)
		}
		stderr = mustFail(t, 1, "cluster", "config", "get", "log.retention.hours", "--broker", "7")
		if !strings.Contains(stderr, "the cluster has no broker 7 (its brokers: 1)") {
			t.Errorf("--broker 7: %q", stderr)
		}
		mustFail(t, 2, "cluster", "config", "get")
		mustFail(t, 2, "cluster", "config", "get", "a", "b")
		mustFail(t, 2, "cluster", "config", "get", "a", "--format", "xml")
	})

	t.Run("config-describe", func(t *testing.T) {
		out := mustRun(t, "cluster", "config", "describe", "--brokers", addr)
		lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
		if lines[0] != "All configs for broker 1 are:" {
			t.Fatalf("describe printed:\n%s", out)
		}
		var names []string
		for _, l := range lines[1:] {
			c := configLineRE.FindStringSubmatch(l)
			if c == nil {
				t.Fatalf("config line %q", l)
			}
			names = append(names, c[1])
		}
		if !slices.IsSorted(names) {
			t.Errorf("configs not sorted by name: %q", names)
		}
		for _, want := range []string{
			"  log.retention.hours=1 sensitive=false synonyms={STATIC_BROKER_CONFIG:log.retention.hours=1, DEFAULT_CONFIG:log.retention.hours=168}",
			"  broker.rack=rack-a sensitive=false synonyms={STATIC_BROKER_CONFIG:broker.rack=rack-a}",
			"  num.partitions=1 sensitive=false synonyms={DEFAULT_CONFIG:num.partitions=1}",
			"  advertised.listeners=null sensitive=false synonyms={}",
		} {
			if !slices.Contains(lines, want) {
				t.Errorf("no line %q in:\n%s", want, out)
			}
		}

		var got []struct {
			Broker  int32        `json:"broker"`
			Configs []jsonConfig `json:"configs"`
		}
		decodeJSON(t, mustRun(t, "cluster", "config", "describe", "--broker", "1", "--format", "json", "--brokers", addr), &got)
		if len(got) != 1 || got[0].Broker != 1 || len(got[0].Configs) != len(names) {
			t.Fatalf("describe --format json: %d brokers", len(got))
		}
		// The same answer as a DescribeConfigs of the broker resource.
		adm := kadm.NewClient(newTestClient(t, addr))
		rcs, err := adm.DescribeBrokerConfigs(t.Context(), 1)
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]kadm.Config{}
		for _, c := range rcs[0].Configs {
			want[c.Key] = c
		}
		for i, c := range got[0].Configs {
			w, ok := want[c.Name]
			if c.Name != names[i] || !ok || nullable(c.Value) != nullable(w.Value) || c.Source != sourceName(w.Source) ||
				len(c.Synonyms) != len(w.Synonyms) {
				t.Errorf("config %d %+v, broker answered %+v", i, c, w)
			}
		}
		if w := want["log.retention.hours"]; w.Source != kmsg.ConfigSourceStaticBrokerConfig {
			t.Errorf("log.retention.hours source %v", w.Source)
		}
		stderr := mustFail(t, 1, "cluster", "config", "describe", "--broker", "2", "--brokers", addr)
		if !strings.Contains(stderr, "the cluster has no broker 2 (its brokers: 1)") {
			t.Errorf("--broker 2: %q", stderr)
		}
	})

	t.Run("usage", func(t *testing.T) {
		for _, args := range [][]string{
			{"cluster"},
			{"cluster", "nfo"},
			{"cluster", "config"},
			{"cluster", "config", "gte", "x"},
			{"cluster", "info", "extra"},
			{"cluster", "info", "--format", "yaml"},
			{"cluster", "config", "describe", "extra"},
		} {
			mustFail(t, 2, args...)
		}
		if stderr := mustFail(t, 2, "cluster", "nfo"); !strings.Contains(stderr, `did you mean "info"`) {
			t.Errorf("typo of info: %q", stderr)
		}
		for _, args := range [][]string{{"cluster", "-h"}, {"cluster", "config", "-h"}, {"cluster", "info", "-h"}} {
			code, _, stderr := runCmd(t, args...)
			if code != 0 || !strings.Contains(stderr, "usage: weir "+strings.Join(args[:len(args)-1], " ")) {
				t.Errorf("weir %q: exit %d, stderr %q", args, code, stderr)
			}
		}
		_, _, stderr := runCmd(t, "cluster", "-h")
		for _, c := range clusterCommands {
			if !strings.Contains(stderr, c.Name) || !strings.Contains(stderr, c.Summary) {
				t.Errorf("cluster usage does not list %q", c.Name)
			}
		}
	})
}

// TestClusterUnreachableBroker checks that a broker that is not there is
// named, with what to do, and exits 1.
func TestClusterUnreachableBroker(t *testing.T) {
	for _, args := range [][]string{{"cluster", "info"}, {"cluster", "config", "describe"}} {
		stderr := mustFail(t, 1, append(args, "--bootstrap-server", "127.0.0.1:1", "--timeout", "2s")...)
		if !strings.HasPrefix(stderr, "weir cluster: describe cluster: ") || !strings.Contains(stderr, "127.0.0.1:1") {
			t.Errorf("weir %q: %q", args, stderr)
		}
	}
}

func TestClusterInfoText(t *testing.T) {
	rack := "r2"
	info := newClusterInfo(kadm.Metadata{Cluster: "c", Controller: -1, Brokers: kadm.BrokerDetails{
		{NodeID: 1, Host: "10.0.0.1", Port: 9092},
		{NodeID: 2, Host: "::1", Port: 9093, Rack: &rack},
	}})
	var b strings.Builder
	if err := info.writeText(&b); err != nil {
		t.Fatal(err)
	}
	want := "ClusterId:     c\nControllerId:  none\nID  ADDRESS        RACK\n1   10.0.0.1:9092  -\n2   [::1]:9093     r2\n"
	if b.String() != want {
		t.Errorf("info text\n%q\nwant\n%q", b.String(), want)
	}
	if got := info.brokerIDs(); !slices.Equal(got, []int32{1, 2}) {
		t.Errorf("broker ids %v", got)
	}
}

func TestClusterConfigGetDisagreement(t *testing.T) {
	v1, v2 := "1", "2"
	all := []brokerConfigs{
		{Broker: 1, Configs: []configView{{Name: "num.partitions", Value: &v1}}},
		{Broker: 2, Configs: []configView{{Name: "num.partitions", Value: &v2}}},
	}
	got, err := pickBrokerConfig(all, "num.partitions")
	if err != nil || len(got) != 2 {
		t.Fatalf("pick: %v %v", got, err)
	}
	if err := agreed("num.partitions", got); err == nil ||
		err.Error() != "the brokers disagree on num.partitions (broker 1: 1, broker 2: 2); name one with --broker" {
		t.Errorf("disagreement: %v", err)
	}
	if err := agreed("num.partitions", got[:1]); err != nil {
		t.Errorf("one broker: %v", err)
	}
	if _, err := pickBrokerConfig(all, "num.partition"); err == nil || !strings.Contains(err.Error(), `did you mean "num.partitions"?`) {
		t.Errorf("typo: %v", err)
	}
}

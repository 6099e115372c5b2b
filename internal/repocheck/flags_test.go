package repocheck

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/weirmq/weir/cluster/config"
	"github.com/weirmq/weir/internal/harness"
)

// flagLine is one flag in `weir serve --help`: its name (one or two
// dashes); usageConfig the broker config its usage names first in
// parentheses, as "(advertised.listeners; default ...)".
var (
	flagLine    = regexp.MustCompile(`^\s+--?([a-z][a-z0-9-]*)\b`)
	usageConfig = regexp.MustCompile(`\(([a-z][a-z0-9._]*)[;)]`)
)

// TestServeFlagsAreInTheConfigTable runs `weir serve --help` and checks
// that the flags which set a Kafka config and the table's Entry.Flag (from
// which docs/configs.md is generated, checked by cluster/config's
// TestDocs) name the same flags for the same configs, so docs/configs.md
// documents every such flag.
func TestServeFlagsAreInTheConfigTable(t *testing.T) {
	stdout, stderr, _ := harness.Run(t, harness.Options{Path: harness.MustBuildWeir(t), Args: []string{"serve", "--help"}})
	help := stdout + stderr
	fromHelp := map[string]string{} // flag -> config
	lines := strings.Split(help, "\n")
	for i, line := range lines {
		m := flagLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		// The usage is on the flag's line or on the next one.
		usage := line
		if i+1 < len(lines) && flagLine.FindStringSubmatch(lines[i+1]) == nil {
			usage += " " + lines[i+1]
		}
		c := usageConfig.FindStringSubmatch(usage)
		if c == nil {
			continue
		}
		if _, ok := config.LookupBroker(c[1]); ok {
			fromHelp[m[1]] = c[1]
		}
	}
	if len(fromHelp) == 0 {
		t.Fatalf("no flag of weir serve --help names a broker config:\n%s", help)
	}
	fromTable := map[string]string{}
	for _, e := range config.BrokerConfigs() {
		if e.Flag != "" {
			fromTable[e.Flag] = e.Name
		}
	}
	for flag, name := range fromHelp {
		if fromTable[flag] != name {
			t.Errorf("weir serve --%s sets %s, but the config table names it for %q: set Entry.Flag in cluster/config/table.go and regenerate docs/configs.md", flag, name, fromTable[flag])
		}
	}
	for flag, name := range fromTable {
		if fromHelp[flag] != name {
			t.Errorf("the config table names --%s for %s, but weir serve --help does not list it so:\n%s", flag, name, help)
		}
	}
	root, err := harness.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile(filepath.Join(root, "docs", "configs.md"))
	if err != nil {
		t.Fatal(err)
	}
	for flag := range fromHelp {
		if !strings.Contains(string(doc), "`--"+flag+"`") {
			t.Errorf("docs/configs.md does not name --%s", flag)
		}
	}
}

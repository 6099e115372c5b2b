package repocheck

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/weirmq/weir/internal/harness"
	"github.com/weirmq/weir/wire"
)

// rangeRow is one row of the table of docs/clients.md rule 11: keys
// ("0" or "11-14"), then the advertised range ("0-11", "0-11 (served
// 3-11)" or "from 0").
var rangeRow = regexp.MustCompile(`^\| (\d+)(?:-(\d+))? \| [^|]+ \| (?:(\d+)-(\d+)(?: \(served (\d+)-(\d+)\))?|from (\d+)) \|`)

// TestClientsRangesMatchAPITable checks that the version ranges docs/clients.md
// rule 11 gives are those wire serves (wire.APIs, the table ApiVersions
// answers from), so the document cannot drift from the code.
func TestClientsRangesMatchAPITable(t *testing.T) {
	root, err := harness.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(root, "docs", "clients.md"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	start := strings.Index(text, "**Rule 11.")
	if start < 0 {
		t.Fatal("docs/clients.md has no rule 11")
	}
	section := text[start:]
	if end := strings.Index(section[1:], "**Rule "); end >= 0 {
		section = section[:end+1]
	}
	byKey := map[int16]wire.API{}
	for _, a := range wire.APIs() {
		byKey[a.Key] = a
	}
	num := func(s string) int16 { n, _ := strconv.Atoi(s); return int16(n) }
	rows := 0
	for _, line := range strings.Split(section, "\n") {
		m := rangeRow.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		rows++
		first, last := num(m[1]), num(m[1])
		if m[2] != "" {
			last = num(m[2])
		}
		for key := first; key <= last; key++ {
			a, ok := byKey[key]
			switch {
			case !ok:
				t.Errorf("rule 11 lists key %d, which wire does not advertise: %s", key, line)
			case m[7] != "":
				if a.Advertised.Min != num(m[7]) {
					t.Errorf("rule 11 says key %d is advertised from %s; wire advertises %d-%d", key, m[7], a.Advertised.Min, a.Advertised.Max)
				}
			default:
				adv := wire.VersionRange{Min: num(m[3]), Max: num(m[4])}
				served := adv
				if m[5] != "" {
					served = wire.VersionRange{Min: num(m[5]), Max: num(m[6])}
				}
				if a.Advertised != adv || a.Served != served {
					t.Errorf("rule 11 says key %d is advertised %v, served %v; wire advertises %v, serves %v", key, adv, served, a.Advertised, a.Served)
				}
			}
		}
	}
	if rows < 10 {
		t.Errorf("found %d rows in the table of rule 11, want the client APIs' rows", rows)
	}
}

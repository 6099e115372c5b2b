package repocheck

import (
	"os"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/weirmq/weir/internal/harness"
)

// TestRepositoryCitesOnlyItself runs Check on the repository: no file
// cites a file outside it, and every citation of docs/clients.md rules,
// docs/DESIGN.md sections and docs/*.md files points at something there.
func TestRepositoryCitesOnlyItself(t *testing.T) {
	root, err := harness.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	findings, err := Check(os.DirFS(root))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range findings {
		t.Error(f)
	}
}

// The planted citations are written split so that the walk of the real
// repository does not read them as citations.
const (
	clientsMD = "docs/clients" + ".md"
	designMD  = "docs/DESIGN" + ".md"
)

// TestCheckFindsEachKind plants one citation of each kind in a small tree
// and checks that Check reports exactly those, on the right lines.
func TestCheckFindsEachKind(t *testing.T) {
	fsys := fstest.MapFS{
		clientsMD: {Data: []byte("# Rules\n\n**Rule 1. One.** Text.\n\n**Rule 2. Two.**\n")},
		designMD:  {Data: []byte("# Design\n\n## Decisions\n\n### Leader lease\n")},
		"ok.go":   {Data: []byte("package x\n\n// See " + clientsMD + " rule 2 and " + designMD + " \"Leader\n// lease\" and " + clientsMD + ".\n")},
		"bad.go": {Data: []byte(strings.Join([]string{
			"package x",
			"// as " + "ARCHITECTURE" + ".md says",
			"// (" + clientsMD + " rule 3)",
			"// " + designMD + " \"Leader",
			"// election\"",
			"// see docs/" + "nothere.md",
			"// from ../" + "shared/x",
		}, "\n"))},
		"notes.md":      {Data: []byte("The " + "kafka-wire" + ".md rules.\n")},
		"data.txt":      {Data: []byte("ARCHITECTURE" + ".md\n")}, // not a .go or .md file
		".git/x.md":     {Data: []byte("ARCHITECTURE" + ".md\n")}, // hidden directories are skipped
		"sub/ok.md":     {Data: []byte("Rule 1 of " + clientsMD + " rule 1.\n")},
		"sub/other.txt": {Data: []byte(clientsMD + " rule 9\n")},
	}
	findings, err := Check(fsys)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range findings {
		got = append(got, f.String())
	}
	want := []string{
		`bad.go:2: cites "ARCHITECTURE` + `.md", a file outside the repository`,
		"bad.go:3: cites " + clientsMD + " rule 3, which " + clientsMD + " does not number",
		"bad.go:4: cites " + designMD + ` "Leader election", which is not a heading of ` + designMD,
		"bad.go:6: cites docs/" + "nothere.md, which does not exist",
		`bad.go:7: cites "../` + `shared/", a file outside the repository`,
		`notes.md:1: cites "kafka-wire` + `.md", a file outside the repository`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("findings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

package repocheck

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// outside lists the names of files kept outside the repository that no
// file of it may cite. They are written split so that this file does not
// cite them itself.
var outside = []string{
	"ARCHITECTURE" + ".md",
	"kafka-wire" + ".md",
	"reliability-tests" + ".md",
	"../" + "shared/",
}

var (
	ruleHeading = regexp.MustCompile(`(?m)^\*\*Rule (\d+)\.`)
	ruleCite    = regexp.MustCompile(`docs/clients\.md rules? (\d+)`)
	designCite  = regexp.MustCompile(`docs/DESIGN\.md "([^"]+)"`)
	docCite     = regexp.MustCompile(`\bdocs/([A-Za-z0-9_-]+\.md)\b`)
	// commentBreak joins a Go comment's lines so that a citation broken
	// over two lines reads as one.
	commentBreak = regexp.MustCompile(`\n[ \t]*(//)?[ \t]*`)
)

// Finding is one citation that breaks a rule.
type Finding struct {
	// File is the file's path, slash-separated, relative to the root.
	File string
	// Line is the 1-based line the citation starts on.
	Line int
	// Problem says what is wrong.
	Problem string
}

func (f Finding) String() string { return fmt.Sprintf("%s:%d: %s", f.File, f.Line, f.Problem) }

// Check walks fsys (the module root) and returns every finding in file
// order. Directories whose names start with "." (.git) are skipped; only
// .go and .md files are read.
func Check(fsys fs.FS) ([]Finding, error) {
	rules, headings, err := targets(fsys)
	if err != nil {
		return nil, err
	}
	var out []Finding
	err = fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != "." && strings.HasPrefix(d.Name(), ".") {
				return fs.SkipDir
			}
			return nil
		}
		if ext := path.Ext(p); ext != ".go" && ext != ".md" {
			return nil
		}
		b, err := fs.ReadFile(fsys, p)
		if err != nil {
			return fmt.Errorf("repocheck: read %s: %w", p, err)
		}
		out = append(out, checkFile(fsys, p, string(b), rules, headings)...)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("repocheck: walk: %w", err)
	}
	return out, nil
}

// targets reads what citations may point at: the rule numbers of
// docs/clients.md and the headings of docs/DESIGN.md. A missing file has
// none.
func targets(fsys fs.FS) (rules map[int]bool, headings map[string]bool, err error) {
	rules, headings = map[int]bool{}, map[string]bool{}
	if b, err := fs.ReadFile(fsys, "docs/clients.md"); err == nil {
		for _, m := range ruleHeading.FindAllStringSubmatch(string(b), -1) {
			n, _ := strconv.Atoi(m[1])
			rules[n] = true
		}
	} else if !isNotExist(err) {
		return nil, nil, fmt.Errorf("repocheck: %w", err)
	}
	if b, err := fs.ReadFile(fsys, "docs/DESIGN.md"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if t, ok := strings.CutPrefix(line, "#"); ok {
				headings[strings.TrimSpace(strings.TrimLeft(t, "#"))] = true
			}
		}
	} else if !isNotExist(err) {
		return nil, nil, fmt.Errorf("repocheck: %w", err)
	}
	return rules, headings, nil
}

func isNotExist(err error) bool { return errors.Is(err, fs.ErrNotExist) }

// checkFile returns the findings of one file.
func checkFile(fsys fs.FS, p, text string, rules map[int]bool, headings map[string]bool) []Finding {
	var out []Finding
	for i, line := range strings.Split(text, "\n") {
		for _, name := range outside {
			if strings.Contains(line, name) {
				out = append(out, Finding{p, i + 1, fmt.Sprintf("cites %q, a file outside the repository", name)})
			}
		}
	}
	// Citations may be broken over lines: match on the text with line
	// breaks (and Go comment markers) folded into spaces, and map each
	// match back to its line through an index of folded offsets.
	folded, lineAt := fold(text)
	for _, m := range ruleCite.FindAllStringSubmatchIndex(folded, -1) {
		n, _ := strconv.Atoi(folded[m[2]:m[3]])
		if !rules[n] {
			out = append(out, Finding{p, lineAt(m[0]), fmt.Sprintf("cites docs/clients.md rule %d, which docs/clients.md does not number", n)})
		}
	}
	for _, m := range designCite.FindAllStringSubmatchIndex(folded, -1) {
		h := folded[m[2]:m[3]]
		if !headings[h] {
			out = append(out, Finding{p, lineAt(m[0]), fmt.Sprintf("cites docs/DESIGN.md %q, which is not a heading of docs/DESIGN.md", h)})
		}
	}
	for _, m := range docCite.FindAllStringSubmatchIndex(folded, -1) {
		name := "docs/" + folded[m[2]:m[3]]
		if _, err := fs.Stat(fsys, name); err != nil {
			out = append(out, Finding{p, lineAt(m[0]), fmt.Sprintf("cites %s, which does not exist", name)})
		}
	}
	slices.SortStableFunc(out, func(a, b Finding) int { return a.Line - b.Line })
	return out
}

// fold returns text with each line break, and the indentation and Go
// comment marker that follow it, replaced by one space, and a function
// from an offset in the folded text to the 1-based line of the original.
func fold(text string) (string, func(int) int) {
	var sb strings.Builder
	var breaks []int // folded offsets at which a new original line starts
	last := 0
	for _, m := range commentBreak.FindAllStringIndex(text, -1) {
		sb.WriteString(text[last:m[0]])
		sb.WriteByte(' ')
		breaks = append(breaks, sb.Len())
		last = m[1]
	}
	sb.WriteString(text[last:])
	return sb.String(), func(off int) int {
		n, _ := slices.BinarySearch(breaks, off+1)
		return n + 1
	}
}

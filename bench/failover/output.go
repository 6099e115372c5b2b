package failover

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// The files WriteFiles writes under its directory.
const (
	JSONFile     = "failover.json"
	MarkdownFile = "failover.md"
)

// PictureFile is the PNG of fault f's scenario.
func PictureFile(f Fault) string { return "failover-" + string(f) + ".png" }

// WriteFiles writes the JSON, the Markdown summary and one PNG per
// scenario under dir (created if missing) and returns their paths.
func (res *Result) WriteFiles(dir string) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("output directory: %w", err)
	}
	var paths []string
	pictures := map[Fault]string{}
	for _, sc := range res.Scenarios {
		name := PictureFile(sc.Fault)
		p := filepath.Join(dir, name)
		if err := sc.WritePNG(p); err != nil {
			return paths, err
		}
		pictures[sc.Fault] = name
		paths = append(paths, p)
	}
	if res.NATS != nil {
		for _, sc := range res.NATS.Scenarios {
			name := NATSPictureFile(sc.Fault)
			p := filepath.Join(dir, name)
			if err := sc.WritePNG(p); err != nil {
				return paths, err
			}
			pictures[natsPictureKey(sc.Fault)] = name
			paths = append(paths, p)
		}
	}
	var js, md bytes.Buffer
	if err := res.WriteJSON(&js); err != nil {
		return paths, err
	}
	if err := res.WriteMarkdown(&md, pictures); err != nil {
		return paths, err
	}
	for _, f := range []struct {
		name string
		b    []byte
	}{{JSONFile, js.Bytes()}, {MarkdownFile, md.Bytes()}} {
		p := filepath.Join(dir, f.name)
		if err := os.WriteFile(p, f.b, 0o644); err != nil {
			return paths, fmt.Errorf("write %s: %w", p, err)
		}
		paths = append(paths, p)
	}
	return paths, nil
}

// ProgressBar returns a Config.Progress that redraws one line on w:
// scenario, round, a bar of the round's records sent, and the counts.
func ProgressBar(w io.Writer) func(Progress) {
	const width = 30
	return func(p Progress) {
		done := 0
		if p.Records > 0 {
			done = min(width, p.Sent*width/p.Records)
		}
		fmt.Fprintf(w, "\r%s %d/%d round %d/%d [%s%s] sent %d/%d acked %d consumed %d  %-20s",
			p.Fault, p.Scenario, p.Scenarios, p.Round, p.Rounds, strings.Repeat("#", done), strings.Repeat(" ", width-done),
			p.Sent, p.Records, p.Acked, p.Consumed, p.Phase)
	}
}

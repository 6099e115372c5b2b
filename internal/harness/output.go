package harness

import (
	"bytes"
	"fmt"
	"io"
	"regexp"
	"strings"
	"sync"
)

// stream is one of a process's two output streams.
type stream int

const (
	stdout stream = iota
	stderr
)

func (s stream) String() string {
	if s == stdout {
		return "stdout"
	}
	return "stderr"
}

// line is one complete line of output, without its newline.
type line struct {
	from stream
	text string
}

// output collects what a process writes: the raw bytes of each stream, the
// complete lines of both in arrival order, and a copy in a log file.
type output struct {
	mu      sync.Mutex
	raw     [2]bytes.Buffer
	partial [2][]byte // the unterminated tail of each stream
	lines   []line
	changed chan struct{} // closed and replaced whenever lines grows
	log     io.Writer     // nil once a write to it failed
	onLine  func(string)  // called with each stdout line, outside mu
}

func newOutput(log io.Writer, onLine func(string)) *output {
	return &output{changed: make(chan struct{}), log: log, onLine: onLine}
}

// streamWriter is the io.Writer given to the child for one stream.
type streamWriter struct {
	o    *output
	from stream
}

// Write records p. os/exec calls it from one goroutine per stream, so the
// OnLine callback sees stdout lines one at a time, in order.
func (w streamWriter) Write(p []byte) (int, error) {
	w.o.deliver(w.from, w.o.add(w.from, p))
	return len(p), nil
}

// add appends p to stream from and returns the lines it completed.
func (o *output) add(from stream, p []byte) []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.raw[from].Write(p)
	if o.log != nil {
		if _, err := o.log.Write(p); err != nil {
			o.log = nil // the in-memory copy is still complete
		}
	}
	data := append(o.partial[from], p...)
	var done []string
	for {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			break
		}
		done = append(done, strings.TrimSuffix(string(data[:i]), "\r"))
		data = data[i+1:]
	}
	o.partial[from] = append(o.partial[from][:0], data...)
	o.appendLines(from, done)
	return done
}

// flush turns the unterminated tail of each stream into a last line, once
// the process has exited and its output is drained.
func (o *output) flush() {
	var last [2][]string
	o.mu.Lock()
	for _, from := range []stream{stdout, stderr} {
		if len(o.partial[from]) > 0 {
			last[from] = []string{string(o.partial[from])}
			o.partial[from] = nil
			o.appendLines(from, last[from])
		}
	}
	o.mu.Unlock()
	o.deliver(stdout, last[stdout])
}

// appendLines records lines and wakes the waiters. o.mu must be held.
func (o *output) appendLines(from stream, texts []string) {
	if len(texts) == 0 {
		return
	}
	for _, t := range texts {
		o.lines = append(o.lines, line{from: from, text: t})
	}
	close(o.changed)
	o.changed = make(chan struct{})
}

// deliver passes stdout lines to the OnLine callback.
func (o *output) deliver(from stream, texts []string) {
	if from != stdout || o.onLine == nil {
		return
	}
	for _, t := range texts {
		o.onLine(t)
	}
}

// match returns the first line at index >= from that re matches and the
// index after it; when none does, the index to resume from and a channel
// closed when more lines arrive.
func (o *output) match(re *regexp.Regexp, from int) (text string, found bool, next int, changed <-chan struct{}) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for i := from; i < len(o.lines); i++ {
		if re.MatchString(o.lines[i].text) {
			return o.lines[i].text, true, i + 1, nil
		}
	}
	return "", false, len(o.lines), o.changed
}

// count returns the number of complete lines so far.
func (o *output) count() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return len(o.lines)
}

// bytes returns a copy of everything stream from carried so far.
func (o *output) bytes(from stream) []byte {
	o.mu.Lock()
	defer o.mu.Unlock()
	return bytes.Clone(o.raw[from].Bytes())
}

// tail returns the last n lines of stream from, unterminated tail included.
func (o *output) tail(from stream, n int) []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	var out []string
	if len(o.partial[from]) > 0 {
		out = append(out, string(o.partial[from]))
	}
	for i := len(o.lines) - 1; i >= 0 && len(out) < n; i-- {
		if o.lines[i].from == from {
			out = append(out, o.lines[i].text)
		}
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out
}

// tailReport formats the last n lines of both streams for an error or a
// failed test's log.
func (o *output) tailReport(name string, n int) string {
	var b strings.Builder
	for _, from := range []stream{stdout, stderr} {
		lines := o.tail(from, n)
		if len(lines) == 0 {
			fmt.Fprintf(&b, "--- %s %s: (empty)\n", name, from)
			continue
		}
		fmt.Fprintf(&b, "--- %s %s, last %d lines:\n", name, from, len(lines))
		for _, l := range lines {
			b.WriteString(l)
			b.WriteByte('\n')
		}
	}
	return b.String()
}

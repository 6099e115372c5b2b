package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/twmb/franz-go/pkg/kgo"
)

// The record formats of `weir produce -f` and `weir consume -f` are rpk's
// (`rpk topic produce|consume --format`): percent verbs such as %t topic,
// %k key, %v value, %h{...} headers, %p partition, %o offset, %d timestamp,
// with brace modifiers and \n \t \r \\ \xNN escapes. franz-go, the client
// both commands use, implements that language (kgo.NewRecordReader and
// kgo.NewRecordFormatter, the same code rpk runs), so weir adds only its
// named formats and the rules below.

const (
	// defaultProduceFormat reads one record a line, the whole line its
	// value, as kafka-console-producer.sh and rpk do.
	defaultProduceFormat = `%v\n`
	// textConsumeLayout is what `weir consume -f text` (the default)
	// prints: the value and a newline, as kafka-console-consumer.sh does.
	textConsumeLayout = `%v\n`
	// defaultProducedFormat is the line `weir produce` prints per record
	// produced, rpk's wording.
	defaultProducedFormat = `Produced to partition %p at offset %o with timestamp %d.\n`
)

// recordPrinter writes consumed records in one of weir consume's formats.
type recordPrinter struct {
	// json prints one JSON object a line (-f json); otherwise layout does.
	json   bool
	layout *kgo.RecordFormatter
}

// newRecordPrinter parses a --format value: "text" (the value and a
// newline), "json" (one object a line), or an rpk format layout.
func newRecordPrinter(format string) (*recordPrinter, error) {
	switch format {
	case "json":
		return &recordPrinter{json: true}, nil
	case "text":
		format = textConsumeLayout
	case "":
		return nil, errors.New("empty format: give text, json or a layout such as '%k %v\\n'")
	}
	f, err := kgo.NewRecordFormatter(format)
	if err != nil {
		return nil, fmt.Errorf("format %q: %w", format, err)
	}
	return &recordPrinter{layout: f}, nil
}

// appendRecord appends r, fetched from partition p (nil when unknown, for
// the %[ %| %] verbs), to b.
func (rp *recordPrinter) appendRecord(b []byte, p *kgo.FetchPartition, r *kgo.Record) []byte {
	if !rp.json {
		if p == nil {
			return rp.layout.AppendRecord(b, r)
		}
		return rp.layout.AppendPartitionRecord(b, p, r)
	}
	return appendRecordJSON(b, r)
}

// recordJSON is one record as `weir consume -f json` prints it. Key and
// value are null when the record has none (a tombstone's value); text
// that is not valid UTF-8 has its bad bytes replaced by U+FFFD, so binary
// data wants a layout with %k{base64} or %v{hex} instead.
type recordJSON struct {
	Topic     string       `json:"topic"`
	Key       *string      `json:"key"`
	Value     *string      `json:"value"`
	Headers   []headerJSON `json:"headers"`
	Timestamp int64        `json:"timestamp"`
	Partition int32        `json:"partition"`
	Offset    int64        `json:"offset"`
}

// headerJSON is one record header in recordJSON.
type headerJSON struct {
	Key   string  `json:"key"`
	Value *string `json:"value"`
}

// appendRecordJSON appends r as one line of JSON.
func appendRecordJSON(b []byte, r *kgo.Record) []byte {
	m := recordJSON{
		Topic:     r.Topic,
		Key:       jsonText(r.Key),
		Value:     jsonText(r.Value),
		Headers:   make([]headerJSON, 0, len(r.Headers)),
		Timestamp: r.Timestamp.UnixMilli(),
		Partition: r.Partition,
		Offset:    r.Offset,
	}
	for _, h := range r.Headers {
		m.Headers = append(m.Headers, headerJSON{Key: h.Key, Value: jsonText(h.Value)})
	}
	buf := bytes.NewBuffer(b)
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	// recordJSON holds strings and numbers only: encoding cannot fail.
	_ = enc.Encode(m)
	return buf.Bytes()
}

// jsonText is b as a JSON string, or nil (null) for a nil slice.
func jsonText(b []byte) *string {
	if b == nil {
		return nil
	}
	s := string(b)
	return &s
}

// recordInput reads the records `weir produce` sends from its input.
type recordInput struct {
	reader *kgo.RecordReader
	// key, when not nil, is every record's key unless the format reads one.
	key []byte
	// headers go first on every record, before any the format reads.
	headers []kgo.RecordHeader
	// partition is every record's partition unless the format reads one
	// (with the manual partitioner; -1 otherwise).
	partition int32
	// tombstone produces an empty value as null (-Z).
	tombstone bool
	// read counts the records returned, for error messages.
	read int
}

// newRecordInput returns a reader of records from r in the rpk input
// format. A format that ends in a newline also takes a last line that
// lacks one, as line-reading tools do.
func newRecordInput(r io.Reader, format string) (*recordInput, error) {
	if format == "" {
		return nil, errors.New("empty format: give a layout such as '%v\\n' or '%k %v\\n'")
	}
	if endsInNewline(format) {
		r = &newlineTerminated{r: r}
	}
	rr, err := kgo.NewRecordReader(r, format)
	if err != nil {
		return nil, fmt.Errorf("format %q: %w", format, err)
	}
	return &recordInput{reader: rr, partition: -1}, nil
}

// next returns the next record, io.EOF at the end of the input, or an
// error naming the record that does not match the format.
func (in *recordInput) next() (*kgo.Record, error) {
	r := &kgo.Record{Partition: in.partition, Key: in.key}
	if err := in.reader.ReadRecordInto(r); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, io.EOF
		}
		return nil, fmt.Errorf("input record %d does not match the format: %w", in.read+1, err)
	}
	in.read++
	if len(in.headers) > 0 {
		r.Headers = append(append(make([]kgo.RecordHeader, 0, len(in.headers)+len(r.Headers)), in.headers...), r.Headers...)
	}
	// The reader leaves an empty value nil; Kafka's console producer sends
	// an empty line as an empty value, not as a tombstone.
	switch {
	case in.tombstone && len(r.Value) == 0:
		r.Value = nil
	case r.Value == nil:
		r.Value = []byte{}
	}
	return r, nil
}

// endsInNewline reports whether a format layout ends in a newline, a
// literal one or the escape \n (not a backslash escaped as \\ and an n).
func endsInNewline(format string) bool {
	if strings.HasSuffix(format, "\n") {
		return true
	}
	if !strings.HasSuffix(format, "n") {
		return false
	}
	slashes := 0
	for i := len(format) - 2; i >= 0 && format[i] == '\\'; i-- {
		slashes++
	}
	return slashes%2 == 1
}

// newlineTerminated passes its reader through and, if the input is not
// empty and does not end in a newline, adds one at the end.
type newlineTerminated struct {
	r io.Reader
	// last is the last byte read, if seen.
	last byte
	seen bool
	// done: the underlying reader is at its end and any newline was added.
	done bool
}

func (n *newlineTerminated) Read(p []byte) (int, error) {
	if n.done {
		return 0, io.EOF
	}
	if len(p) == 0 {
		return 0, nil
	}
	k, err := n.r.Read(p)
	if k > 0 {
		n.last, n.seen = p[k-1], true
	}
	if !errors.Is(err, io.EOF) {
		return k, err
	}
	if k > 0 {
		return k, nil // the end is reported by the next call
	}
	n.done = true
	if n.seen && n.last != '\n' {
		p[0] = '\n'
		return 1, nil
	}
	return 0, io.EOF
}

// headerFlag is the repeatable -H flag of `weir produce`: key=value
// (kcat's and Kafka's form) or rpk's key:value; whichever of '=' and ':'
// comes first separates the key from the value, which may be empty.
// Headers keep the order given and may repeat a key, as Kafka allows.
type headerFlag []kgo.RecordHeader

func (h *headerFlag) String() string {
	parts := make([]string, 0, len(*h))
	for _, x := range *h {
		parts = append(parts, x.Key+"="+string(x.Value))
	}
	return strings.Join(parts, " ")
}

// Set adds one header.
func (h *headerFlag) Set(v string) error {
	i := strings.IndexAny(v, "=:")
	switch {
	case i < 0:
		return fmt.Errorf("header %q: want key=value", v)
	case i == 0:
		return fmt.Errorf("header %q: empty key", v)
	}
	*h = append(*h, kgo.RecordHeader{Key: v[:i], Value: []byte(v[i+1:])})
	return nil
}

// hasVerb reports whether format uses the percent verb c (not as part of
// a %% escape).
func hasVerb(format string, c byte) bool {
	for i := 0; i+1 < len(format); i++ {
		if format[i] != '%' {
			continue
		}
		if format[i+1] == c {
			return true
		}
		i++ // skip the verb, %% among them
	}
	return false
}

package cli

import (
	"encoding/json"
	"fmt"
	"io"
)

// Output is the --format flag of a command that lists or describes.
type Output struct {
	format *string
	fs     *FlagSet
}

// Formats are the values --format takes.
var Formats = []string{"text", "json"}

// AddFormatFlag registers --format text|json on fs; fs.Parse refuses any
// other value.
func AddFormatFlag(fs *FlagSet) *Output {
	o := &Output{fs: fs, format: fs.String("format", "text", "output `format`: text (as Kafka's tools print) or json")}
	fs.afterParse(o.check)
	return o
}

// check validates --format, as a usage error.
func (o *Output) check() error {
	for _, f := range Formats {
		if *o.format == f {
			return nil
		}
	}
	err := fmt.Errorf("--format %q, want text or json", *o.format)
	if s := Suggest(*o.format, Formats); s != "" {
		err = fmt.Errorf("--format %q, want text or json: did you mean %s?", *o.format, s)
	}
	return o.fs.UsageError(err)
}

// JSON reports whether --format json was asked for.
func (o *Output) JSON() bool { return *o.format == "json" }

// Write writes v as one indented JSON document when --format json was
// asked for, else calls text.
func (o *Output) Write(w io.Writer, v any, text func(io.Writer) error) error {
	if err := o.check(); err != nil {
		return err
	}
	if !o.JSON() {
		return text(w)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("write json: %w", err)
	}
	return nil
}

package config

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

// Broker is a node's broker config: the values set in server.properties
// and by flags, over the table's defaults. The zero value is not usable;
// build one with NewBroker, Parse or ParseFile.
type Broker struct {
	set     map[string]setting
	ignored map[string]bool // Kafka configs set and not used (ignored.go)
}

// setting is one explicitly configured value and where it came from.
type setting struct {
	value  string
	origin string // "FILE:LINE" or "override"
}

// NewBroker returns a Broker with every config at its default.
func NewBroker() *Broker {
	return &Broker{set: make(map[string]setting), ignored: make(map[string]bool)}
}

// ParseFile reads a server.properties file; see Parse.
func ParseFile(path string) (*Broker, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	defer f.Close()
	return parse(f, path)
}

// Parse reads a Kafka server.properties file in the Java properties format
// and checks every key and value against the broker config table. The
// format's common subset is accepted:
//
//   - one "key=value", "key: value" or "key value" per line; blanks around
//     the separator are dropped, and the value runs to the end of the line;
//   - blank lines, and lines whose first non-blank character is '#' or '!',
//     are ignored;
//   - a line ending in an odd number of backslashes continues on the next
//     line, whose leading blanks are dropped;
//   - escapes \t \n \r \f \uXXXX, and a backslash before any other
//     character ('\\', '\=', '\:', '\ ', '\#') stands for that character;
//   - a key given twice keeps its last value.
//
// An unknown key or an invalid value is an error wrapping ErrInvalidConfig
// that names the key and its line. Kafka configs weir has no use for
// (thread counts, socket buffers, KRaft's process layout) are accepted and
// listed by Ignored.
func Parse(r io.Reader) (*Broker, error) { return parse(r, "server.properties") }

func parse(r io.Reader, name string) (*Broker, error) {
	props, err := readProperties(r)
	if err != nil {
		return nil, fmt.Errorf("config: %s: %w", name, err)
	}
	b := NewBroker()
	for _, p := range props {
		origin := name + ":" + strconv.Itoa(p.line)
		if err := b.setValue(p.key, p.value, origin); err != nil {
			return nil, fmt.Errorf("%s: %w", origin, err)
		}
	}
	return b, nil
}

// Override sets a broker config as a command-line flag does, over any value
// from the file (--data is log.dirs, --listen listeners, --advertise
// advertised.listeners, --node-id node.id: the table's Entry.Flag).
func (b *Broker) Override(name, value string) error {
	if err := b.setValue(name, value, "override"); err != nil {
		return fmt.Errorf("override: %w", err)
	}
	return nil
}

func (b *Broker) setValue(name, v, origin string) error {
	e, ok := LookupBroker(name)
	if !ok && ignoredBroker[name] {
		b.ignored[name] = true
		return nil
	}
	if !ok {
		return fmt.Errorf("%w: Unknown broker config %s", ErrInvalidConfig, name)
	}
	if err := e.Check(v); err != nil {
		return err
	}
	b.set[name] = setting{value: v, origin: origin}
	return nil
}

// property is one key/value pair of a properties file.
type property struct {
	key, value string
	line       int // where its logical line starts, from 1
}

// readProperties splits r into properties (see Parse for the format).
func readProperties(r io.Reader) ([]property, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	var out []property
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimLeft(sc.Text(), " \t\f")
		if line == "" || line[0] == '#' || line[0] == '!' {
			continue
		}
		start := n
		for continues(line) && sc.Scan() {
			n++
			line = line[:len(line)-1] + strings.TrimLeft(sc.Text(), " \t\f")
		}
		if continues(line) {
			line = line[:len(line)-1]
		}
		k, v := splitProperty(line)
		out = append(out, property{key: unescape(k), value: unescape(v), line: start})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("line %d: %w", n+1, err)
	}
	return out, nil
}

// continues reports whether line ends in an odd number of backslashes.
func continues(line string) bool {
	n := 0
	for i := len(line) - 1; i >= 0 && line[i] == '\\'; i-- {
		n++
	}
	return n%2 == 1
}

// splitProperty splits a logical line at the first unescaped '=', ':' or
// blank, then drops blanks and at most one '=' or ':' before the value.
func splitProperty(line string) (key, val string) {
	i := 0
	for i < len(line) {
		c := line[i]
		if c == '\\' {
			i += 2
			continue
		}
		if c == '=' || c == ':' || c == ' ' || c == '\t' || c == '\f' {
			break
		}
		i++
	}
	if i > len(line) {
		i = len(line)
	}
	key, rest := line[:i], strings.TrimLeft(line[i:], " \t\f")
	if rest != "" && (rest[0] == '=' || rest[0] == ':') {
		rest = strings.TrimLeft(rest[1:], " \t\f")
	}
	return key, rest
}

// unescape resolves the escapes of the properties format.
func unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var sb strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 == len(s) {
			sb.WriteByte(c)
			continue
		}
		i++
		switch s[i] {
		case 't':
			sb.WriteByte('\t')
		case 'n':
			sb.WriteByte('\n')
		case 'r':
			sb.WriteByte('\r')
		case 'f':
			sb.WriteByte('\f')
		case 'u':
			if r, err := strconv.ParseUint(s[i+1:min(i+5, len(s))], 16, 32); err == nil && i+5 <= len(s) {
				sb.WriteRune(rune(r))
				i += 4
				continue
			}
			sb.WriteByte('u')
		default:
			sb.WriteByte(s[i])
		}
	}
	return sb.String()
}

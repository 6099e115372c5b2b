package cli

import (
	"bytes"
	"errors"
	"flag"
	"strings"
	"testing"
)

func newTestFlags() (*FlagSet, *bytes.Buffer, *string, *bool, *int) {
	var stderr bytes.Buffer
	fs := NewFlagSet("topics create", "--topic T [flags]", &stderr)
	topic := fs.String("topic", "", "topic `name`")
	verbose := fs.Bool("verbose", false, "say more")
	n := fs.Int("num", 0, "how many")
	fs.Alias("t", "topic")
	fs.Alias("n", "num")
	return fs, &stderr, topic, verbose, n
}

func TestParseFlagsAnywhere(t *testing.T) {
	for _, tc := range []struct {
		args    []string
		topic   string
		verbose bool
		num     int
		rest    []string
	}{
		{args: []string{"--topic", "a", "f1", "f2"}, topic: "a", rest: []string{"f1", "f2"}},
		{args: []string{"f1", "--topic", "a", "f2", "--verbose"}, topic: "a", verbose: true, rest: []string{"f1", "f2"}},
		{args: []string{"f1", "-t=b", "-n", "-3"}, topic: "b", num: -3, rest: []string{"f1"}},
		{args: []string{"-verbose", "--num=4", "--", "--topic", "x"}, verbose: true, num: 4, rest: []string{"--topic", "x"}},
		{args: []string{"-", "-1", "--topic", "-"}, topic: "-", rest: []string{"-", "-1"}},
		{args: []string{"--verbose=false", "a"}, rest: []string{"a"}},
	} {
		fs, stderr, topic, verbose, n := newTestFlags()
		if err := fs.Parse(tc.args); err != nil {
			t.Fatalf("Parse(%q): %v (%s)", tc.args, err, stderr)
		}
		if *topic != tc.topic || *verbose != tc.verbose || *n != tc.num || strings.Join(fs.Args(), " ") != strings.Join(tc.rest, " ") {
			t.Errorf("Parse(%q) = topic %q verbose %v num %d args %q, want %q %v %d %q",
				tc.args, *topic, *verbose, *n, fs.Args(), tc.topic, tc.verbose, tc.num, tc.rest)
		}
	}
}

func TestParseMistakes(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--tpoic", "a"}, "unknown flag --tpoic: did you mean --topic?"},
		{[]string{"--verbos"}, "did you mean --verbose?"},
		{[]string{"--zzz"}, "unknown flag --zzz\n"},
		{[]string{"--topic"}, "flag --topic needs a value"},
		{[]string{"--num", "x"}, `invalid value "x" for flag --num`},
	} {
		fs, stderr, _, _, _ := newTestFlags()
		err := fs.Parse(tc.args)
		var uerr *UsageError
		if !errors.As(err, &uerr) || !uerr.Reported {
			t.Fatalf("Parse(%q) = %v, want a reported usage error", tc.args, err)
		}
		if !strings.Contains(stderr.String(), tc.want) || !strings.Contains(stderr.String(), "run 'weir topics create -h' for usage") {
			t.Errorf("Parse(%q) printed %q, want it to contain %q", tc.args, stderr, tc.want)
		}
	}
}

func TestHelpListsEveryName(t *testing.T) {
	fs, stderr, _, _, _ := newTestFlags()
	if err := fs.Parse([]string{"a", "--help"}); !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("Parse(--help) = %v, want flag.ErrHelp", err)
	}
	out := stderr.String()
	for _, want := range []string{"usage: weir topics create --topic T [flags]", "--topic, -t name", "--num, -n int", "--verbose  "} {
		if !strings.Contains(out, want) {
			t.Errorf("usage lacks %q:\n%s", want, out)
		}
	}
	if strings.Count(out, "how many") != 1 {
		t.Errorf("an alias is listed as a flag of its own:\n%s", out)
	}
}

func TestChangedByAlias(t *testing.T) {
	fs, _, _, _, _ := newTestFlags()
	if err := fs.Parse([]string{"-t", "x"}); err != nil {
		t.Fatal(err)
	}
	if !fs.Changed("topic") || !fs.Changed("t") || fs.Changed("num") || fs.Changed("n") {
		t.Errorf("Changed: topic %v t %v num %v n %v, want true true false false",
			fs.Changed("topic"), fs.Changed("t"), fs.Changed("num"), fs.Changed("n"))
	}
}

func TestSuggest(t *testing.T) {
	cands := []string{"create", "list", "describe", "delete", "alter-config", "add-partitions"}
	for name, want := range map[string]string{
		"craete": "create", "lst": "list", "describ": "describe", "delte": "delete",
		"add": "add-partitions", "xyzzy": "", "alter": "alter-config", "l": "",
	} {
		if got := Suggest(name, cands); got != want {
			t.Errorf("Suggest(%q) = %q, want %q", name, got, want)
		}
	}
}

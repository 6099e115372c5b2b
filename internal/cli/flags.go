package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
)

// FlagSet is the flags of one command. It embeds the standard library's
// flag.FlagSet, so flags are registered as usual (fs.String, fs.Var, ...),
// and adds what weir's commands share: flags in any position, several names
// for a flag, "did you mean" for a typo, and a usage listing that spells
// flags with two dashes as Kafka's tools do.
type FlagSet struct {
	*flag.FlagSet
	name      string
	argsUsage string
	stderr    io.Writer
	// canonical maps every alias to the name the flag was registered with.
	canonical map[string]string
	// aliases lists each flag's other names, in the order they were added.
	aliases map[string][]string
	// checks run after a successful parse, in the order added: the shared
	// flags' own validation (--format's value).
	checks []func() error
}

// NewFlagSet returns the flags of command name ("topics create"); its usage
// reads "usage: weir NAME ARGSUSAGE" followed by the flags, printed to
// stderr.
func NewFlagSet(name, argsUsage string, stderr io.Writer) *FlagSet {
	f := &FlagSet{
		FlagSet:   flag.NewFlagSet(name, flag.ContinueOnError),
		name:      name,
		argsUsage: argsUsage,
		stderr:    stderr,
		canonical: map[string]string{},
		aliases:   map[string][]string{},
	}
	// The flag package's own error reports are replaced by UsageError.
	f.FlagSet.SetOutput(io.Discard)
	// The flag package calls Usage on a bad value; UsageError points at -h
	// instead of printing the whole list.
	f.FlagSet.Usage = func() {}
	return f
}

// Name returns the command's name, as given to NewFlagSet.
func (f *FlagSet) Name() string { return f.name }

// Stderr returns where the command writes diagnostics.
func (f *FlagSet) Stderr() io.Writer { return f.stderr }

// Alias makes alias another name of the registered flag canonical: Kafka's
// spelling beside weir's (--bootstrap-server for --brokers), or a short
// letter (-k for --key). It panics if canonical is not registered or alias
// is taken, as flag.Var does for a duplicate: both are programming errors.
func (f *FlagSet) Alias(alias, canonical string) {
	fl := f.FlagSet.Lookup(canonical)
	if fl == nil {
		panic(fmt.Sprintf("cli: alias %q of unregistered flag %q", alias, canonical))
	}
	if c, ok := f.canonical[canonical]; ok {
		canonical = c
	}
	f.FlagSet.Var(fl.Value, alias, fl.Usage)
	f.canonical[alias] = canonical
	f.aliases[canonical] = append(f.aliases[canonical], alias)
}

// canonicalName returns the registered name of the flag called name.
func (f *FlagSet) canonicalName(name string) string {
	if c, ok := f.canonical[name]; ok {
		return c
	}
	return name
}

// Changed reports whether the command line set the flag name, under any of
// its names.
func (f *FlagSet) Changed(name string) bool {
	want := f.canonicalName(name)
	set := false
	f.FlagSet.Visit(func(fl *flag.Flag) {
		if f.canonicalName(fl.Name) == want {
			set = true
		}
	})
	return set
}

// Parse parses args, flags and positional arguments in any order, and
// leaves the positional ones in Args. It returns flag.ErrHelp for -h,
// -help or --help (after printing the usage to stderr), a reported
// *UsageError for a mistake, or nil.
func (f *FlagSet) Parse(args []string) error {
	var flags, positional []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			positional = append(positional, args[i+1:]...)
			break
		}
		if len(a) < 2 || a[0] != '-' || isNumber(a) && f.FlagSet.Lookup(strings.TrimLeft(a, "-")) == nil {
			// "-" (standard input) and negative numbers are arguments.
			positional = append(positional, a)
			continue
		}
		name := strings.TrimPrefix(strings.TrimPrefix(a, "-"), "-")
		name, value, hasValue := strings.Cut(name, "=")
		fl := f.FlagSet.Lookup(name)
		if fl == nil {
			if name == "h" || name == "help" {
				f.PrintUsage()
				return flag.ErrHelp
			}
			return f.UsageError(f.unknownFlag(name))
		}
		switch {
		case hasValue:
			flags = append(flags, "--"+name+"="+value)
		case isBoolFlag(fl):
			flags = append(flags, "--"+name)
		case i+1 < len(args):
			flags = append(flags, "--"+name+"="+args[i+1])
			i++
		default:
			return f.UsageError(fmt.Errorf("flag --%s needs a value", name))
		}
	}
	if err := f.FlagSet.Parse(append(flags, append([]string{"--"}, positional...)...)); err != nil {
		return f.UsageError(errors.New(strings.Replace(err.Error(), " -", " --", 1)))
	}
	for _, check := range f.checks {
		if err := check(); err != nil {
			return err
		}
	}
	return nil
}

// ParseNoArgs is Parse for a command that takes no positional arguments:
// any left are a usage error.
func (f *FlagSet) ParseNoArgs(args []string) error {
	if err := f.Parse(args); err != nil {
		return err
	}
	return f.NoArgs()
}

// afterParse adds a check that Parse runs once the flags are set; it
// returns a reported usage error (from UsageError) to refuse them.
func (f *FlagSet) afterParse(check func() error) { f.checks = append(f.checks, check) }

// unknownFlag describes a flag the command does not have, naming the
// closest one it does.
func (f *FlagSet) unknownFlag(name string) error {
	var names []string
	f.FlagSet.VisitAll(func(fl *flag.Flag) { names = append(names, fl.Name) })
	if s := Suggest(name, names); s != "" {
		return fmt.Errorf("unknown flag --%s: did you mean --%s?", name, s)
	}
	return fmt.Errorf("unknown flag --%s", name)
}

// isNumber reports whether s reads as a number, so "-1" can be an argument.
func isNumber(s string) bool {
	_, err := strconv.ParseFloat(s, 64)
	return err == nil
}

// isBoolFlag reports whether fl takes no value ("--verbose").
func isBoolFlag(fl *flag.Flag) bool {
	b, ok := fl.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

// UsageError reports a command-line mistake, err, on stderr with a pointer
// to the command's flags, and returns it as a reported usage error.
func (f *FlagSet) UsageError(err error) error {
	fmt.Fprintf(f.stderr, "weir %s: %v\nrun 'weir %s -h' for usage\n", f.name, err, f.name)
	return &UsageError{Err: err, Reported: true}
}

// NoArgs returns a usage error if positional arguments are left.
func (f *FlagSet) NoArgs() error {
	if f.FlagSet.NArg() > 0 {
		return f.UsageError(fmt.Errorf("unexpected arguments: %s", strings.Join(f.FlagSet.Args(), " ")))
	}
	return nil
}

// PrintUsage writes the command's usage line and flags to stderr, each flag
// with all its names, its value's name and its default.
func (f *FlagSet) PrintUsage() {
	w := f.stderr
	fmt.Fprintf(w, "usage: weir %s %s\n", f.name, f.argsUsage)
	var flags []*flag.Flag
	f.FlagSet.VisitAll(func(fl *flag.Flag) {
		if _, alias := f.canonical[fl.Name]; !alias {
			flags = append(flags, fl)
		}
	})
	if len(flags) == 0 {
		return
	}
	sort.Slice(flags, func(i, j int) bool { return flags[i].Name < flags[j].Name })
	fmt.Fprint(w, "\nflags:\n")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, fl := range flags {
		names := dashed(fl.Name)
		for _, a := range f.aliases[fl.Name] {
			names += ", " + dashed(a)
		}
		valueName, usage := flag.UnquoteUsage(fl)
		if valueName != "" && !isBoolFlag(fl) {
			names += " " + valueName
		}
		if def := fl.DefValue; def != "" && def != "false" && def != "0" && def != "[]" {
			usage += fmt.Sprintf(" (default %s)", def)
		}
		fmt.Fprintf(tw, "  %s\t%s\n", names, usage)
	}
	tw.Flush()
}

// dashed spells a flag as typed: -k for one letter, --name for the rest.
func dashed(name string) string {
	if len(name) == 1 {
		return "-" + name
	}
	return "--" + name
}

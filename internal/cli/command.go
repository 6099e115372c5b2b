package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"text/tabwriter"
)

// Command is one command of the weir binary, or of a command group such as
// `weir topics`.
type Command struct {
	// Name is what follows "weir" (or "weir <group>") on the command line.
	Name string
	// Summary is the one line the usage prints beside the name.
	Summary string
	// Run executes the command with the arguments that follow its name. It
	// writes results to stdout and diagnostics to stderr and returns an
	// error to fail: a *UsageError exits with status 2, flag.ErrHelp with
	// 0, any other error with 1. It must return once ctx is cancelled.
	Run func(ctx context.Context, args []string, stdout, stderr io.Writer) error
}

// Lookup returns the command of cmds called name.
func Lookup(cmds []Command, name string) (Command, bool) {
	for _, c := range cmds {
		if c.Name == name {
			return c, true
		}
	}
	return Command{}, false
}

// Unknown returns the usage error for a command name that is not in cmds,
// naming the closest one; what is "command" or "topics command".
func Unknown(what, name string, cmds []Command) error {
	names := make([]string, len(cmds))
	for i, c := range cmds {
		names[i] = c.Name
	}
	if s := Suggest(name, names); s != "" {
		return Usagef("unknown %s %q: did you mean %q?", what, name, s)
	}
	return Usagef("unknown %s %q", what, name)
}

// Dispatch runs `weir <group> <sub> ...`: the entry of subs named by
// args[0], with the arguments after it.
func Dispatch(ctx context.Context, group string, subs []Command, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		PrintCommands(stderr, "weir "+group, subs)
		return &UsageError{Err: fmt.Errorf("no %s command named", group), Reported: true}
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		PrintCommands(stderr, "weir "+group, subs)
		return flag.ErrHelp
	}
	if s, ok := Lookup(subs, args[0]); ok {
		return s.Run(ctx, args[1:], stdout, stderr)
	}
	return Unknown(group+" command", args[0], subs)
}

// PrintCommands lists the commands of prefix ("weir topics") to w.
func PrintCommands(w io.Writer, prefix string, subs []Command) {
	fmt.Fprintf(w, "usage: %s <command> [flags]\n\ncommands:\n", prefix)
	tw := tabwriter.NewWriter(w, 0, 0, 3, ' ', 0)
	for _, s := range subs {
		fmt.Fprintf(tw, "  %s\t%s\n", s.Name, s.Summary)
	}
	tw.Flush()
	fmt.Fprintf(w, "\n'%s <command> -h' prints a command's flags.\n", prefix)
}

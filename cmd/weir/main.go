package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"strings"
	"syscall"
	"text/tabwriter"

	"github.com/weirmq/weir/internal/cli"
)

// commands is the table of weir's subcommands, in the order `weir help`
// lists them. Adding a command is one line here plus the file holding its
// run function; nothing registers itself. The help command is built into
// run, not listed here.
var commands = []cli.Command{
	{Name: "serve", Summary: "run a broker: 'weir serve' with no flags serves 127.0.0.1:9092 from ./weir-data", Run: runServe},
	{Name: "produce", Summary: "produce records read from standard input, one a line or in rpk's --format verbs, as rpk topic produce", Run: runProduce},
	{Name: "consume", Summary: "print the records of topics (-o start|end|OFFSET|@TIME, -n COUNT, -g GROUP, -f text|json|FORMAT), as rpk topic consume", Run: runConsume},
	{Name: "topics", Summary: "create, list, describe, add partitions to and delete topics, alter their configs, as kafka-topics.sh and kafka-configs.sh", Run: runTopics},
	{Name: "groups", Summary: "list, describe (offsets, lag, members), delete consumer groups, delete and reset their offsets, as kafka-consumer-groups.sh", Run: runGroups},
	{Name: "cluster", Summary: "describe the cluster: 'weir cluster info' (id, controller, brokers), 'weir cluster config get|describe' (broker configs)", Run: runCluster},
	{Name: "metadata-quorum", Summary: "describe the metadata quorum's --status or --replication, as kafka-metadata-quorum.sh, and whether its log is writable", Run: runMetadataQuorum},
	{Name: "perf", Summary: "load a Kafka-compatible broker as kafka-producer/consumer-perf-test.sh do: 'weir perf produce|consume'", Run: runPerf},
	{Name: "bench", Summary: "run a benchmark or load generator: 'weir bench log' appends to logs on disk", Run: runBench},
	{Name: "dump-log", Summary: "print .log, .index and .timeindex segment files as kafka-dump-log.sh does", Run: runDumpLog},
	{Name: "version", Summary: "print weir's module version and the Go version it was built with", Run: runVersion},
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		// After the first signal, restore the default action so a second
		// one ends a command that does not stop.
		<-ctx.Done()
		stop()
	}()
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run dispatches args (the command line without the program name) to a
// command and returns the process's exit status.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		printUsage(stderr)
		return 2
	}
	name, rest := args[0], args[1:]
	switch name {
	case "help", "-h", "-help", "--help":
		return runHelp(ctx, rest, stdout, stderr)
	}
	cmd, ok := cli.Lookup(commands, name)
	if !ok {
		fmt.Fprintf(stderr, "weir: %v\n\n", cli.Unknown("command", name, commands))
		printUsage(stderr)
		return 2
	}
	return exitStatus(name, cmd.Run(ctx, rest, stdout, stderr), stderr)
}

// runHelp prints the command list to stdout, or with one argument the
// flags of that command.
func runHelp(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	switch len(args) {
	case 0:
		printUsage(stdout)
		return 0
	case 1:
		if _, ok := cli.Lookup(commands, args[0]); ok {
			return run(ctx, []string{args[0], "-h"}, stdout, stderr)
		}
		fmt.Fprintf(stderr, "weir help: unknown command %q\n\n", args[0])
	default:
		fmt.Fprintf(stderr, "weir help: takes at most one command\n\n")
	}
	printUsage(stderr)
	return 2
}

// printUsage writes the list of commands to w.
func printUsage(w io.Writer) {
	fmt.Fprint(w, "weir is a Kafka-wire-compatible message broker.\n\n")
	fmt.Fprint(w, "usage: weir <command> [flags] [arguments]\n\ncommands:\n")
	tw := tabwriter.NewWriter(w, 0, 0, 3, ' ', 0)
	fmt.Fprintf(tw, "  help\tlist the commands; 'weir help <command>' prints a command's flags\n")
	for _, c := range commands {
		fmt.Fprintf(tw, "  %s\t%s\n", c.Name, c.Summary)
	}
	tw.Flush()
}

// exitStatus reports err, the result of command name, on stderr and maps it
// to an exit status.
func exitStatus(name string, err error, stderr io.Writer) int {
	var uerr *cli.UsageError
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return 0
	case errors.As(err, &uerr):
		if !uerr.Reported {
			fmt.Fprintf(stderr, "weir %s: %v\nrun 'weir help %s' for usage\n", name, uerr.Err, name)
		}
		return 2
	default:
		fmt.Fprintf(stderr, "weir %s: %v\n", name, err)
		return 1
	}
}

// runVersion prints one line: weir's module version, the Go version that
// built it, the platform, and the VCS revision when the build recorded one.
func runVersion(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := cli.NewFlagSet("version", "", stderr)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return cli.Usagef("unexpected arguments: %s", strings.Join(fs.Args(), " "))
	}
	info, _ := debug.ReadBuildInfo()
	if _, err := fmt.Fprintln(stdout, versionLine(info)); err != nil {
		return fmt.Errorf("write version: %w", err)
	}
	return nil
}

// versionLine formats the version line from the binary's build info (nil
// when the binary carries none), e.g. "weir (devel) go1.26.0 linux/amd64".
func versionLine(info *debug.BuildInfo) string {
	version, goVersion := "(devel)", runtime.Version()
	var revision, modified string
	if info != nil {
		if info.Main.Version != "" {
			version = info.Main.Version
		}
		if info.GoVersion != "" {
			goVersion = info.GoVersion
		}
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				revision = s.Value
			case "vcs.modified":
				modified = s.Value
			}
		}
	}
	line := fmt.Sprintf("weir %s %s %s/%s", version, goVersion, runtime.GOOS, runtime.GOARCH)
	if revision != "" {
		line += " rev " + revision
		if modified == "true" {
			line += " (modified)"
		}
	}
	return line
}

// Command weir is weir's one binary: every tool the project ships is a
// subcommand of it.
//
// Usage:
//
//	weir <command> [flags] [arguments]
//	weir help [command]
//
// `weir help` (or `weir -h`) lists the commands with a line each; `weir help
// <command>` or `weir <command> -h` prints the flags of one command.
//
// Exit status: 0 on success (and for -h), 1 when a command fails, 2 on a
// usage error (an unknown command, a bad flag, a missing argument). SIGINT
// and SIGTERM cancel the running command's context so it can stop cleanly; a
// second signal ends the process at once.
//
// Commands live in the table in main.go, one entry each, and each is a
// function of (ctx, args, stdout, stderr) returning an error, so tests run
// them in-process. Only main calls os.Exit.
package main

package main

import (
	"bytes"
	"context"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
)

// runCmd runs the weir command line args in-process.
func runCmd(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = run(context.Background(), args, &out, &errOut)
	return code, out.String(), errOut.String()
}

func TestHelpListsEveryCommand(t *testing.T) {
	for _, arg := range []string{"help", "-h", "--help"} {
		code, stdout, _ := runCmd(t, arg)
		if code != 0 {
			t.Errorf("weir %s: exit %d, want 0", arg, code)
		}
		for _, c := range commands {
			if !strings.Contains(stdout, c.Name) || !strings.Contains(stdout, c.Summary) {
				t.Errorf("weir %s does not list %q with its summary:\n%s", arg, c.Name, stdout)
			}
		}
	}
}

func TestCommandTableIsWellFormed(t *testing.T) {
	seen := map[string]bool{"help": true}
	for _, c := range commands {
		if c.Name == "" || c.Summary == "" || c.Run == nil {
			t.Errorf("incomplete command entry %+v", c)
		}
		if seen[c.Name] {
			t.Errorf("command %q listed twice (or shadows help)", c.Name)
		}
		seen[c.Name] = true
	}
}

func TestUsageErrorsExitTwo(t *testing.T) {
	cases := [][]string{
		{},
		{"no-such-command"},
		{"help", "no-such-command"},
		{"version", "-no-such-flag"},
		{"version", "extra"},
	}
	for _, args := range cases {
		code, stdout, stderr := runCmd(t, args...)
		if code != 2 {
			t.Errorf("weir %q: exit %d, want 2", args, code)
		}
		if stdout != "" {
			t.Errorf("weir %q wrote to stdout: %q", args, stdout)
		}
		if stderr == "" {
			t.Errorf("weir %q: nothing on stderr", args)
		}
	}
	_, _, stderr := runCmd(t, "no-such-command")
	if !strings.Contains(stderr, "version") {
		t.Errorf("unknown command: usage on stderr does not list the commands:\n%s", stderr)
	}
	for typo, want := range map[string]string{
		"topcis":          `unknown command "topcis": did you mean "topics"?`,
		"grups":           `unknown command "grups": did you mean "groups"?`,
		"topics lsit":     `unknown topics command "lsit": did you mean "list"?`,
		"groups decsribe": `unknown groups command "decsribe": did you mean "describe"?`,
	} {
		code, _, stderr := runCmd(t, strings.Fields(typo)...)
		if code != 2 || !strings.Contains(stderr, want) {
			t.Errorf("weir %s: exit %d, stderr %q; want exit 2 and %q", typo, code, stderr, want)
		}
	}
}

func TestCommandHelpExitsZero(t *testing.T) {
	for _, args := range [][]string{{"version", "-h"}, {"help", "version"}} {
		code, _, stderr := runCmd(t, args...)
		if code != 0 {
			t.Errorf("weir %q: exit %d, want 0", args, code)
		}
		if !strings.Contains(stderr, "usage: weir version") {
			t.Errorf("weir %q: no usage line on stderr:\n%s", args, stderr)
		}
	}
}

func TestVersion(t *testing.T) {
	code, stdout, stderr := runCmd(t, "version")
	if code != 0 || stderr != "" {
		t.Fatalf("weir version: exit %d, stderr %q", code, stderr)
	}
	if !strings.HasPrefix(stdout, "weir ") || !strings.Contains(stdout, runtime.GOOS+"/"+runtime.GOARCH) {
		t.Errorf("weir version printed %q", stdout)
	}
}

func TestVersionLine(t *testing.T) {
	info := &debug.BuildInfo{
		GoVersion: "go1.26.0",
		Main:      debug.Module{Path: "github.com/weirmq/weir", Version: "v0.1.0"},
		Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "abc123"},
			{Key: "vcs.modified", Value: "true"},
		},
	}
	want := "weir v0.1.0 go1.26.0 " + runtime.GOOS + "/" + runtime.GOARCH + " rev abc123 (modified)"
	if got := versionLine(info); got != want {
		t.Errorf("versionLine = %q, want %q", got, want)
	}
	if got := versionLine(nil); !strings.HasPrefix(got, "weir (devel) "+runtime.Version()) {
		t.Errorf("versionLine(nil) = %q", got)
	}
}

package main

import (
	"regexp"
	"strings"
	"testing"

	"github.com/weirmq/weir/internal/cli"
)

// offline are the commands that take no broker address: they talk to no
// broker, or (bench broker, bench groups, bench cluster) start the brokers
// they measure.
var offline = map[string]bool{
	"version": true, "serve": true, "dump-log": true,
	"bench log": true, "bench broker": true, "bench groups": true, "bench cluster": true, "bench failover": true,
}

// describing are the commands that list or describe, so they take
// --format json.
var describing = map[string]bool{
	"topics list": true, "topics describe": true,
	"groups list": true, "groups describe": true,
	"cluster info": true, "cluster config get": true, "cluster config describe": true,
	"metadata-quorum describe": true, "consume": true,
	"dump-log": true, "groups reset-offsets": true, "groups delete": true, "groups delete-offsets": true,
}

// commandLineRE matches a command's line in a group's usage listing.
var commandLineRE = regexp.MustCompile(`(?m)^  (\S+)\s{2,}`)

// leafCommands walks the command tree from `weir help` down through every
// group's usage and returns the commands that run ("topics create",
// "cluster config get"), each with its -h output.
func leafCommands(t *testing.T) map[string]string {
	t.Helper()
	leaves := map[string]string{}
	var walk func(path []string)
	walk = func(path []string) {
		code, _, stderr := runCmd(t, append(append([]string{}, path...), "-h")...)
		if code != 0 {
			t.Fatalf("weir %s -h: exit %d\n%s", strings.Join(path, " "), code, stderr)
		}
		if !strings.Contains(stderr, "\ncommands:\n") {
			leaves[strings.Join(path, " ")] = stderr
			return
		}
		listing := stderr[strings.Index(stderr, "\ncommands:\n"):]
		for _, m := range commandLineRE.FindAllStringSubmatch(listing, -1) {
			walk(append(append([]string{}, path...), m[1]))
		}
	}
	for _, c := range commands {
		walk([]string{c.Name})
	}
	return leaves
}

// TestEveryCommandFollowsTheConventions checks the conventions docs/tools.md
// states for every command weir has, found by walking its usage listings,
// so a command added later is held to them too: a command that talks to a
// broker takes --bootstrap-server and --brokers and defaults to
// $WEIR_BROKERS; one that lists or describes takes --format; flags are
// spelled with two dashes.
func TestEveryCommandFollowsTheConventions(t *testing.T) {
	const env = "127.0.0.7:19093"
	t.Setenv(cli.BrokersEnv, env)
	leaves := leafCommands(t)
	for name := range describing {
		if _, ok := leaves[name]; !ok {
			t.Errorf("weir %s is not in the command tree", name)
		}
	}
	if len(leaves) < 20 {
		t.Fatalf("found only %d commands: %v", len(leaves), leaves)
	}
	for name, help := range leaves {
		if !strings.HasPrefix(help, "usage: weir "+name) {
			t.Errorf("weir %s -h does not start with its usage line:\n%s", name, help)
		}
		if regexp.MustCompile(`(?m)^  -[a-z][a-z]`).MatchString(help) {
			t.Errorf("weir %s -h spells a flag with one dash:\n%s", name, help)
		}
		if !offline[name] {
			if !strings.Contains(help, "--bootstrap-server, --brokers") || !strings.Contains(help, "(default "+env+")") {
				t.Errorf("weir %s talks to brokers but takes no --bootstrap-server defaulting to $%s:\n%s", name, cli.BrokersEnv, help)
			}
		}
		if describing[name] && !regexp.MustCompile(`(?m)^  --format`).MatchString(help) {
			t.Errorf("weir %s lists or describes but takes no --format:\n%s", name, help)
		}
	}
}

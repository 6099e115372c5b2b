package netns

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strings"
	"time"
)

// commandTimeout bounds one ip or nft invocation; they take milliseconds,
// but a loaded machine must not see false failures.
const commandTimeout = 30 * time.Second

// run runs name with args, feeding it stdin when not empty, and returns
// its stdout. Its error holds the command line and what it printed.
func run(stdin, name string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), commandTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), fmt.Errorf("netns: %s %s: %w: %s", name, strings.Join(args, " "),
			err, strings.TrimSpace(stderr.String()))
	}
	return stdout.String(), nil
}

// ip runs ip with args.
func ip(args ...string) (string, error) { return run("", "ip", args...) }

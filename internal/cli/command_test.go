package cli

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"io"
	"strings"
	"testing"
)

func TestDispatch(t *testing.T) {
	ran := ""
	subs := []Command{
		{Name: "create", Summary: "make one", Run: func(_ context.Context, args []string, _, _ io.Writer) error {
			ran = "create " + strings.Join(args, " ")
			return nil
		}},
		{Name: "delete", Summary: "remove one", Run: func(context.Context, []string, io.Writer, io.Writer) error { return nil }},
	}
	var stderr bytes.Buffer
	if err := Dispatch(context.Background(), "topics", subs, []string{"create", "--topic", "a"}, io.Discard, &stderr); err != nil || ran != "create --topic a" {
		t.Fatalf("Dispatch create: %v, ran %q", err, ran)
	}
	err := Dispatch(context.Background(), "topics", subs, []string{"craete"}, io.Discard, &stderr)
	var uerr *UsageError
	if !errors.As(err, &uerr) || !strings.Contains(err.Error(), `did you mean "create"?`) {
		t.Errorf("Dispatch typo = %v", err)
	}
	stderr.Reset()
	if err := Dispatch(context.Background(), "topics", subs, []string{"-h"}, io.Discard, &stderr); !errors.Is(err, flag.ErrHelp) ||
		!strings.Contains(stderr.String(), "remove one") {
		t.Errorf("Dispatch -h = %v, %q", err, stderr.String())
	}
	if err := Dispatch(context.Background(), "topics", subs, nil, io.Discard, &stderr); !errors.As(err, &uerr) {
		t.Errorf("Dispatch with no command = %v", err)
	}
}

package bench

import (
	"errors"
	"fmt"
	"testing"
)

func TestInvalidConfig(t *testing.T) {
	sentinel := errors.New("pkg: invalid config")
	err := fmt.Errorf("wrapped: %w", InvalidConfig(sentinel, "%d writers, need at least 1", 0))
	if !errors.Is(err, sentinel) || errors.Is(err, errors.New("pkg: invalid config")) {
		t.Errorf("%v: want it to match its sentinel only", err)
	}
	if got := err.Error(); got != "wrapped: 0 writers, need at least 1" {
		t.Errorf("text %q, want the detail alone", got)
	}
}

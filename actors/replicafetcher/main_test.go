package replicafetcher

import (
	"testing"

	"github.com/weirmq/weir/internal/leakcheck"
)

func TestMain(m *testing.M) {
	leakcheck.VerifyTestMain(m)
}

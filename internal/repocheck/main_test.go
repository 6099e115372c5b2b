package repocheck

import (
	"testing"

	"github.com/weirmq/weir/internal/harness"
)

// TestMain removes the weir binary that TestServeFlagsAreInTheConfigTable
// builds.
func TestMain(m *testing.M) { harness.Main(m) }

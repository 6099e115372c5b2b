package cluster

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/weirmq/weir/log"
)

// A process tells the controller, when it registers, whether its
// predecessor shut down cleanly (RegisterBrokerRequest.PreviousBrokerEpoch,
// KIP-966): a replica back from an unclean shutdown may have lost unflushed
// records and leaves every ELR. Clean means the log directory's
// clean-shutdown marker (log.Manager.CleanShutdown: every log flushed and
// closed), and the predecessor is named by its broker epoch, written beside
// the marker just before the logs close, so that the controller can check
// it is the registration it knows: a directory left by an older process,
// with a newer one run elsewhere since, counts as unclean.

// brokerEpochFile holds the broker epoch of the process that last shut the
// data directory down; the log package's partition scan ignores the name.
const brokerEpochFile = ".weir_broker_epoch"

// takePreviousEpoch returns the broker epoch the previous process left in
// dir if the directory was shut down cleanly (clean), else -1, and removes
// the file: a process that crashes leaves none behind for its successor.
func takePreviousEpoch(fsys log.FS, dir string, clean bool) (int64, error) {
	name := filepath.Join(dir, brokerEpochFile)
	b, err := log.ReadFile(fsys, name)
	if errors.Is(err, fs.ErrNotExist) {
		return -1, nil
	}
	if err != nil {
		return -1, fmt.Errorf("cluster: read %s: %w", name, err)
	}
	if err := fsys.Remove(name); err != nil {
		return -1, fmt.Errorf("cluster: remove %s: %w", name, err)
	}
	epoch, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if !clean || err != nil || epoch <= 0 {
		return -1, nil
	}
	return epoch, nil
}

// recordEpoch writes epoch, this process's broker epoch, to dir before the
// logs close; nothing without a registration (epoch 0).
func recordEpoch(fsys log.FS, dir string, epoch int64) error {
	if epoch <= 0 {
		return nil
	}
	return log.WriteFileAtomic(fsys, filepath.Join(dir, brokerEpochFile), []byte(strconv.FormatInt(epoch, 10)))
}

package bench

import "fmt"

// InvalidConfig returns the error of an invalid setting of a benchmark's
// configuration: its text is the detail alone ("0 writers, need at least
// 1"), so that `weir bench log` or `weir perf produce` prints it after the
// command's name without a package prefix, and it matches (errors.Is) the
// package's sentinel, such as logbench.ErrInvalidConfig.
func InvalidConfig(sentinel error, format string, args ...any) error {
	return &configError{sentinel: sentinel, msg: fmt.Sprintf(format, args...)}
}

// configError is an invalid setting.
type configError struct {
	sentinel error
	msg      string
}

// Error returns the detail.
func (e *configError) Error() string { return e.msg }

// Is makes the error match its package's sentinel.
func (e *configError) Is(target error) bool { return target == e.sentinel }

package brokerbench

import (
	"fmt"
	"os"
	"time"
)

// ReadRSS returns the resident set size of process pid in bytes, the VmRSS
// line of /proc/PID/status. Other benchmarks that run `weir serve` use it.
func ReadRSS(pid int) (int64, error) { return readRSS(pid) }

// ReadProcessCPU returns the CPU time (user plus system) process pid has
// spent so far, fields 14 and 15 of /proc/PID/stat.
func ReadProcessCPU(pid int) (time.Duration, error) {
	st, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, fmt.Errorf("CPU time of pid %d: %w", pid, err)
	}
	d, err := parseStatCPU(st)
	if err != nil {
		return 0, fmt.Errorf("CPU time of pid %d: %w", pid, err)
	}
	return d, nil
}

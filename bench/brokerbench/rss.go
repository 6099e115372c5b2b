package brokerbench

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
)

// readRSS returns the resident set size of process pid in bytes, the
// VmRSS line of /proc/PID/status.
func readRSS(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, fmt.Errorf("read RSS of pid %d: %w", pid, err)
	}
	return parseVmRSS(b)
}

// parseVmRSS reads the VmRSS line ("VmRSS:	   12345 kB") of a
// /proc/PID/status file.
func parseVmRSS(status []byte) (int64, error) {
	sc := bufio.NewScanner(bytes.NewReader(status))
	for sc.Scan() {
		rest, ok := bytes.CutPrefix(sc.Bytes(), []byte("VmRSS:"))
		if !ok {
			continue
		}
		f := bytes.Fields(rest)
		if len(f) != 2 || string(f[1]) != "kB" {
			return 0, fmt.Errorf("VmRSS line %q: want a number of kB", sc.Text())
		}
		kb, err := strconv.ParseInt(string(f[0]), 10, 64)
		if err != nil || kb < 0 {
			return 0, fmt.Errorf("VmRSS line %q: bad number", sc.Text())
		}
		return kb << 10, nil
	}
	return 0, fmt.Errorf("no VmRSS line in the process status")
}

package brokerbench

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"syscall"
	"time"
)

// userHZ is the unit of the CPU times in /proc/PID/stat: USER_HZ, 100 on
// every Linux architecture Go supports.
const userHZ = 100

// cpuUse is the CPU time (user plus system) spent so far by this process
// (the client, and kfake when it runs here) and by the broker's own
// process, if it has one.
type cpuUse struct {
	self, broker time.Duration
}

// readCPU samples the CPU time of this process and of b's process.
func readCPU(b broker) (cpuUse, error) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return cpuUse{}, fmt.Errorf("getrusage: %w", err)
	}
	u := cpuUse{self: time.Duration(ru.Utime.Nano() + ru.Stime.Nano())}
	if pid := b.PID(); pid != 0 {
		st, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			return cpuUse{}, fmt.Errorf("CPU time of pid %d: %w", pid, err)
		}
		if u.broker, err = parseStatCPU(st); err != nil {
			return cpuUse{}, fmt.Errorf("CPU time of pid %d: %w", pid, err)
		}
	}
	return u, nil
}

// since returns the CPU time spent between start and u.
func (u cpuUse) since(start cpuUse) cpuUse {
	return cpuUse{self: u.self - start.self, broker: u.broker - start.broker}
}

// total is the CPU time of client and broker together.
func (u cpuUse) total() time.Duration { return u.self + u.broker }

// parseStatCPU returns utime+stime of a /proc/PID/stat line: fields 14 and
// 15, counted after the command name's closing parenthesis (the name may
// hold spaces).
func parseStatCPU(stat []byte) (time.Duration, error) {
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, fmt.Errorf("stat %q: no command name", stat)
	}
	f := bytes.Fields(stat[i+1:])
	// f[0] is field 3 (state), so field n is f[n-3].
	if len(f) < 13 {
		return 0, fmt.Errorf("stat %q: too few fields", stat)
	}
	var ticks int64
	for _, s := range f[11:13] {
		n, err := strconv.ParseInt(string(s), 10, 64)
		if err != nil || n < 0 {
			return 0, fmt.Errorf("stat %q: bad CPU time %q", stat, s)
		}
		ticks += n
	}
	return time.Duration(ticks) * time.Second / userHZ, nil
}

// msPerMiB is the CPU time d spent on moving mib MiB, in milliseconds per
// MiB.
func msPerMiB(d time.Duration, mib float64) float64 {
	if mib <= 0 {
		return 0
	}
	return float64(d) / float64(time.Millisecond) / mib
}

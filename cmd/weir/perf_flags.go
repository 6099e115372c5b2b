package main

import (
	"fmt"
	"strconv"
	"time"
)

// millisFlag is a duration flag that also takes a bare number of
// milliseconds, as Kafka's tools spell linger.ms and --timeout: "5" is
// 5ms, "1.5s" is 1.5 seconds.
type millisFlag struct{ d *time.Duration }

// String returns the duration in Go's notation.
func (f millisFlag) String() string {
	if f.d == nil {
		return ""
	}
	return f.d.String()
}

// Set reads a duration or a whole number of milliseconds; negative values
// are refused.
func (f millisFlag) Set(s string) error {
	var d time.Duration
	if ms, err := strconv.ParseInt(s, 10, 64); err == nil {
		d = time.Duration(ms) * time.Millisecond
	} else if d, err = time.ParseDuration(s); err != nil {
		return fmt.Errorf("%q is neither a duration nor milliseconds", s)
	}
	if d < 0 {
		return fmt.Errorf("%q is negative", s)
	}
	*f.d = d
	return nil
}

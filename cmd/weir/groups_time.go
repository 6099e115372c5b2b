package main

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// datetimeRE matches a --to-datetime value as kafka-consumer-groups.sh
// takes it (Kafka's Utils.getDateTime): yyyy-MM-ddTHH:mm:ss.SSS, then an
// optional zone: Z, +HH, +HHMM or +HH:MM (or -).
var datetimeRE = regexp.MustCompile(`^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})\.(\d{3})(Z|[+-]\d{2}(?::?\d{2})?)?$`)

// parseResetDatetime returns the Unix millisecond time of a --to-datetime
// value. Without a zone the time is UTC, as Kafka's tool reads it.
func parseResetDatetime(s string) (int64, error) {
	m := datetimeRE.FindStringSubmatch(s)
	if m == nil {
		return 0, fmt.Errorf("--to-datetime %q: want YYYY-MM-DDTHH:mm:SS.sss with an optional zone (Z, +HH, +HHMM or +HH:MM), e.g. 2026-11-10T16:51:38.198+01:00", s)
	}
	n := make([]int, 7)
	for i := range n {
		n[i], _ = strconv.Atoi(m[i+1])
	}
	zone, err := parseZone(m[8])
	if err != nil {
		return 0, fmt.Errorf("--to-datetime %q: %w", s, err)
	}
	t := time.Date(n[0], time.Month(n[1]), n[2], n[3], n[4], n[5], n[6]*int(time.Millisecond), zone)
	// time.Date normalizes 2026-02-30 to March 2; Kafka's parser is strict.
	if t.Year() != n[0] || int(t.Month()) != n[1] || t.Day() != n[2] || t.Hour() != n[3] || t.Minute() != n[4] || t.Second() != n[5] {
		return 0, fmt.Errorf("--to-datetime %q: no such date or time", s)
	}
	return t.UnixMilli(), nil
}

// parseZone returns the location of a zone suffix: "" and "Z" are UTC.
func parseZone(z string) (*time.Location, error) {
	if z == "" || z == "Z" {
		return time.UTC, nil
	}
	sign := 1
	if z[0] == '-' {
		sign = -1
	}
	digits := strings.ReplaceAll(z[1:], ":", "")
	hours, _ := strconv.Atoi(digits[:2])
	minutes := 0
	if len(digits) == 4 {
		minutes, _ = strconv.Atoi(digits[2:])
	}
	if hours > 23 || minutes > 59 {
		return nil, fmt.Errorf("zone %q out of range", z)
	}
	return time.FixedZone(z, sign*(hours*3600+minutes*60)), nil
}

// durationRE matches an ISO-8601 duration as Java's Duration.parse reads
// it, which --by-duration uses in Kafka's tool: an optional sign, P, days,
// then after T hours, minutes and seconds with up to nine fraction digits;
// each number may carry its own sign.
var durationRE = regexp.MustCompile(`(?i)^([-+]?)P(?:([-+]?\d+)D)?(T(?:([-+]?\d+)H)?(?:([-+]?\d+)M)?(?:([-+]?\d+)(?:[.,](\d{0,9}))?S)?)?$`)

// parseISODuration returns the length of a --by-duration value such as
// PT10M, P1DT2H or PT0.5S.
func parseISODuration(s string) (time.Duration, error) {
	m := durationRE.FindStringSubmatch(s)
	// Java rejects "P", "PT" and a T with nothing after it.
	if m == nil || (m[2] == "" && m[3] == "") || strings.EqualFold(m[3], "T") {
		return 0, fmt.Errorf("--by-duration %q: want an ISO-8601 duration PnDTnHnMn.nS, e.g. PT30M or P1DT12H", s)
	}
	var total float64 // nanoseconds, checked against the int64 range before conversion
	var exact time.Duration
	add := func(field string, unit time.Duration) error {
		if field == "" {
			return nil
		}
		n, err := strconv.ParseInt(field, 10, 64)
		if err != nil {
			return err
		}
		total += float64(n) * float64(unit)
		exact += time.Duration(n) * unit
		return nil
	}
	for _, f := range []struct {
		v    string
		unit time.Duration
	}{{m[2], 24 * time.Hour}, {m[4], time.Hour}, {m[5], time.Minute}, {m[6], time.Second}} {
		if err := add(f.v, f.unit); err != nil {
			return 0, fmt.Errorf("--by-duration %q: %w", s, err)
		}
	}
	if frac := m[7]; frac != "" {
		ns, _ := strconv.ParseInt((frac + "000000000")[:9], 10, 64)
		if strings.HasPrefix(m[6], "-") {
			ns = -ns // Java: the fraction takes the seconds' sign
		}
		total += float64(ns)
		exact += time.Duration(ns)
	}
	if math.Abs(total) >= math.MaxInt64 {
		return 0, fmt.Errorf("--by-duration %q: longer than %v", s, time.Duration(math.MaxInt64))
	}
	if m[1] == "-" {
		exact = -exact
	}
	return exact, nil
}

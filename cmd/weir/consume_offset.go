package main

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// offsetSpec is a parsed `weir consume -o` value: where consuming each
// partition starts and, optionally, where it stops. The forms are rpk's
// (`rpk topic consume --offset`):
//
//	start, oldest    the log start offset (also kcat's beginning, Kafka's earliest)
//	end, newest      the high watermark: only records produced from now on (also latest)
//	N                offset N (N: is the same)
//	+N               N after the log start offset
//	-N               N before the high watermark
//	FROM:UNTIL       FROM as above (empty: the log start) until UNTIL, exclusive:
//	                 an offset, or end for the high watermark when consuming starts
//	@T, @T:          the first offset with a timestamp at or after T
//	@:T, @T1:T2      until the first offset at or after T (or T2), exclusive; T2 may be end
//
// A time T is unix milliseconds (13 digits), unix seconds (10 digits), a
// day YYYY-MM-DD (UTC), an RFC 3339 time, or a duration such as -1h or 30m
// relative to now; a duration T2 is relative to T1 when T1 is a time.
// With an UNTIL the command stops once every partition reaches it.
type offsetSpec struct {
	from offsetFrom
	// fromN is the offset (fromOffset), the count (fromStart, fromEnd) or
	// the unix millisecond (fromTime).
	fromN int64
	until offsetUntil
	// untilN is the offset (untilOffset) or the unix millisecond
	// (untilTime).
	untilN int64
}

// offsetFrom says where consuming a partition starts.
type offsetFrom int

const (
	fromStart  offsetFrom = iota // the log start offset plus fromN
	fromEnd                      // the high watermark minus fromN
	fromOffset                   // offset fromN
	fromTime                     // the first offset with a timestamp at or after fromN
)

// offsetUntil says where consuming a partition stops (exclusive).
type offsetUntil int

const (
	untilNone   offsetUntil = iota // never: follow the partition
	untilEnd                       // the high watermark when consuming starts
	untilOffset                    // offset untilN, at most the high watermark
	untilTime                      // the first offset with a timestamp at or after untilN
)

// hasUntil reports whether consuming stops at an end.
func (o offsetSpec) hasUntil() bool { return o.until != untilNone }

// startOffset is where consuming starts, for a consumer that lets the
// client resolve it (no UNTIL, or a group's partitions without a
// committed offset).
func (o offsetSpec) startOffset() kgo.Offset {
	switch o.from {
	case fromEnd:
		return kgo.NewOffset().AtEnd().Relative(-o.fromN)
	case fromOffset:
		return kgo.NewOffset().At(o.fromN)
	case fromTime:
		return kgo.NewOffset().AfterMilli(o.fromN)
	default:
		return kgo.NewOffset().AtStart().Relative(o.fromN)
	}
}

// bounds returns the offsets [from, until) to consume from a partition
// with log start offset logStart and high watermark hwm; fromListed and
// untilListed are the offsets listed for the spec's times (the first at
// or after each, or hwm when none is), ignored when it has none. until <=
// from means there is nothing to consume.
func (o offsetSpec) bounds(logStart, hwm, fromListed, untilListed int64) (from, until int64) {
	switch o.from {
	case fromStart:
		from = min(logStart+o.fromN, hwm)
	case fromEnd:
		from = max(hwm-o.fromN, logStart)
	case fromOffset:
		from = max(o.fromN, logStart)
	case fromTime:
		from = fromListed
	}
	switch o.until {
	case untilEnd:
		until = hwm
	case untilOffset:
		until = min(o.untilN, hwm)
	case untilTime:
		until = min(untilListed, hwm)
	}
	return from, until
}

// parseOffsetSpec parses a -o value; now is the time durations are
// relative to.
func parseOffsetSpec(s string, now time.Time) (offsetSpec, error) {
	if rest, ok := strings.CutPrefix(s, "@"); ok {
		return parseTimeSpec(rest, now)
	}
	fromText, untilText, hasUntil := strings.Cut(s, ":")
	var o offsetSpec
	switch fromText {
	case "":
		if !hasUntil {
			return o, errors.New("empty offset: want start, end, an offset, +N, -N, FROM:UNTIL or @TIME")
		}
		o.from = fromStart
	case "start", "oldest", "beginning", "earliest":
		o.from = fromStart
	case "end", "newest", "latest":
		o.from = fromEnd
	default:
		n, err := parseCount(strings.TrimLeft(fromText, "+-"))
		if err != nil || len(fromText) > 1 && (fromText[1] == '+' || fromText[1] == '-') {
			return o, fmt.Errorf("%q is not start, end, an offset, +N or -N", fromText)
		}
		switch fromText[0] {
		case '+':
			o.from = fromStart
		case '-':
			o.from = fromEnd
		default:
			o.from = fromOffset
		}
		o.fromN = n
	}
	switch untilText {
	case "":
	case "end", "newest", "latest":
		o.until = untilEnd
	default:
		n, err := parseCount(untilText)
		if err != nil {
			return o, fmt.Errorf("end %q is not an offset or end", untilText)
		}
		o.until, o.untilN = untilOffset, n
		if o.from == fromOffset && n <= o.fromN {
			return o, fmt.Errorf("end offset %d is not after start offset %d", n, o.fromN)
		}
	}
	return o, nil
}

// parseCount parses a non-negative decimal number.
func parseCount(s string) (int64, error) {
	if s == "" || s[0] == '+' || s[0] == '-' {
		return 0, errors.New("not a non-negative number")
	}
	return strconv.ParseInt(s, 10, 64)
}

// parseTimeSpec parses what follows the @ of a -o value: T, T:, :T or
// T1:T2. RFC 3339 times hold colons too, so each colon is tried as the
// separator until both sides parse.
func parseTimeSpec(s string, now time.Time) (offsetSpec, error) {
	if s == "" {
		return offsetSpec{}, errors.New("empty time after @: want @TIME, @TIME:, @:TIME or @TIME1:TIME2")
	}
	o, firstErr := timeSpecSplit(s, "", false, now)
	if firstErr == nil {
		return o, nil
	}
	for i := range len(s) {
		if s[i] != ':' {
			continue
		}
		if o, err := timeSpecSplit(s[:i], s[i+1:], true, now); err == nil {
			return o, nil
		} else if i == 0 {
			firstErr = err
		}
	}
	return offsetSpec{}, firstErr
}

// timeSpecSplit parses @from or, with hasUntil, @from:until.
func timeSpecSplit(from, until string, hasUntil bool, now time.Time) (offsetSpec, error) {
	var o offsetSpec
	base := now
	if from == "" {
		o.from = fromStart
	} else {
		ms, isEnd, isDuration, err := parseInstant(from, now)
		if err != nil {
			return o, err
		}
		if isEnd {
			return o, errors.New("@end is not a start time: use -o end")
		}
		o.from, o.fromN = fromTime, ms
		if !isDuration {
			base = time.UnixMilli(ms)
		}
	}
	if !hasUntil || until == "" {
		return o, nil
	}
	ms, isEnd, _, err := parseInstant(until, base)
	if err != nil {
		return o, err
	}
	if isEnd {
		o.until = untilEnd
		return o, nil
	}
	o.until, o.untilN = untilTime, ms
	if o.from == fromTime && ms <= o.fromN {
		return o, fmt.Errorf("end time %s is not after start time %s", until, from)
	}
	return o, nil
}

// parseInstant parses one time of a -o @ value as a unix millisecond;
// durations are relative to base. isEnd reports the word end.
func parseInstant(s string, base time.Time) (ms int64, isEnd, isDuration bool, err error) {
	if s == "end" {
		return 0, true, false, nil
	}
	if allDigits(s) {
		n, err := strconv.ParseInt(s, 10, 64)
		switch {
		case err != nil:
		case len(s) == 13:
			return n, false, false, nil
		case len(s) == 10:
			return n * 1000, false, false, nil
		}
		return 0, false, false, fmt.Errorf("time %q: a number is unix milliseconds (13 digits) or seconds (10 digits)", s)
	}
	if len(s) == len("2006-01-02") && s[4] == '-' && s[7] == '-' {
		t, err := time.ParseInLocation("2006-01-02", s, time.UTC)
		if err != nil {
			return 0, false, false, fmt.Errorf("day %q: want YYYY-MM-DD", s)
		}
		return t.UnixMilli(), false, false, nil
	}
	if strings.Contains(s, "T") {
		t, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			return 0, false, false, fmt.Errorf("time %q is not RFC 3339 (2006-01-02T15:04:05Z or with an offset such as +02:00)", s)
		}
		return t.UnixMilli(), false, false, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, false, false, fmt.Errorf("time %q is not unix ms or s, YYYY-MM-DD, RFC 3339, end or a duration such as -1h", s)
	}
	return base.Add(d).UnixMilli(), false, true, nil
}

// allDigits reports whether s is a non-empty string of ASCII digits.
func allDigits(s string) bool {
	for i := range len(s) {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

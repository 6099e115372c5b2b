package perf

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// ErrNotSummary is wrapped by ParseProducerSummary and ParseConsumerSummary
// when a line is not the summary they read.
var ErrNotSummary = errors.New("perf: not a summary line")

// mebibyte is the "MB" of Kafka's perf tools.
const mebibyte = 1024 * 1024

// ProducerResult is the outcome of a producer run.
type ProducerResult struct {
	// Records is the number of records the broker acknowledged.
	Records int64
	// Bytes is the size of their values.
	Bytes int64
	// Elapsed runs from the first send to the last acknowledgement.
	Elapsed time.Duration
	// Latency holds each acknowledged record's latency, from the moment
	// it was handed to the client until it was acknowledged.
	Latency *Histogram
	// Failed is the number of records that were not delivered, and
	// FirstError the first one's error.
	Failed     int64
	FirstError error
}

// Summary returns the figures of Kafka's final summary line.
func (r ProducerResult) Summary() ProducerSummary {
	s := ProducerSummary{Records: r.Records}
	if secs := r.Elapsed.Seconds(); secs > 0 {
		s.RecordsPerSec = float64(r.Records) / secs
		s.MBPerSec = float64(r.Bytes) / secs / mebibyte
	}
	if h := r.Latency; h != nil {
		s.AvgLatencyMs = millis(h.Mean())
		s.MaxLatencyMs = millis(h.Max())
		s.P50Ms, s.P95Ms, s.P99Ms, s.P999Ms = h.Percentile(0.5), h.Percentile(0.95), h.Percentile(0.99), h.Percentile(0.999)
	}
	return s
}

// ProducerSummary holds the figures of the final line of
// kafka-producer-perf-test.sh, which String prints and
// ParseProducerSummary reads.
type ProducerSummary struct {
	Records       int64
	RecordsPerSec float64
	MBPerSec      float64 // MiB of record values per second
	AvgLatencyMs  float64
	MaxLatencyMs  float64
	// The latency percentiles in whole milliseconds.
	P50Ms, P95Ms, P99Ms, P999Ms int64
}

// producerSummaryFormat is Kafka's format of the final line.
const producerSummaryFormat = "%d records sent, %f records/sec (%.2f MB/sec), %.2f ms avg latency, %.2f ms max latency, %d ms 50th, %d ms 95th, %d ms 99th, %d ms 99.9th."

// String formats s exactly as Kafka's tool does, e.g. "100000 records sent,
// 52493.438320 records/sec (51.26 MB/sec), 4.21 ms avg latency, 245.00 ms
// max latency, 3 ms 50th, 9 ms 95th, 17 ms 99th, 52 ms 99.9th."
func (s ProducerSummary) String() string {
	return fmt.Sprintf(producerSummaryFormat, s.Records, s.RecordsPerSec, s.MBPerSec,
		s.AvgLatencyMs, s.MaxLatencyMs, s.P50Ms, s.P95Ms, s.P99Ms, s.P999Ms)
}

// number matches a decimal as the summaries print them (Kafka's tool can
// also print Infinity and NaN when a run took no time).
const number = `(-?[0-9]+(?:\.[0-9]+)?|Infinity|NaN)`

var producerSummaryRE = regexp.MustCompile(`^([0-9]+) records sent, ` + number + ` records/sec \(` + number +
	` MB/sec\), ` + number + ` ms avg latency, ` + number + ` ms max latency, ([0-9]+) ms 50th, ([0-9]+) ms 95th, ([0-9]+) ms 99th, ([0-9]+) ms 99\.9th\.$`)

// ParseProducerSummary reads the final line of a producer run, as printed by
// `weir perf produce` or kafka-producer-perf-test.sh. Progress lines are
// not summaries: they end without the percentiles.
func ParseProducerSummary(line string) (ProducerSummary, error) {
	m := producerSummaryRE.FindStringSubmatch(strings.TrimSpace(line))
	if m == nil {
		return ProducerSummary{}, fmt.Errorf("%w: %q", ErrNotSummary, line)
	}
	p := numberParser{}
	s := ProducerSummary{
		Records:       p.int(m[1]),
		RecordsPerSec: p.float(m[2]),
		MBPerSec:      p.float(m[3]),
		AvgLatencyMs:  p.float(m[4]),
		MaxLatencyMs:  p.float(m[5]),
		P50Ms:         p.int(m[6]),
		P95Ms:         p.int(m[7]),
		P99Ms:         p.int(m[8]),
		P999Ms:        p.int(m[9]),
	}
	if p.err != nil {
		return ProducerSummary{}, fmt.Errorf("%w: %q: %w", ErrNotSummary, line, p.err)
	}
	return s, nil
}

// WindowSummary is one progress line of a producer run: the records
// acknowledged since the previous line.
type WindowSummary struct {
	Records    int64
	Bytes      int64
	Elapsed    time.Duration
	AvgLatency time.Duration
	MaxLatency time.Duration
}

// String formats w as Kafka's tool prints its progress lines, e.g.
// "262081 records sent, 52416.2 records/sec (51.19 MB/sec), 3.9 ms avg
// latency, 245.0 ms max latency."
func (w WindowSummary) String() string {
	var recs, mb float64
	if secs := w.Elapsed.Seconds(); secs > 0 {
		recs = float64(w.Records) / secs
		mb = float64(w.Bytes) / secs / mebibyte
	}
	return fmt.Sprintf("%d records sent, %.1f records/sec (%.2f MB/sec), %.1f ms avg latency, %.1f ms max latency.",
		w.Records, recs, mb, millis(w.AvgLatency), millis(w.MaxLatency))
}

// ConsumerWindow is one progress line of a consumer run: the records
// consumed since the previous line, and in all.
type ConsumerWindow struct {
	Records      int64
	Bytes        int64 // of keys and values
	Elapsed      time.Duration
	TotalRecords int64
}

// String formats w in the manner of the producer's progress lines, e.g.
// "52416 records consumed, 52416.2 records/sec (51.19 MB/sec), 262081
// records in all." (Kafka's consumer tool prints progress only with
// --show-detailed-stats, in its own columns.)
func (w ConsumerWindow) String() string {
	var recs, mb float64
	if secs := w.Elapsed.Seconds(); secs > 0 {
		recs = float64(w.Records) / secs
		mb = float64(w.Bytes) / secs / mebibyte
	}
	return fmt.Sprintf("%d records consumed, %.1f records/sec (%.2f MB/sec), %d records in all.",
		w.Records, recs, mb, w.TotalRecords)
}

// ConsumerHeader is the header line of kafka-consumer-perf-test.sh, naming
// the columns of ConsumerSummary.String.
const ConsumerHeader = "start.time, end.time, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, nMsg.sec, rebalance.time.ms, fetch.time.ms, fetch.MB.sec, fetch.nMsg.sec"

// consumerTimeLayout is the layout of the start and end times up to the
// seconds: Kafka's default "yyyy-MM-dd HH:mm:ss:SSS" in local time, whose
// milliseconds follow a colon, which Go layouts cannot express.
const consumerTimeLayout = "2006-01-02 15:04:05"

// FormatConsumerTime formats t as the start and end times of
// kafka-consumer-perf-test.sh, "2006-01-02 15:04:05:000" in local time.
func FormatConsumerTime(t time.Time) string {
	t = t.Local()
	return fmt.Sprintf("%s:%03d", t.Format(consumerTimeLayout), t.Nanosecond()/int(time.Millisecond))
}

// ParseConsumerTime reads a time formatted by FormatConsumerTime.
func ParseConsumerTime(s string) (time.Time, error) {
	i := strings.LastIndexByte(s, ':')
	if i < 0 || len(s)-i != 4 {
		return time.Time{}, fmt.Errorf("time %q: no milliseconds after a colon", s)
	}
	t, err := time.ParseInLocation(consumerTimeLayout, s[:i], time.Local)
	if err != nil {
		return time.Time{}, fmt.Errorf("time %q: %w", s, err)
	}
	ms, err := strconv.Atoi(s[i+1:])
	if err != nil || ms < 0 {
		return time.Time{}, fmt.Errorf("time %q: bad milliseconds", s)
	}
	return t.Add(time.Duration(ms) * time.Millisecond), nil
}

// ConsumerResult is the outcome of a consumer run.
type ConsumerResult struct {
	// Records is the number of records consumed and Bytes the size of
	// their keys and values.
	Records int64
	Bytes   int64
	// Start is when consuming started and End when the last record
	// counted arrived.
	Start, End time.Time
	// Rebalance is how long the consumer waited for its first group
	// assignment; 0 without a group.
	Rebalance time.Duration
}

// Summary returns the figures of kafka-consumer-perf-test.sh's line.
func (r ConsumerResult) Summary() ConsumerSummary {
	elapsed := r.End.Sub(r.Start)
	fetch := elapsed - r.Rebalance
	s := ConsumerSummary{
		Start:       r.Start,
		End:         r.End,
		MB:          float64(r.Bytes) / mebibyte,
		Records:     r.Records,
		RebalanceMs: r.Rebalance.Milliseconds(),
		FetchMs:     fetch.Milliseconds(),
	}
	if secs := elapsed.Seconds(); secs > 0 {
		s.MBPerSec, s.RecordsPerSec = s.MB/secs, float64(r.Records)/secs
	}
	if secs := fetch.Seconds(); secs > 0 {
		s.FetchMBPerSec, s.FetchRecordsPerSec = s.MB/secs, float64(r.Records)/secs
	}
	return s
}

// ConsumerSummary holds the columns of kafka-consumer-perf-test.sh's line
// (see ConsumerHeader), which String prints and ParseConsumerSummary reads.
type ConsumerSummary struct {
	Start, End         time.Time
	MB                 float64 // MiB of keys and values consumed
	MBPerSec           float64
	Records            int64
	RecordsPerSec      float64
	RebalanceMs        int64
	FetchMs            int64
	FetchMBPerSec      float64
	FetchRecordsPerSec float64
}

// String formats s as Kafka's tool does, e.g. "2024-05-01 10:00:00:000,
// 2024-05-01 10:00:01:500, 95.3674, 63.5783, 100000, 66666.6667, 0, 1500,
// 63.5783, 66666.6667".
func (s ConsumerSummary) String() string {
	return fmt.Sprintf("%s, %s, %.4f, %.4f, %d, %.4f, %d, %d, %.4f, %.4f",
		FormatConsumerTime(s.Start), FormatConsumerTime(s.End), s.MB, s.MBPerSec,
		s.Records, s.RecordsPerSec, s.RebalanceMs, s.FetchMs, s.FetchMBPerSec, s.FetchRecordsPerSec)
}

// ParseConsumerSummary reads the line of a consumer run, as printed by
// `weir perf consume` or kafka-consumer-perf-test.sh (without
// --show-detailed-stats), with times in the local time zone.
func ParseConsumerSummary(line string) (ConsumerSummary, error) {
	f := strings.Split(strings.TrimSpace(line), ", ")
	if len(f) != 10 {
		return ConsumerSummary{}, fmt.Errorf("%w: %q has %d columns, want 10", ErrNotSummary, line, len(f))
	}
	p := numberParser{}
	s := ConsumerSummary{
		Start:              p.time(f[0]),
		End:                p.time(f[1]),
		MB:                 p.float(f[2]),
		MBPerSec:           p.float(f[3]),
		Records:            p.int(f[4]),
		RecordsPerSec:      p.float(f[5]),
		RebalanceMs:        p.int(f[6]),
		FetchMs:            p.int(f[7]),
		FetchMBPerSec:      p.float(f[8]),
		FetchRecordsPerSec: p.float(f[9]),
	}
	if p.err != nil {
		return ConsumerSummary{}, fmt.Errorf("%w: %q: %w", ErrNotSummary, line, p.err)
	}
	return s, nil
}

// numberParser parses the fields of a summary, keeping the first error.
type numberParser struct{ err error }

func (p *numberParser) int(s string) int64 {
	v, err := strconv.ParseInt(s, 10, 64)
	p.keep(err)
	return v
}

func (p *numberParser) float(s string) float64 {
	switch s {
	case "Infinity":
		return math.Inf(1)
	case "NaN":
		return math.NaN()
	}
	v, err := strconv.ParseFloat(s, 64)
	p.keep(err)
	return v
}

func (p *numberParser) time(s string) time.Time {
	t, err := ParseConsumerTime(s)
	p.keep(err)
	return t
}

func (p *numberParser) keep(err error) {
	if p.err == nil {
		p.err = err
	}
}

// millis returns d in milliseconds.
func millis(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

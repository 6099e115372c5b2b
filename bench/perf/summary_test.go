package perf

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// kafkaLine is a final line as kafka-producer-perf-test.sh prints it.
const kafkaLine = "100000 records sent, 52493.438320 records/sec (51.26 MB/sec), 4.21 ms avg latency, 245.00 ms max latency, 3 ms 50th, 9 ms 95th, 17 ms 99th, 52 ms 99.9th."

func TestParseProducerSummaryReadsKafkasLine(t *testing.T) {
	s, err := ParseProducerSummary(kafkaLine + "\n")
	if err != nil {
		t.Fatal(err)
	}
	want := ProducerSummary{Records: 100000, RecordsPerSec: 52493.43832, MBPerSec: 51.26, AvgLatencyMs: 4.21, MaxLatencyMs: 245,
		P50Ms: 3, P95Ms: 9, P99Ms: 17, P999Ms: 52}
	if s != want {
		t.Errorf("parsed %+v, want %+v", s, want)
	}
	if s.String() != kafkaLine {
		t.Errorf("String() = %q, want Kafka's %q", s.String(), kafkaLine)
	}
}

func TestParseProducerSummaryRejectsOtherLines(t *testing.T) {
	for _, line := range []string{
		"",
		"262081 records sent, 52416.2 records/sec (51.19 MB/sec), 3.9 ms avg latency, 245.0 ms max latency.", // a progress line
		strings.Replace(kafkaLine, "99.9th.", "99.9th", 1),
		strings.Replace(kafkaLine, "100000", "-1", 1),
		"start.time, end.time",
	} {
		if _, err := ParseProducerSummary(line); !errors.Is(err, ErrNotSummary) {
			t.Errorf("ParseProducerSummary(%q) = %v, want ErrNotSummary", line, err)
		}
	}
}

func TestProducerResultSummary(t *testing.T) {
	var h Histogram
	for _, ms := range []int{1, 2, 2, 3, 40} {
		h.Record(time.Duration(ms)*time.Millisecond + 500*time.Microsecond)
	}
	r := ProducerResult{Records: 5000, Bytes: 5000 * 1024, Elapsed: 2 * time.Second, Latency: &h}
	got := r.Summary().String()
	want := "5000 records sent, 2500.000000 records/sec (2.44 MB/sec), 10.10 ms avg latency, 40.50 ms max latency, 2 ms 50th, 40 ms 95th, 40 ms 99th, 40 ms 99.9th."
	if got != want {
		t.Errorf("summary\n %q, want\n %q", got, want)
	}
	if back, err := ParseProducerSummary(got); err != nil || back.String() != got || back.Records != 5000 || back.P50Ms != 2 {
		t.Errorf("round trip: %+v, %v; want the figures of %q", back, err, got)
	}
	// A run that took no time reports no rate rather than dividing by zero.
	if s := (ProducerResult{Records: 1, Bytes: 1}).Summary(); s.RecordsPerSec != 0 || s.MBPerSec != 0 {
		t.Errorf("zero-time run: %+v", s)
	}
}

func TestWindowSummaryString(t *testing.T) {
	w := WindowSummary{Records: 262081, Bytes: 262081 * 1024, Elapsed: 5 * time.Second, AvgLatency: 3940 * time.Microsecond, MaxLatency: 245 * time.Millisecond}
	want := "262081 records sent, 52416.2 records/sec (51.19 MB/sec), 3.9 ms avg latency, 245.0 ms max latency."
	if got := w.String(); got != want {
		t.Errorf("progress line\n %q, want\n %q", got, want)
	}
}

func TestConsumerSummary(t *testing.T) {
	start := time.Date(2024, 5, 1, 10, 0, 0, 250*int(time.Millisecond), time.Local)
	r := ConsumerResult{Records: 100000, Bytes: 100000 * 1000, Start: start, End: start.Add(1500 * time.Millisecond), Rebalance: 300 * time.Millisecond}
	s := r.Summary()
	want := "2024-05-01 10:00:00:250, 2024-05-01 10:00:01:750, 95.3674, 63.5783, 100000, 66666.6667, 300, 1200, 79.4729, 83333.3333"
	if got := s.String(); got != want {
		t.Errorf("summary\n %q, want\n %q", got, want)
	}
	back, err := ParseConsumerSummary(s.String())
	if err != nil {
		t.Fatal(err)
	}
	if !back.Start.Equal(start) || !back.End.Equal(r.End) || back.Records != 100000 || back.RebalanceMs != 300 || back.FetchMs != 1200 ||
		back.MB != 95.3674 || back.FetchRecordsPerSec != 83333.3333 {
		t.Errorf("round trip %+v", back)
	}
	if n := len(strings.Split(ConsumerHeader, ", ")); n != 10 {
		t.Errorf("header has %d columns, want 10", n)
	}
	// No time elapsed: no rates rather than a division by zero.
	if s := (ConsumerResult{Start: start, End: start}).Summary(); s.MBPerSec != 0 || s.FetchRecordsPerSec != 0 {
		t.Errorf("zero-time run: %+v", s)
	}
}

func TestParseConsumerSummaryRejectsOtherLines(t *testing.T) {
	for _, line := range []string{
		ConsumerHeader,
		"2024-05-01 10:00:00:250, 2024-05-01 10:00:01:750, 95.3674",
		"2024-05-01 10:00:00.250, 2024-05-01 10:00:01:750, 95.3674, 63.5783, 100000, 66666.6667, 300, 1200, 79.4729, 83333.3333",
		kafkaLine,
	} {
		if _, err := ParseConsumerSummary(line); !errors.Is(err, ErrNotSummary) {
			t.Errorf("ParseConsumerSummary(%q) = %v, want ErrNotSummary", line, err)
		}
	}
}

func TestConsumerTimeRoundTrip(t *testing.T) {
	tm := time.Date(2023, 12, 31, 23, 59, 59, 7*int(time.Millisecond)+999, time.Local)
	s := FormatConsumerTime(tm)
	if s != "2023-12-31 23:59:59:007" {
		t.Errorf("FormatConsumerTime = %q", s)
	}
	back, err := ParseConsumerTime(s)
	if err != nil || !back.Equal(tm.Truncate(time.Millisecond)) {
		t.Errorf("ParseConsumerTime(%q) = %v, %v", s, back, err)
	}
}

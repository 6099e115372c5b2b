package main

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

func TestParseOffsetSpec(t *testing.T) {
	now := time.Date(2026, 3, 4, 12, 0, 0, 0, time.UTC)
	ms := func(t time.Time) int64 { return t.UnixMilli() }
	day := time.Date(2022, 2, 14, 0, 0, 0, 0, time.UTC)
	cases := []struct {
		in   string
		want offsetSpec
	}{
		{"start", offsetSpec{from: fromStart}},
		{"oldest", offsetSpec{from: fromStart}},
		{"beginning", offsetSpec{from: fromStart}},
		{"end", offsetSpec{from: fromEnd}},
		{"newest", offsetSpec{from: fromEnd}},
		{"47", offsetSpec{from: fromOffset, fromN: 47}},
		{"47:", offsetSpec{from: fromOffset, fromN: 47}},
		{"+2", offsetSpec{from: fromStart, fromN: 2}},
		{"-3", offsetSpec{from: fromEnd, fromN: 3}},
		{":end", offsetSpec{from: fromStart, until: untilEnd}},
		{":9", offsetSpec{from: fromStart, until: untilOffset, untilN: 9}},
		{"3:9", offsetSpec{from: fromOffset, fromN: 3, until: untilOffset, untilN: 9}},
		{"3:end", offsetSpec{from: fromOffset, fromN: 3, until: untilEnd}},
		{"-10:end", offsetSpec{from: fromEnd, fromN: 10, until: untilEnd}},
		{"+1:5", offsetSpec{from: fromStart, fromN: 1, until: untilOffset, untilN: 5}},
		{"@1645000000000", offsetSpec{from: fromTime, fromN: 1645000000000}},
		{"@1645000000", offsetSpec{from: fromTime, fromN: 1645000000000}},
		{"@1645000000:", offsetSpec{from: fromTime, fromN: 1645000000000}},
		{"@2022-02-14", offsetSpec{from: fromTime, fromN: ms(day)}},
		{"@2022-02-14:1h", offsetSpec{from: fromTime, fromN: ms(day), until: untilTime, untilN: ms(day.Add(time.Hour))}},
		{"@2022-02-14T10:20:30Z", offsetSpec{from: fromTime, fromN: ms(time.Date(2022, 2, 14, 10, 20, 30, 0, time.UTC))}},
		{"@2022-02-14T10:20:30.250+02:00", offsetSpec{from: fromTime, fromN: ms(time.Date(2022, 2, 14, 8, 20, 30, 250e6, time.UTC))}},
		{"@2022-02-14T10:20:30Z:2022-02-14T11:00:00Z", offsetSpec{from: fromTime, fromN: ms(time.Date(2022, 2, 14, 10, 20, 30, 0, time.UTC)),
			until: untilTime, untilN: ms(time.Date(2022, 2, 14, 11, 0, 0, 0, time.UTC))}},
		{"@-48h:-24h", offsetSpec{from: fromTime, fromN: ms(now.Add(-48 * time.Hour)), until: untilTime, untilN: ms(now.Add(-24 * time.Hour))}},
		{"@-1m:end", offsetSpec{from: fromTime, fromN: ms(now.Add(-time.Minute)), until: untilEnd}},
		{"@:-1h", offsetSpec{from: fromStart, until: untilTime, untilN: ms(now.Add(-time.Hour))}},
		{"@:end", offsetSpec{from: fromStart, until: untilEnd}},
	}
	for _, c := range cases {
		got, err := parseOffsetSpec(c.in, now)
		if err != nil || got != c.want {
			t.Errorf("parseOffsetSpec(%q) = %+v, %v; want %+v", c.in, got, err, c.want)
		}
	}
	for _, bad := range []string{"", "x", "+", "-", "++3", "+-3", "3:x", "5:5", "5:2", ":-3", "3.5",
		"@", "@end", "@x", "@123", "@2022-13-45", "@2022-02-14T25:00:00Z", "@-1h:-2h", "@2022-02-14:-1h", "@1h:x"} {
		if got, err := parseOffsetSpec(bad, now); err == nil {
			t.Errorf("parseOffsetSpec(%q) = %+v, want an error", bad, got)
		}
	}
}

func TestOffsetSpecBounds(t *testing.T) {
	// A partition holding offsets 10..19: log start 10, high watermark 20;
	// listed times resolve to 14 (start) and 17 (until).
	const logStart, hwm, fromListed, untilListed = 10, 20, 14, 17
	cases := []struct {
		spec        string
		from, until int64
	}{
		{":end", 10, 20},
		{"+3:end", 13, 20},
		{"+30:end", 20, 20},
		{"-4:end", 16, 20},
		{"-40:end", 10, 20},
		{"12:15", 12, 15},
		{"2:15", 10, 15},
		{"12:99", 12, 20},
		{"25:30", 25, 20},
		{":5", 10, 5},
		{"@1645000000000:end", 14, 20},
		{"@1645000000000:1645000009999", 14, 17},
		{"@:1645000009999", 10, 17},
	}
	for _, c := range cases {
		o, err := parseOffsetSpec(c.spec, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		if !o.hasUntil() {
			t.Errorf("%s: no until", c.spec)
		}
		from, until := o.bounds(logStart, hwm, fromListed, untilListed)
		if from != c.from || until != c.until {
			t.Errorf("%s: bounds [%d, %d), want [%d, %d)", c.spec, from, until, c.from, c.until)
		}
	}
	for _, spec := range []string{"start", "end", "7", "+1", "-1", "@1645000000000"} {
		if o, _ := parseOffsetSpec(spec, time.Now()); o.hasUntil() {
			t.Errorf("%s has an until", spec)
		}
	}
}

func TestOffsetSpecStartOffset(t *testing.T) {
	cases := map[string]kgo.Offset{
		"start":          kgo.NewOffset().AtStart(),
		"+3":             kgo.NewOffset().AtStart().Relative(3),
		"end":            kgo.NewOffset().AtEnd(),
		"-3":             kgo.NewOffset().AtEnd().Relative(-3),
		"47":             kgo.NewOffset().At(47),
		"@1645000000000": kgo.NewOffset().AfterMilli(1645000000000),
	}
	for spec, want := range cases {
		o, err := parseOffsetSpec(spec, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		if got := o.startOffset(); got != want {
			t.Errorf("%s: start offset %v, want %v", spec, got, want)
		}
	}
}

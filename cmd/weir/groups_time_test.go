package main

import (
	"strings"
	"testing"
	"time"
)

func TestParseResetDatetime(t *testing.T) {
	utc := time.Date(2020, 11, 10, 16, 51, 38, 198e6, time.UTC).UnixMilli()
	for s, want := range map[string]int64{
		"2020-11-10T16:51:38.198":       utc, // no zone: UTC, as Kafka's Utils.getDateTime
		"2020-11-10T16:51:38.198Z":      utc,
		"2020-11-10T16:51:38.198+00:00": utc,
		"2020-11-10T16:51:38.198+0800":  utc - 8*3600e3,
		"2020-11-10T16:51:38.198+08":    utc - 8*3600e3,
		"2020-11-10T16:51:38.198+08:00": utc - 8*3600e3,
		"2020-11-10T16:51:38.198-05:30": utc + 5.5*3600e3,
		"2024-02-29T00:00:00.000":       time.Date(2024, 2, 29, 0, 0, 0, 0, time.UTC).UnixMilli(),
	} {
		got, err := parseResetDatetime(s)
		if err != nil || got != want {
			t.Errorf("%s: %d, %v; want %d", s, got, err, want)
		}
	}
	for _, s := range []string{
		"", "2020-11-10", "2020-11-10T16:51:38", "2020-11-10T16:51:38.19", "2020-11-10T16:51:38.1989",
		"2020-11-10 16:51:38.198", "2020-13-10T16:51:38.198", "2023-02-29T16:51:38.198",
		"2020-11-10T24:00:00.000", "2020-11-10T16:51:38.198+24:00", "2020-11-10T16:51:38.198+08:60",
		"2020-11-10T16:51:38.198 UTC", "2020-11-10T16:51:38.198+8",
	} {
		if _, err := parseResetDatetime(s); err == nil || !strings.Contains(err.Error(), "--to-datetime") {
			t.Errorf("%q: %v, want an error naming --to-datetime", s, err)
		}
	}
}

func TestParseISODuration(t *testing.T) {
	for s, want := range map[string]time.Duration{
		"PT10M":             10 * time.Minute,
		"pt10m":             10 * time.Minute,
		"P1D":               24 * time.Hour,
		"P1DT2H3M4S":        26*time.Hour + 3*time.Minute + 4*time.Second,
		"PT0.5S":            500 * time.Millisecond,
		"PT1,25S":           1250 * time.Millisecond,
		"PT-1.5S":           -1500 * time.Millisecond,
		"-PT1H":             -time.Hour,
		"-PT-1H":            time.Hour,
		"PT1H-30M":          30 * time.Minute,
		"+P2DT0.000000001S": 48*time.Hour + time.Nanosecond,
	} {
		got, err := parseISODuration(s)
		if err != nil || got != want {
			t.Errorf("%s: %v, %v; want %v", s, got, err, want)
		}
	}
	for _, s := range []string{"", "P", "PT", "P1DT", "PT1.S5", "1H", "P1M", "P1Y", "PT1H1H", "PT1.0000000001S", "P200000D", "PT1h30"} {
		if _, err := parseISODuration(s); err == nil || !strings.Contains(err.Error(), "--by-duration") {
			t.Errorf("%q: %v, want an error naming --by-duration", s, err)
		}
	}
}

func TestParseResetCSV(t *testing.T) {
	plans, err := parseResetCSV(strings.NewReader("orders,0,5\n\norders, 2, 7\n"), "g")
	if err != nil || len(plans) != 1 || len(plans["g"]) != 2 || plans["g"][1] != (fileOffset{topic: "orders", partition: 2, offset: 7}) {
		t.Errorf("three fields: %+v, %v", plans, err)
	}
	plans, err = parseResetCSV(strings.NewReader("a,orders,0,5\n\"b,c\",orders,0,6\n"), "")
	if err != nil || len(plans) != 2 || plans["b,c"][0].offset != 6 {
		t.Errorf("four fields: %+v, %v", plans, err)
	}
	for in, want := range map[string]string{
		"orders,0,5\n":                 "need exactly one --group",
		"orders,0\n":                   "2 fields",
		"orders,x,5\n":                 "bad partition",
		"orders,-1,5\n":                "bad partition",
		"orders,0,-5\n":                "bad offset",
		",0,5\n":                       "no topic",
		"g,orders,0,5\ng,orders,0,6\n": "line 2: partition orders-0 of group 'g' appears twice",
		"g,orders,0,5\norders,0,6\n":   "wrong number of fields",
	} {
		single := "g"
		if strings.Contains(want, "--group") {
			single = ""
		}
		if _, err := parseResetCSV(strings.NewReader(in), single); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", in, err, want)
		}
	}
}

package main

import (
	"strings"
	"testing"
)

// TestDumpLogFlagsAnywhereAndFiles checks kafka-dump-log.sh's command lines
// on weir's dump-log: flags after the files (the data is printed, the flag
// is not taken for a file) and the files as --files, comma-separated.
func TestDumpLogFlagsAnywhereAndFiles(t *testing.T) {
	logPath := writeDumpSegment(t, dumpBatches())
	stem := strings.TrimSuffix(logPath, ".log")
	want := mustRun(t, "dump-log", "--print-data-log", logPath, stem+".index")
	if !strings.Contains(want, "\n| offset: 0 ") || !strings.Contains(want, "Dumping "+stem+".index\n") {
		t.Fatalf("dump-log --print-data-log printed no record or no index:\n%s", want)
	}
	for _, args := range [][]string{
		{"dump-log", logPath, stem + ".index", "--print-data-log"},
		{"dump-log", logPath, "--print-data-log", stem + ".index"},
		{"dump-log", "--files", logPath + "," + stem + ".index", "--print-data-log"},
		{"dump-log", "--print-data-log", "--files", logPath, "--files", stem + ".index"},
		{"dump-log", "--files", logPath, stem + ".index", "--print-data-log"},
	} {
		if got := mustRun(t, args...); got != want {
			t.Errorf("weir %q printed:\n%s\nwant:\n%s", args, got, want)
		}
	}
	for _, args := range [][]string{
		{"dump-log", "--files", logPath + ",", "--print-data-log"},
		{"dump-log", "--print-data-log"},
	} {
		if code, stdout, stderr := runCmd(t, args...); code != 2 || stdout != "" || stderr == "" {
			t.Errorf("weir %q: exit %d, stdout %q, stderr %q; want a usage error", args, code, stdout, stderr)
		}
	}
}

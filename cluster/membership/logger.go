package membership

import (
	"context"
	"log"
	"log/slog"
	"strings"
)

// newMemberlistLogger returns the *log.Logger memberlist writes to: every
// line becomes one debug record of l (memberlist's own level, "[WARN]"
// and the like, goes in the attribute "ml_level"). memberlist logs routine
// failures of dead peers as errors, so none of it is above debug here.
func newMemberlistLogger(l *slog.Logger) *log.Logger {
	return log.New(slogWriter{l}, "", 0)
}

// slogWriter is the io.Writer behind newMemberlistLogger; log.Logger calls
// Write once per line.
type slogWriter struct{ l *slog.Logger }

func (w slogWriter) Write(p []byte) (int, error) {
	if !w.l.Enabled(context.Background(), slog.LevelDebug) {
		return len(p), nil
	}
	line := strings.TrimRight(string(p), "\n")
	level := ""
	if strings.HasPrefix(line, "[") {
		if i := strings.IndexByte(line, ']'); i > 0 {
			level, line = line[1:i], strings.TrimSpace(line[i+1:])
		}
	}
	line = strings.TrimPrefix(line, "memberlist: ")
	w.l.Debug("memberlist: "+line, "ml_level", level)
	return len(p), nil
}

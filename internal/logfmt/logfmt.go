// Package logfmt keeps billsync's log records alike in every handler: durations print as Go
// writes them ("1.2s", "33ms"), never as JSON nanoseconds.
package logfmt

import (
	"log/slog"
	"time"
)

// Durations is a slog.HandlerOptions.ReplaceAttr: a time.Duration becomes its string, rounded
// to the millisecond from a second up (and to the microsecond below).
func Durations(_ []string, a slog.Attr) slog.Attr {
	if a.Value.Kind() != slog.KindDuration {
		return a
	}
	d := a.Value.Duration()
	switch {
	case d >= time.Second || d <= -time.Second:
		d = d.Round(time.Millisecond)
	case d >= time.Millisecond || d <= -time.Millisecond:
		d = d.Round(100 * time.Microsecond)
	}
	return slog.String(a.Key, d.String())
}

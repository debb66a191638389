// Package logfmt keeps billsync's log records alike in every handler: durations print as Go
// writes them ("1.2s", "33ms"), never as JSON nanoseconds; times print as RFC 3339 in the
// configured zone (BILLSYNC_TZ) with its offset, so a log line reads on the clock the finance
// team and every other output use ("07:00:00.000+07:00" is the 07:00 WIB delivery).
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

// TimeLayout is how a log writes a time: RFC 3339, milliseconds, the zone's offset.
const TimeLayout = "2006-01-02T15:04:05.000Z07:00"

// In is a slog.HandlerOptions.ReplaceAttr for the zone loc (BILLSYNC_TZ, loaded with the
// settings): Durations, and every time (the record's own and any attribute's) in that zone as
// TimeLayout. A nil loc (settings not read yet) leaves times in UTC ("Z").
func In(loc *time.Location) func([]string, slog.Attr) slog.Attr {
	if loc == nil {
		loc = time.UTC
	}
	return func(groups []string, a slog.Attr) slog.Attr {
		if a.Value.Kind() == slog.KindTime {
			t := a.Value.Time()
			if t.IsZero() {
				return a
			}
			return slog.String(a.Key, t.In(loc).Format(TimeLayout))
		}
		return Durations(groups, a)
	}
}

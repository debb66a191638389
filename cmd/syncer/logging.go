package main

import (
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/billsync/billsync/internal/logfmt"
)

// newLogger logs JSON for cron and containers, text when asked or on a terminal, its times in
// the zone tz (BILLSYNC_TZ) with the offset, as every other output shows them. Where a person
// watches (a terminal with its progress display, the demo with its summary) the log keeps to
// warnings; anywhere else it logs at Info whatever the format, so text logs off a terminal still
// say when the syncer started, how each run ended and when it stopped.
func newLogger(w io.Writer, format string, loc *time.Location, tty, demo bool) *slog.Logger {
	level := slog.LevelInfo
	if tty || demo {
		level = slog.LevelWarn
	}
	opts := &slog.HandlerOptions{Level: level, ReplaceAttr: logfmt.In(loc)}
	if format == "text" || format == "auto" && (tty || demo) {
		return slog.New(slog.NewTextHandler(w, opts))
	}
	return slog.New(slog.NewJSONHandler(w, opts))
}

// isTerminal says whether w is a terminal (a person watching).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	conf "github.com/billsync/billsync/internal/config"
	"github.com/billsync/billsync/internal/lake"
	"github.com/billsync/billsync/internal/warehouse"
)

// validateLake checks the lake read's flags: a point needs a lake, and one point at most.
func (c *config) validateLake() error {
	var errs []error
	if c.LakeAccess.Root == "" {
		if c.asOfSnapshot != 0 || c.asOfTime != "" {
			errs = append(errs, errors.New("-as-of-snapshot and -as-of-time read the lake: give -lake (BILLSYNC_LAKE) and -lake-catalog (BILLSYNC_LAKE_CATALOG) too"))
		}
		return errors.Join(errs...)
	}
	if err := c.LakeAccess.Check(); err != nil {
		errs = append(errs, err)
	}
	if c.asOfSnapshot != 0 && c.asOfTime != "" {
		errs = append(errs, errors.New("use only one of -as-of-snapshot and -as-of-time"))
	}
	if c.asOfSnapshot < 0 {
		errs = append(errs, fmt.Errorf("-as-of-snapshot %d: want a snapshot id (a positive number)", c.asOfSnapshot))
	}
	if c.asOfTime != "" {
		if _, err := c.lakeTime(); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// lakeTime is -as-of-time as an instant: an RFC 3339 time, or a date's end in the zone (the
// snapshots current at the last millisecond of that day).
func (c *config) lakeTime() (time.Time, error) {
	if t, err := time.Parse(time.RFC3339Nano, c.asOfTime); err == nil {
		return t, nil
	}
	day, err := time.ParseInLocation(time.DateOnly, c.asOfTime, c.TZ.Location())
	if err != nil {
		return time.Time{}, fmt.Errorf("-as-of-time %q: want an RFC 3339 time (2026-10-31T23:00:00+07:00) or a date YYYY-MM-DD (its end in %s)", c.asOfTime, c.TZ.String())
	}
	return day.AddDate(0, 0, 1).Add(-time.Millisecond), nil
}

// readLake loads the lake's tables at the point asked, for the account asked (or every
// account), into a warehouse file in a new temporary directory, and points c at it: the
// reports, -sql and -export then read it as they read a synced file. The report date, unless
// -as-of gives one, is the point's date in the zone, so the same snapshot gives the same
// reports on any later day. cleanup removes the directory.
func (c *config) readLake(ctx context.Context, log *slog.Logger) (cleanup func(), err error) {
	at := lake.At{Snapshot: c.asOfSnapshot}
	if c.asOfTime != "" {
		if at.Time, err = c.lakeTime(); err != nil {
			return nil, err
		}
	}
	lk, err := lake.Open(ctx, conf.Lake{LakeAccess: c.LakeAccess}, log)
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "billsync-lake-read-")
	if err != nil {
		return nil, err
	}
	cleanup = func() { os.RemoveAll(dir) }
	path := filepath.Join(dir, "lake.duckdb")
	start := time.Now()
	read, err := lk.Materialize(ctx, at, c.Account, path, warehouse.BuildOptions{Log: quiet(log)})
	if err != nil {
		cleanup()
		return nil, err
	}
	var rows int64
	var snaps []string
	for _, t := range read.Tables {
		rows += t.Rows
		if t.Snapshot != 0 {
			snaps = append(snaps, fmt.Sprintf("%s=%d", t.Table, t.Snapshot))
		}
	}
	var runs []string
	for _, a := range read.Accounts() {
		if c.Account == "" || a == c.Account {
			runs = append(runs, fmt.Sprintf("%s=%d", a, read.Runs[a]))
		}
	}
	// By the rows read, not the snapshots' summaries: an expired snapshot (the daemon's
	// maintenance) takes an account's last commit summary with it, not its rows.
	if c.Account != "" && rows == 0 {
		cleanup()
		return nil, fmt.Errorf("the lake holds no rows of account %q at %s (the accounts its snapshots name: %s)", c.Account,
			read.At.In(c.TZ.Location()).Format(time.RFC3339), strings.Join(read.Accounts(), ", "))
	}
	attrs := []any{"at", read.At, "accounts_runs", strings.Join(runs, " "), "rows", rows,
		"took", time.Since(start).Round(time.Millisecond), "snapshots", strings.Join(snaps, " ")}
	if read.Snapshot != 0 {
		// the one id that reads the same again, for the month-end's records
		attrs = append([]any{"again", fmt.Sprintf("-as-of-snapshot %d", read.Snapshot)}, attrs...)
	}
	log.Info("lake read", attrs...)

	if read.SharedRunIDs {
		log.Warn("lake read: several accounts' runs carry the same run ids (each syncer numbers its own); the data-quality report's sync health joins streams to runs by id and mixes them: read it per account with -account")
	}
	c.DB = path
	if c.asOf == "" && (at.Snapshot != 0 || !at.Time.IsZero()) {
		c.asOf = read.At.In(c.TZ.Location()).Format(time.DateOnly)
	}
	return cleanup, nil
}

// quiet is log without its informational records: the temporary warehouse's build says
// "published" as a sync's does, which a report run has no use for.
func quiet(log *slog.Logger) *slog.Logger {
	return slog.New(levelAtLeast{log.Handler(), slog.LevelWarn})
}

type levelAtLeast struct {
	slog.Handler
	min slog.Level
}

func (h levelAtLeast) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= h.min && h.Handler.Enabled(ctx, l)
}

func (h levelAtLeast) WithAttrs(as []slog.Attr) slog.Handler {
	return levelAtLeast{h.Handler.WithAttrs(as), h.min}
}

func (h levelAtLeast) WithGroup(name string) slog.Handler {
	return levelAtLeast{h.Handler.WithGroup(name), h.min}
}

package lake

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	"github.com/apache/iceberg-go/table/compaction"
)

// MonthEndTag is the tag maintenance gives the snapshot of a table current at the end of a
// month (in the syncer's zone): month-end-2026-10. Tags are never expired: a month's reports
// stay reproducible from it.
func MonthEndTag(month time.Time) string { return "month-end-" + month.Format("2006-01") }

// MaintainOptions say what maintenance keeps.
type MaintainOptions struct {
	// Keep: every snapshot younger than this is kept (any run of that period can be read
	// again); older ones expire, except the month-end snapshots, which are tagged and kept.
	Keep time.Duration
	// Loc is the zone month ends are in (BILLSYNC_TZ).
	Loc *time.Location
	// SmallFiles: a partition with at least this many data files smaller than the target
	// size is rewritten into one (0: 5, iceberg-go's default).
	SmallFiles uint
	// OrphansAfter: files under a table in no snapshot (a killed commit's) older than this
	// are removed (0: 24h). Younger ones may be another syncer's commit under way.
	OrphansAfter time.Duration
	// Now is the time maintenance runs at (nil: time.Now); tests move it.
	Now func() time.Time
}

// TableMaintenance is what maintenance did to one table.
type TableMaintenance struct {
	Table          string
	Tagged         []string // month-end tags added
	Expired        int      // snapshots expired
	Compacted      int      // partitions rewritten
	FilesRewritten int      // data files those partitions had
	Orphans        int      // files in no snapshot removed
	Retries        int
}

// Maintenance is what a Maintain did.
type Maintenance struct {
	Tables []TableMaintenance
	Took   time.Duration
}

// Totals sums the tables' figures.
func (m Maintenance) Totals() (tagged, expired, compacted, orphans int) {
	for _, t := range m.Tables {
		tagged, expired, compacted, orphans = tagged+len(t.Tagged), expired+t.Expired, compacted+t.Compacted, orphans+t.Orphans
	}
	return
}

// Maintain keeps the lake's tables small: per table it compacts the partitions that gathered
// small files, tags each month's end, expires the snapshots older than Keep that no tag
// holds (deleting the files only they held) and removes files no snapshot holds. Every step
// is its own commit and safe beside syncers committing: a conflict reloads the table and does
// the step again. Every table is tried; the errors of those that failed are returned together.
func (l *Lake) Maintain(ctx context.Context, o MaintainOptions) (Maintenance, error) {
	start := time.Now()
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Loc == nil {
		o.Loc = time.UTC
	}
	if o.SmallFiles == 0 {
		o.SmallFiles = compaction.DefaultMinInputFiles
	}
	if o.OrphansAfter == 0 {
		o.OrphansAfter = 24 * time.Hour
	}
	var res Maintenance
	var errs []error
	for _, name := range Tables() {
		tm, err := l.maintainTable(ctx, name, o)
		if errors.Is(err, catalog.ErrNoSuchTable) {
			continue // nothing committed to it yet
		}
		res.Tables = append(res.Tables, tm)
		if err != nil {
			errs = append(errs, fmt.Errorf("lake table %s: maintenance: %w", name, err))
			if ctx.Err() != nil {
				break
			}
		}
	}
	res.Took = time.Since(start)
	return res, errors.Join(errs...)
}

func (l *Lake) maintainTable(ctx context.Context, name string, o MaintainOptions) (TableMaintenance, error) {
	tm := TableMaintenance{Table: name}
	id := table.Identifier{l.ns, name}
	if _, err := l.cat.LoadTable(ctx, id); err != nil {
		return tm, err
	}
	steps := []struct {
		what string
		do   func(*table.Table) error
	}{
		{"properties", func(tbl *table.Table) error { return l.setProps(ctx, tbl) }},
		{"compaction", func(tbl *table.Table) error {
			n, files, err := compact(ctx, tbl, o.SmallFiles)
			tm.Compacted, tm.FilesRewritten = n, files
			return err
		}},
		{"month-end tags", func(tbl *table.Table) error {
			tags, err := l.tagMonthEnds(ctx, tbl, o)
			tm.Tagged = tags
			return err
		}},
		{"snapshot expiry", func(tbl *table.Table) error {
			n, err := expire(ctx, tbl, o)
			tm.Expired = n
			return err
		}},
		{"orphan files", func(tbl *table.Table) error {
			r, err := tbl.DeleteOrphanFiles(ctx, table.WithFilesOlderThan(o.OrphansAfter))
			tm.Orphans = len(r.DeletedFiles)
			return err
		}},
	}
	for _, step := range steps {
		retries, err := l.retry(ctx, id, step.do)
		tm.Retries += retries
		if err != nil {
			return tm, fmt.Errorf("%s: %w", step.what, err)
		}
	}
	return tm, nil
}

// retry runs a step on the catalog's current table, again on a fresh load after a conflict
// with another committer.
func (l *Lake) retry(ctx context.Context, id table.Identifier, step func(*table.Table) error) (retries int, err error) {
	for attempt := range max(l.Attempts, 1) {
		if attempt > 0 {
			retries++
			wait := l.Backoff << min(attempt-1, 6)
			select {
			case <-ctx.Done():
				return retries, errors.Join(err, ctx.Err())
			case <-time.After(wait + time.Duration(rand.Int64N(int64(wait)+1))):
			}
		}
		tbl, lerr := l.cat.LoadTable(ctx, id)
		if lerr != nil {
			return retries, lerr
		}
		if err = step(tbl); err == nil || ctx.Err() != nil || !conflict(err) {
			return retries, err
		}
	}
	return retries, err
}

// setProps gives a table created before billsync set them its current table properties
// (zstd, the bound on old metadata files, the target file size compaction writes to).
func (l *Lake) setProps(ctx context.Context, tbl *table.Table) error {
	have := tbl.Properties()
	want := iceberg.Properties{}
	for k, v := range l.props {
		if k != "format-version" && have[k] != v {
			want[k] = v
		}
	}
	if len(want) == 0 {
		return nil
	}
	tx := tbl.NewTransaction()
	if err := tx.SetProperties(want); err != nil {
		return err
	}
	_, err := tx.Commit(ctx)
	return err
}

// tagMonthEnds tags, for each month that ended since the table's oldest snapshot in the log,
// the snapshot current at its end (the last one committed before it), unless a tag of that
// month exists.
func (l *Lake) tagMonthEnds(ctx context.Context, tbl *table.Table, o MaintainOptions) ([]string, error) {
	meta := tbl.Metadata()
	refs := maps.Collect(meta.Refs())
	entries := slices.Collect(meta.SnapshotLogs())
	if len(entries) == 0 {
		return nil, nil
	}
	now := o.Now().In(o.Loc)
	first := time.UnixMilli(entries[0].TimestampMs).In(o.Loc)
	var tags []string
	var updates []table.Update
	for m := time.Date(first.Year(), first.Month(), 1, 0, 0, 0, 0, o.Loc); ; m = m.AddDate(0, 1, 0) {
		end := m.AddDate(0, 1, 0)
		if end.After(now) {
			break
		}
		tag := MonthEndTag(m)
		if _, ok := refs[tag]; ok {
			continue
		}
		var snap int64
		for _, e := range entries {
			if e.TimestampMs < end.UnixMilli() {
				snap = e.SnapshotID
			}
		}
		if snap == 0 || meta.SnapshotByID(snap) == nil {
			continue // expired before any maintenance tagged it
		}
		updates = append(updates, table.NewSetSnapshotRefUpdate(tag, snap, table.TagRef, 0, 0, 0))
		tags = append(tags, tag)
	}
	if len(updates) == 0 {
		return nil, nil
	}
	if _, _, err := l.cat.CommitTable(ctx, tbl.Identifier(), []table.Requirement{table.AssertTableUUID(meta.TableUUID())}, updates); err != nil {
		return nil, err
	}
	l.log.Info("lake: month ends tagged", "table", tbl.Identifier(), "tags", strings.Join(tags, ","))
	return tags, nil
}

// compact rewrites each partition holding at least min small data files into one file
// (iceberg-go's bin-pack compaction: the rows as they are, in one snapshot). A billsync commit
// writes one file per account, so this finds work only where another writer, or a smaller
// target file size, left fragments.
func compact(ctx context.Context, tbl *table.Table, min uint) (partitions, files int, err error) {
	cfg := compaction.DefaultConfig()
	cfg.MinInputFiles = min
	plan, err := compaction.Analyze(ctx, tbl, cfg)
	if err != nil || len(plan.Groups) == 0 {
		return 0, 0, err
	}
	groups := make([]table.CompactionTaskGroup, len(plan.Groups))
	for i, g := range plan.Groups {
		groups[i] = table.CompactionTaskGroup{PartitionKey: g.PartitionKey, Tasks: g.Tasks, TotalSizeBytes: g.TotalSizeBytes}
		files += len(g.Tasks)
	}
	tx := tbl.NewTransaction()
	if _, err := tx.RewriteDataFiles(ctx, groups, table.RewriteDataFilesOptions{}); err != nil {
		return 0, 0, err
	}
	if _, err := tx.Commit(ctx); err != nil {
		return 0, 0, err
	}
	return len(groups), files, nil
}

// expire expires the snapshots older than Keep that no tag or branch holds, and deletes the
// files only they held.
func expire(ctx context.Context, tbl *table.Table, o MaintainOptions) (int, error) {
	before := len(tbl.Metadata().Snapshots())
	// iceberg-go measures ages from the wall clock: Now's distance from it moves the cut.
	olderThan := max(o.Keep-time.Until(o.Now()), 0)
	tx := tbl.NewTransaction()
	if err := tx.ExpireSnapshots(table.WithOlderThan(olderThan), table.WithRetainLast(1)); err != nil {
		return 0, err
	}
	out, err := tx.Commit(ctx)
	if err != nil {
		return 0, err
	}
	return before - len(out.Metadata().Snapshots()), nil
}

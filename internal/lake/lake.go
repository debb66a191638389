// Package lake commits a sync run's accounts to an Apache Iceberg lake, so a fleet of syncers
// (one per merchant) fills one set of tables that Trino, Spark, Snowflake, BigQuery or DuckDB
// read (docs/lake.md). It reads the published DuckDB file read-only and writes through
// iceberg-go: one Iceberg table per warehouse data table, the same name and columns
// (warehouse.DataColumns, from internal/entity's declarations), partitioned by account.
//
// A commit replaces the account's partition of a table whole, in one Iceberg snapshot
// (an overwrite filtered on account): atomic, never touching another account's rows, and
// idempotent, so a commit that failed or was killed is completed by the next one.
package lake

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	_ "github.com/apache/iceberg-go/catalog/rest" // http(s):// catalogs
	_ "github.com/apache/iceberg-go/catalog/sql"  // sqlite:// and postgres:// catalogs
	iceio "github.com/apache/iceberg-go/io"
	_ "github.com/apache/iceberg-go/io/gocloud/s3" // s3:// lakes
	"github.com/apache/iceberg-go/table"
	_ "github.com/jackc/pgx/v5/stdlib"           // the PostgreSQL driver of the SQL catalog ("pgx")
	_ "github.com/uptrace/bun/driver/sqliteshim" // the SQLite driver of the SQL catalog (pure Go)

	"github.com/billsync/billsync/internal/config"
	"github.com/billsync/billsync/internal/warehouse"
)

// CatalogName is the name the catalog is opened under. iceberg-go's SQL catalog stores it on
// every row: a reader must open the catalog under the same name to see the tables.
const CatalogName = "billsync"

// The snapshot summary properties of a billsync commit: the account whose partition it
// replaced, the run of the published file it holds, and the partition's row count and digest
// (what a later run compares to skip a table its run did not change).
const (
	PropRun     = "billsync.run"
	PropAccount = "billsync.account"
	PropRows    = "billsync.rows"
	PropDigest  = "billsync.digest"
)

// Lake is an open catalog and the namespace of billsync's tables.
type Lake struct {
	cat   catalog.Catalog
	ns    string
	log   *slog.Logger
	props iceberg.Properties // the table properties billsync creates its tables with
	// Attempts bounds the tries of one table's commit (conflicts with other committers);
	// Backoff is the first wait between them, doubled each time, with jitter.
	Attempts int
	Backoff  time.Duration
}

// Open opens the lake's catalog and makes sure its namespace exists. The tables are created
// (or gain the columns their declarations gained) when a commit first needs them.
func Open(ctx context.Context, cfg config.Lake, log *slog.Logger) (*Lake, error) {
	if err := cfg.Check(); err != nil {
		return nil, err
	}
	if cfg.Root == "" {
		return nil, errors.New("no lake: BILLSYNC_LAKE is empty")
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	props := iceberg.Properties{"warehouse": strings.TrimSuffix(cfg.Root, "/")}
	if cfg.S3Endpoint != "" {
		props[iceio.S3EndpointURL] = cfg.S3Endpoint
	}
	switch {
	case strings.HasPrefix(cfg.Catalog, "sqlite://"):
		u, err := url.Parse(cfg.Catalog)
		if err != nil || u.Path == "" {
			return nil, fmt.Errorf("BILLSYNC_LAKE_CATALOG %q: want sqlite:///abs/path/catalog.db", cfg.Catalog)
		}
		// Several syncers on one machine write the one file: they wait for each other's
		// transactions instead of failing with "database is locked".
		props["type"], props["uri"] = "sql", "file:"+u.Path+"?_pragma=busy_timeout(30000)"
		props["sql.driver"], props["sql.dialect"] = "sqliteshim", "sqlite"
	case strings.HasPrefix(cfg.Catalog, "postgres://"), strings.HasPrefix(cfg.Catalog, "postgresql://"):
		// the same SQL catalog in a database a fleet's machines share (pgx takes the URL whole:
		// sslmode, passwords and the rest as PostgreSQL's libpq reads them)
		props["type"], props["uri"] = "sql", cfg.Catalog
		props["sql.driver"], props["sql.dialect"] = "pgx", "postgres"
	case strings.HasPrefix(cfg.Catalog, "http://"), strings.HasPrefix(cfg.Catalog, "https://"):
		props["type"], props["uri"] = "rest", cfg.Catalog
	default:
		return nil, fmt.Errorf("BILLSYNC_LAKE_CATALOG %q: want sqlite:///abs/path/catalog.db, postgres://… or http(s)://… (REST)", redact(cfg.Catalog))
	}
	l := &Lake{ns: cfg.Namespace, log: log, Attempts: 30, Backoff: 50 * time.Millisecond,
		props: tableProps()}
	// Syncers starting at once race to create the catalog's own tables and the namespace: the
	// loser of such a race opens again (the winner's work is then found done).
	var err error
	for attempt := 0; ; attempt++ {
		if err = l.open(ctx, props); err == nil || attempt >= 8 || !conflict(err) {
			break
		}
		select {
		case <-ctx.Done():
			return nil, errors.Join(err, ctx.Err())
		case <-time.After(time.Duration(50+rand.IntN(200)) * time.Millisecond):
		}
	}
	if err != nil {
		return nil, fmt.Errorf("open the lake's catalog %s: %w", redact(cfg.Catalog), err)
	}
	return l, nil
}

func (l *Lake) open(ctx context.Context, props iceberg.Properties) error {
	cat, err := catalog.Load(ctx, CatalogName, props)
	if err != nil {
		return err
	}
	if err := cat.CreateNamespace(ctx, table.Identifier{l.ns}, nil); err != nil && !errors.Is(err, catalog.ErrNamespaceAlreadyExists) {
		closeCatalog(cat)
		return fmt.Errorf("namespace %s: %w", l.ns, err)
	}
	l.cat = cat
	return nil
}

// closeCatalog releases a catalog's connections (a SQL catalog's pool), where it has any.
func closeCatalog(cat catalog.Catalog) {
	if c, ok := cat.(io.Closer); ok {
		c.Close()
	}
}

// Close releases the catalog's connections.
func (l *Lake) Close() {
	if l != nil && l.cat != nil {
		closeCatalog(l.cat)
	}
}

// tableProps are the properties billsync creates its tables with (and maintenance sets on
// older ones): zstd Parquet, format 2, and a bounded count of old metadata files (each commit
// writes one; iceberg-go removes those beyond the newest 50 after each commit) and iceberg-go's
// target file size, which compaction writes to.
func tableProps() iceberg.Properties {
	return iceberg.Properties{"write.parquet.compression-codec": "zstd", "format-version": "2",
		table.MetadataDeleteAfterCommitEnabledKey: "true", table.MetadataPreviousVersionsMaxKey: "50",
		table.WriteTargetFileSizeBytesKey: fmt.Sprint(table.WriteTargetFileSizeBytesDefault)}
}

// redact drops a URL's password: a catalog's URL may carry one, and errors get logged.
func redact(s string) string {
	u, err := url.Parse(s)
	if err != nil || u.User == nil {
		return s
	}
	return u.Redacted()
}

// Catalog is the lake's catalog, for readers (tests, report).
func (l *Lake) Catalog() catalog.Catalog { return l.cat }

// Namespace is the namespace of the lake's tables.
func (l *Lake) Namespace() string { return l.ns }

// Tables are the lake's tables: every warehouse data table, then the history tables the
// reports read (history.go).
func Tables() []string { return tableNames() }

// TableResult is what one commit did to one table for one account.
type TableResult struct {
	Table, Account string
	Run            int64
	Rows           int64
	Committed      bool          // false: the lake already held this state of the partition
	Snapshot       int64         // the snapshot committed
	Retries        int           // commits retried after a conflict (or a failure)
	Took           time.Duration // the table's commit, retries included
}

// Result is what a Commit did.
type Result struct {
	Tables []TableResult
	Took   time.Duration
}

// Snapshots are the snapshots committed; Retries the conflicts retried.
func (r Result) Snapshots() (n, retries int) {
	for _, t := range r.Tables {
		if t.Committed {
			n++
		}
		retries += t.Retries
	}
	return n, retries
}

// Commit commits each account's rows of the published warehouse at dbPath to the lake: per
// table, at most one snapshot replacing the account's partition with the file's rows. A table
// whose partition already holds them is left alone, so committing again (after a killed or
// failed commit, or twice) only completes what is missing. Every table is tried; the errors of
// those that failed are returned together.
func (l *Lake) Commit(ctx context.Context, dbPath string, accounts []string) (Result, error) {
	start := time.Now()
	var res Result
	src, err := openSource(ctx, dbPath)
	if err != nil {
		return res, err
	}
	defer src.Close()
	var errs []error
	for _, account := range accounts {
		run, err := src.lastRun(ctx, account)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if run == 0 {
			l.log.Warn("lake: the published warehouse has no finished run of the account; nothing to commit", "account", account)
			continue
		}
		var failed []tableError
		for _, name := range Tables() {
			tr, err := l.commitTable(ctx, src, name, account, run)
			res.Tables = append(res.Tables, tr)
			if err != nil {
				failed = append(failed, tableError{name, err})
				if ctx.Err() != nil {
					break
				}
			}
		}
		if len(failed) > 0 {
			errs = append(errs, fmt.Errorf("account %s, run %d: %w", account, run, joinTableErrors(failed)))
		}
		if ctx.Err() != nil {
			break
		}
	}
	res.Took = time.Since(start)
	return res, errors.Join(errs...)
}

type tableError struct {
	table string
	err   error
}

// joinTableErrors says each distinct failure once with the tables it stopped: a lake that
// refuses every write (a full disk, a catalog down) fails every table the same way, and the
// operator reads one line, not ten.
func joinTableErrors(failed []tableError) error {
	type group struct {
		tables []string
		err    error
	}
	var groups []*group
	byText := map[string]*group{}
	for _, f := range failed {
		key := strings.ReplaceAll(f.err.Error(), f.table, "\x00")
		g := byText[key]
		if g == nil {
			g = &group{err: f.err}
			byText[key] = g
			groups = append(groups, g)
		}
		g.tables = append(g.tables, f.table)
	}
	var errs []error
	for _, g := range groups {
		what := "lake table " + g.tables[0]
		if len(g.tables) > 1 {
			what = fmt.Sprintf("lake tables %s (%d; the error of %s)", strings.Join(g.tables, ", "), len(g.tables), g.tables[0])
		}
		errs = append(errs, fmt.Errorf("%s: %w", what, g.err))
	}
	return errors.Join(errs...)
}

// beforeCommit runs between writing a table's data files and committing them: tests stop a
// commit there, as a kill would.
var beforeCommit = func(ctx context.Context, table, account string) error { return nil }

func (l *Lake) commitTable(ctx context.Context, src *source, name, account string, run int64) (tr TableResult, err error) {
	start := time.Now()
	tr = TableResult{Table: name, Account: account, Run: run}
	defer func() { tr.Took = time.Since(start) }()
	rows, digest, err := src.digest(ctx, name, account)
	if err != nil {
		return tr, err
	}
	tr.Rows = rows
	var lastErr error
	for attempt := range max(l.Attempts, 1) {
		if attempt > 0 {
			tr.Retries++
			wait := l.Backoff << min(attempt-1, 6)
			wait += time.Duration(rand.Int64N(int64(wait) + 1))
			l.log.Debug("lake: retrying a commit", "table", name, "account", account, "attempt", attempt+1, "wait", wait, "err", lastErr)
			select {
			case <-ctx.Done():
				return tr, errors.Join(lastErr, ctx.Err())
			case <-time.After(wait):
			}
		}
		// Each attempt starts from the catalog's current table: another committer's snapshot
		// (or schema change) since the last attempt is the base of this one.
		tbl, err := l.table(ctx, name)
		if err != nil {
			if !conflict(err) {
				return tr, err
			}
			lastErr = err
			continue
		}
		last := lastCommit(tbl, account)
		if last.run > run {
			return tr, fmt.Errorf("the lake holds run %d of the account, the published warehouse only run %d: the lake is ahead of the file (a restored or replaced warehouse?); not committing an older state over it", last.run, run)
		}
		if last.rows == rows && last.digest == digest {
			// The partition already holds these rows: a table the run did not change, or a
			// commit that landed before its process could record it.
			tr.Took = time.Since(start)
			return tr, nil
		}
		snap, err := l.overwrite(ctx, tbl, src, name, account, run, rows, digest)
		if err == nil {
			tr.Committed, tr.Snapshot = true, snap
			return tr, nil
		}
		if ctx.Err() != nil || !conflict(err) {
			// Not another committer's doing: retrying now would fail the same way (and wait
			// minutes doing so); the next run tries again.
			return tr, err
		}
		lastErr = err
	}
	return tr, fmt.Errorf("gave up after %d attempts: %w", max(l.Attempts, 1), lastErr)
}

// conflict says whether err is another committer's doing, which a commit on the reloaded table
// resolves: a catalog's optimistic rejection (the SQL catalog's "branch main has changed" is not
// marked retryable by iceberg-go), a table created by another at the same moment, or the
// SQLite catalog's file busy beyond its timeout.
func conflict(err error) bool {
	if errors.Is(err, table.ErrCommitFailed) || errors.Is(err, catalog.ErrTableAlreadyExists) {
		return true
	}
	msg := strings.ToLower(err.Error())
	for _, s := range []string{"requirement failed", "has changed", "database is locked", "sqlite_busy",
		// PostgreSQL: two first committers creating the same catalog row or table at once
		"duplicate key value", "could not serialize", "deadlock detected"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

// overwrite replaces the account's partition of tbl with the file's rows, in one snapshot.
func (l *Lake) overwrite(ctx context.Context, tbl *table.Table, src *source, name, account string, run, rows int64, digest string) (int64, error) {
	rdr, cleanup, err := src.records(ctx, name, account, tbl.Schema())
	if err != nil {
		return 0, err
	}
	defer cleanup()
	defer rdr.Release()
	props := iceberg.Properties{PropRun: fmt.Sprint(run), PropAccount: account, PropRows: fmt.Sprint(rows), PropDigest: digest}
	tx := tbl.NewTransaction()
	// The filter is the account's partition: files of other accounts are not even read.
	filter := iceberg.EqualTo(iceberg.Reference("account"), account)
	if err := tx.Overwrite(ctx, rdr, props, table.WithOverwriteFilter(filter)); err != nil {
		return 0, fmt.Errorf("write: %w", err)
	}
	if err := rdr.Err(); err != nil {
		return 0, fmt.Errorf("read: %w", err)
	}
	if err := beforeCommit(ctx, name, account); err != nil {
		return 0, err
	}
	committed, err := tx.Commit(ctx)
	if err != nil {
		return 0, fmt.Errorf("commit: %w", err)
	}
	return committed.CurrentSnapshot().SnapshotID, nil
}

// committed is what the lake holds of one account in one table: the summary of the newest
// snapshot billsync committed for it.
type committed struct {
	run    int64
	rows   int64
	digest string
}

// lastCommit walks the table's history back from its current snapshot to the newest that
// replaced the account's partition. None: the lake holds no rows of it.
func lastCommit(tbl *table.Table, account string) committed {
	meta := tbl.Metadata()
	for s := tbl.CurrentSnapshot(); s != nil; {
		if s.Summary != nil && s.Summary.Properties[PropAccount] == account {
			var c committed
			fmt.Sscan(s.Summary.Properties[PropRun], &c.run)
			fmt.Sscan(s.Summary.Properties[PropRows], &c.rows)
			c.digest = s.Summary.Properties[PropDigest]
			return c
		}
		if s.ParentSnapshotID == nil {
			break
		}
		s = meta.SnapshotByID(*s.ParentSnapshotID)
	}
	return committed{digest: emptyDigest}
}

// LastRun is the run of account the lake's table holds (0: none), from its snapshot summaries.
func (l *Lake) LastRun(ctx context.Context, name, account string) (int64, error) {
	tbl, err := l.cat.LoadTable(ctx, table.Identifier{l.ns, name})
	if err != nil {
		return 0, err
	}
	return lastCommit(tbl, account).run, nil
}

// table loads the lake's table, creating it or adding the columns its declaration gained.
func (l *Lake) table(ctx context.Context, name string) (*table.Table, error) {
	cols, ok := dataColumns()[name]
	if !ok {
		return nil, fmt.Errorf("no warehouse table %s", name)
	}
	want, err := schemaOf(cols)
	if err != nil {
		return nil, fmt.Errorf("table %s: %w", name, err)
	}
	id := table.Identifier{l.ns, name}
	tbl, err := l.cat.LoadTable(ctx, id)
	if errors.Is(err, catalog.ErrNoSuchTable) {
		accountID := want.Fields()[0].ID
		spec := iceberg.NewPartitionSpec(iceberg.PartitionField{SourceIDs: []int{accountID}, FieldID: 1000, Name: "account", Transform: iceberg.IdentityTransform{}})
		tbl, err = l.cat.CreateTable(ctx, id, want, catalog.WithPartitionSpec(&spec), catalog.WithProperties(l.props))
		if errors.Is(err, catalog.ErrTableAlreadyExists) {
			// another committer created it first
			tbl, err = l.cat.LoadTable(ctx, id)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("lake table %s: %w", name, err)
	}
	return l.evolve(ctx, tbl, want)
}

// evolve adds to the lake's table the columns the declaration gained (a new column: older
// snapshots read it as null, nothing is rewritten). A column whose type changed, or a column
// the declaration dropped, is not guessed at: a changed type is an error, a dropped column
// stays in the lake and is null from then on.
func (l *Lake) evolve(ctx context.Context, tbl *table.Table, want *iceberg.Schema) (*table.Table, error) {
	have := tbl.Schema()
	var add []iceberg.NestedField
	for _, f := range want.Fields() {
		h, ok := have.FindFieldByName(f.Name)
		if !ok {
			add = append(add, f)
			continue
		}
		if !h.Type.Equals(f.Type) {
			return nil, fmt.Errorf("lake table %s, column %s: the lake has %s, the declaration %s; a changed type is not evolved automatically (docs/lake.md)",
				tbl.Identifier()[len(tbl.Identifier())-1], f.Name, h.Type, f.Type)
		}
	}
	if len(add) == 0 {
		return tbl, nil
	}
	tx := tbl.NewTransaction()
	us := tx.UpdateSchema(true, false)
	for _, f := range add {
		us = us.AddColumn([]string{f.Name}, f.Type, f.Doc, false, nil)
	}
	if err := us.Commit(); err != nil {
		return nil, fmt.Errorf("lake table %s: add columns: %w", tbl.Identifier(), err)
	}
	out, err := tx.Commit(ctx)
	if err != nil {
		return nil, fmt.Errorf("lake table %s: add columns: %w", tbl.Identifier(), err)
	}
	var names []string
	for _, f := range add {
		names = append(names, f.Name)
	}
	l.log.Info("lake: columns added", "table", tbl.Identifier(), "columns", strings.Join(names, ","))
	return out, nil
}

// dataColumns are the columns of the lake's tables (history.go); a variable so a test can
// declare one more.
var dataColumns = tableColumns

// skipped are the warehouse columns the lake leaves out, the sync's own bookkeeping: raw_hash
// is the merge's change test (a 128-bit unsigned integer, which Iceberg has no type for);
// last_seen_run and last_seen_at say when a sync last read the record, so they change on every
// row at every run. Holding them, every nightly commit rewrote every table whole although the
// records had not changed (at scale 10, 131,000 rows a night: docs/performance.md).
var skipped = []string{"raw_hash", "last_seen_run", "last_seen_at"}

// Columns are the names of the columns the lake's table holds, in order: the warehouse table's
// but the sync's bookkeeping (skipped).
func Columns(table string) []string {
	var out []string
	for _, c := range lakeColumns(table) {
		out = append(out, c.Name)
	}
	return out
}

// schemaOf is the Iceberg schema of a warehouse table's columns, every column optional.
func schemaOf(cols []warehouse.Column) (*iceberg.Schema, error) {
	var fields []iceberg.NestedField
	for _, c := range cols {
		if slices.Contains(skipped, c.Name) {
			continue
		}
		t, err := icebergType(c)
		if err != nil {
			return nil, err
		}
		fields = append(fields, iceberg.NestedField{ID: len(fields) + 1, Name: c.Name, Type: t, Required: false})
	}
	if len(fields) == 0 || fields[0].Name != "account" {
		return nil, errors.New("the first column is not account")
	}
	return iceberg.NewSchema(0, fields...), nil
}

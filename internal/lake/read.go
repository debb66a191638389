package lake

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/billsync/billsync/internal/duckfile"
	"github.com/billsync/billsync/internal/sqlfile"
	"github.com/billsync/billsync/internal/warehouse"
	"github.com/billsync/billsync/queries"
)

// The read side: the lake's tables as they stood at one point, loaded into a new warehouse
// file so the reports run over it as over a file a sync published (docs/lake.md, "Month-end
// reports from the lake"). iceberg-go plans which data files a snapshot holds; DuckDB reads
// exactly those Parquet files. Nothing is downloaded: DuckDB's iceberg extension is not used.

//go:embed read.sql
var readFS embed.FS

var readSQL = sqlfile.MustLoad(readFS, "read.sql", "parquet_columns", "warehouse_columns", "shared_run_ids")

// At is the point a read of the lake stands at: one snapshot, one instant, or (zero) now.
type At struct {
	// Snapshot is the id of a snapshot of any of the lake's tables: that table is read at it,
	// every other table at its snapshot current when it was committed.
	Snapshot int64
	// Time reads every table at its snapshot current at this instant (Iceberg's "as of
	// timestamp"). A time after now is refused: later commits would change what it reads.
	Time time.Time
}

// TableRead is what a read found of one table.
type TableRead struct {
	Table     string
	Snapshot  int64     // 0: the table had no snapshot yet (no rows)
	Committed time.Time // when Snapshot was committed
	Files     int       // data files read
	Rows      int64     // rows loaded
}

// Read is what Materialize loaded.
type Read struct {
	At time.Time // the point read: the snapshot's commit time, or the time asked
	// Snapshot is the snapshot asked for, or with no point asked the newest (the one whose id
	// reads the same again); 0 with a time.
	Snapshot int64
	Tables   []TableRead
	// Runs is, per account the lake held at the point (read or not), the newest sync run any
	// table's partition holds there.
	Runs map[string]int64
	// SharedRunIDs says that several accounts' runs carry the same id (each syncer numbers
	// its own): sync health, which joins a run's streams by id, cannot tell them apart.
	SharedRunIDs bool
}

// Accounts are the accounts the read found, sorted.
func (r *Read) Accounts() []string {
	var out []string
	for a := range r.Runs {
		out = append(out, a)
	}
	slices.Sort(out)
	return out
}

// Materialize writes the rows of account ("" = every account) the lake's tables held at at
// into a new warehouse file at path, with this billsync's schema and report macros: a file
// the reports read as they read a synced one. path must not exist; opts bound the DuckDB
// that writes it (its memory limit, as a sync's build).
func (l *Lake) Materialize(ctx context.Context, at At, account, path string, opts warehouse.BuildOptions) (*Read, error) {
	if _, err := os.Stat(path); err == nil {
		return nil, fmt.Errorf("lake read: %s exists already; the read writes a new file", path)
	}
	tables, err := l.loadTables(ctx)
	if err != nil {
		return nil, err
	}
	read, snaps, err := resolve(tables, at, time.Now())
	if err != nil {
		return nil, err
	}
	read.Runs = map[string]int64{}
	b, err := warehouse.StartBuild(ctx, path, opts)
	if err != nil {
		return nil, fmt.Errorf("lake read: %w", err)
	}
	files := path + ".files" // data files of a remote lake, copied to be read
	defer os.RemoveAll(files)
	for _, name := range Tables() {
		tr := TableRead{Table: name}
		if s := snaps[name]; s != nil {
			tr.Snapshot, tr.Committed = s.SnapshotID, time.UnixMilli(s.TimestampMs)
			if err := l.loadTable(ctx, b.DB(), tables[name], s, account, files, &tr); err != nil {
				b.Discard()
				return nil, fmt.Errorf("lake read: table %s, snapshot %d: %w", name, s.SnapshotID, err)
			}
			runsHeld(tables[name].Metadata(), s, read.Runs)
		}
		read.Tables = append(read.Tables, tr)
	}
	if err := finishRead(ctx, b, read); err != nil {
		b.Discard()
		return nil, err
	}
	if err := b.Publish(ctx); err != nil {
		return nil, fmt.Errorf("lake read: %w", err)
	}
	return read, nil
}

// finishRead installs the report macros, as a sync does before it publishes, and checks the
// run ids.
func finishRead(ctx context.Context, b *warehouse.Build, read *Read) error {
	if err := queries.Install(ctx, b.DB()); err != nil {
		return fmt.Errorf("lake read: %w", err)
	}
	var shared int64
	if err := b.DB().QueryRowContext(ctx, readSQL.Get("shared_run_ids")).Scan(&shared); err != nil {
		return fmt.Errorf("lake read: run ids: %w", err)
	}
	read.SharedRunIDs = shared > 0
	return nil
}

// loadTables loads every lake table; one not created yet is absent from the map.
func (l *Lake) loadTables(ctx context.Context) (map[string]*table.Table, error) {
	out := map[string]*table.Table{}
	for _, name := range Tables() {
		tbl, err := l.cat.LoadTable(ctx, table.Identifier{l.ns, name})
		if errors.Is(err, catalog.ErrNoSuchTable) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("lake read: table %s: %w", name, err)
		}
		out[name] = tbl
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("lake read: the namespace %s has none of billsync's tables: no sync has committed to this lake (or BILLSYNC_LAKE_NAMESPACE names another)", l.ns)
	}
	return out, nil
}

// resolve picks each table's snapshot at at: the snapshot asked for in its table, and in the
// others the snapshot current when it was committed; or each table's snapshot current at the
// time asked; or each table's current snapshot.
func resolve(tables map[string]*table.Table, at At, now time.Time) (*Read, map[string]*table.Snapshot, error) {
	read := &Read{Snapshot: at.Snapshot, At: now}
	snaps := map[string]*table.Snapshot{}
	owner := ""
	switch {
	case at.Snapshot != 0:
		for name, tbl := range tables {
			if s := tbl.Metadata().SnapshotByID(at.Snapshot); s != nil {
				owner, snaps[name], read.At = name, s, time.UnixMilli(s.TimestampMs)
			}
		}
		if owner == "" {
			return nil, nil, fmt.Errorf("lake read: snapshot %d is in none of the lake's tables (an id from another lake, or expired)", at.Snapshot)
		}
	case !at.Time.IsZero():
		if at.Time.After(now) {
			return nil, nil, fmt.Errorf("lake read: %s is after now (%s): commits until then would change what it reads; give a past time or no time (the current snapshots)",
				at.Time.Format(time.RFC3339), now.Format(time.RFC3339))
		}
		read.At = at.Time
	default:
		// Now is the newest snapshot's commit: -as-of-snapshot with its id reads the same.
		for name, tbl := range tables {
			s := tbl.CurrentSnapshot()
			snaps[name] = s
			if s != nil && (read.Snapshot == 0 || s.TimestampMs > read.At.UnixMilli()) {
				read.Snapshot, read.At = s.SnapshotID, time.UnixMilli(s.TimestampMs)
			}
		}
		return read, snaps, nil
	}
	cutoff := read.At.UnixMilli()
	found := owner != ""
	for name, tbl := range tables {
		if name == owner {
			continue
		}
		if s := currentAt(tbl, cutoff); s != nil {
			snaps[name], found = s, true
		}
	}
	if !found {
		return nil, nil, fmt.Errorf("lake read: no table of the lake had a snapshot at %s (the first commits came later)", read.At.Format(time.RFC3339))
	}
	return read, snaps, nil
}

// currentAt is the table's snapshot current at the instant ms: the newest of the main
// branch's history committed by then (nil: none yet). billsync's commits are appends and
// overwrites on main, never rollbacks, so its history is the current snapshot's ancestors.
func currentAt(tbl *table.Table, ms int64) *table.Snapshot {
	meta := tbl.Metadata()
	for s := tbl.CurrentSnapshot(); s != nil; {
		if s.TimestampMs <= ms {
			return s
		}
		if s.ParentSnapshotID == nil {
			return nil
		}
		s = meta.SnapshotByID(*s.ParentSnapshotID)
	}
	return nil
}

// runsHeld records, per account whose partition snapshot s holds, the run of the newest
// billsync commit at or before s that replaced it, keeping the newest over tables.
func runsHeld(meta table.Metadata, s *table.Snapshot, runs map[string]int64) {
	seen := map[string]bool{}
	for cur := s; cur != nil; {
		if a := cur.Summary; a != nil {
			if acct := a.Properties[PropAccount]; acct != "" && !seen[acct] {
				seen[acct] = true
				var run int64
				fmt.Sscan(a.Properties[PropRun], &run)
				runs[acct] = max(runs[acct], run)
			}
		}
		if cur.ParentSnapshotID == nil {
			break
		}
		cur = meta.SnapshotByID(*cur.ParentSnapshotID)
	}
}

// loadTable inserts the rows of account ("" = all) in snapshot s of tbl into the build's
// table of the same name: the data files iceberg-go plans for the snapshot (only the
// account's partition's), read by DuckDB.
func (l *Lake) loadTable(ctx context.Context, db *sql.DB, tbl *table.Table, s *table.Snapshot, account, dir string, tr *TableRead) error {
	opts := []table.ScanOption{table.WithSnapshotID(s.SnapshotID)}
	if account != "" {
		opts = append(opts, table.WithRowFilter(iceberg.EqualTo(iceberg.Reference("account"), account)))
	}
	tasks, err := tbl.Scan(opts...).PlanFiles(ctx)
	if err != nil {
		return fmt.Errorf("plan: %w", err)
	}
	if len(tasks) == 0 {
		return nil
	}
	paths, err := localFiles(ctx, tbl, tasks, dir)
	if err != nil {
		return err
	}
	tr.Files = len(paths)
	var list []string
	for _, p := range paths {
		list = append(list, duckfile.QuoteLiteral(p))
	}
	files := "[" + strings.Join(list, ", ") + "]"
	have, err := columnNames(ctx, db, fmt.Sprintf(readSQL.Get("parquet_columns"), files))
	if err != nil {
		return fmt.Errorf("the data files' columns: %w", err)
	}
	want, err := columnNames(ctx, db, readSQL.Get("warehouse_columns"), tr.Table)
	if err != nil {
		return err
	}
	// The warehouse's columns the lake holds, from the files that have them (null in older
	// files); a column the lake lacks (raw_hash, one declared after the snapshot) stays null,
	// and one the lake holds that this billsync does not declare is not read.
	var into, sel []string
	for _, c := range Columns(tr.Table) {
		if !slices.Contains(want, c) {
			continue
		}
		into = append(into, quote(c))
		if slices.Contains(have, c) {
			sel = append(sel, quote(c))
		} else {
			sel = append(sel, "NULL")
		}
	}
	q := fmt.Sprintf(`INSERT INTO %s (%s) SELECT %s FROM read_parquet(%s, union_by_name = true)`,
		quote(tr.Table), strings.Join(into, ", "), strings.Join(sel, ", "), files)
	var args []any
	if account != "" {
		q += ` WHERE account = $1` // the partition is the account's; the filter says so again
		args = append(args, account)
	}
	res, err := db.ExecContext(ctx, q, args...)
	os.RemoveAll(dir) // a remote lake's copies: one table's at a time on disk
	if err != nil {
		return fmt.Errorf("load: %w", err)
	}
	tr.Rows, err = res.RowsAffected()
	return err
}

// localFiles are the tasks' data files as paths DuckDB reads: a file:// lake's in place, any
// other's copied under dir through the lake's own storage (this DuckDB has no S3 reader). A
// delete file is refused: billsync writes none, and a reader of data files alone would show
// rows another writer deleted.
func localFiles(ctx context.Context, tbl *table.Table, tasks []table.FileScanTask, dir string) ([]string, error) {
	var out []string
	var fsys iceio.IO
	for i, task := range tasks {
		if n := len(task.DeleteFiles) + len(task.EqualityDeleteFiles) + len(task.DeletionVectorFiles); n > 0 {
			return nil, fmt.Errorf("data file %s has %d delete files, which this reader does not apply (billsync writes none: another engine changed the table); read it with an engine that applies them",
				task.File.FilePath(), n)
		}
		p := task.File.FilePath()
		if u, err := url.Parse(p); err == nil && u.Scheme == "file" {
			out = append(out, u.Path)
			continue
		}
		if fsys == nil {
			var err error
			if fsys, err = tbl.FS(ctx); err != nil {
				return nil, err
			}
		}
		id := tbl.Identifier()
		local := filepath.Join(dir, fmt.Sprintf("%s-%d.parquet", id[len(id)-1], i))
		if err := copyOut(fsys, p, local); err != nil {
			return nil, err
		}
		out = append(out, local)
	}
	return out, nil
}

// copyOut copies the lake's file p to local, streaming.
func copyOut(fsys iceio.IO, p, local string) error {
	in, err := fsys.Open(p)
	if err != nil {
		return fmt.Errorf("open %s: %w", p, err)
	}
	defer in.Close()
	if err := os.MkdirAll(filepath.Dir(local), 0o700); err != nil {
		return err
	}
	out, err := os.Create(local)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return fmt.Errorf("copy %s: %w", p, err)
	}
	return out.Close()
}

// columnNames are the first column of q's rows.
func columnNames(ctx context.Context, db *sql.DB, q string, args ...any) ([]string, error) {
	rows, err := db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

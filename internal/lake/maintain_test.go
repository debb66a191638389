package lake_test

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/billsync/billsync/internal/lake"
)

// TestMaintenanceKeepsFilesFew: fifty small nightly commits of one table, a partition another
// writer left in five pieces and a killed commit's files, then maintenance as the daemon runs
// it forty days later: the month end is tagged, the snapshots older than the kept 35 days
// expire with the files only they held, the fragments are one file again, the killed commit's
// files are gone; each account partition holds at most one data file per table and the lake
// still equals the DuckDB file row for row, at its current snapshot and at the month-end tag.
func TestMaintenanceKeepsFilesFew(t *testing.T) {
	ctx := context.Background()
	m := newMerchant(t, 5)
	m.sync(ctx, t, nil, nil, nil)
	dir := t.TempDir()
	lk := open(t, sqliteLake(t, dir), nil)
	if _, err := lk.Commit(ctx, m.path, []string{m.name}); err != nil {
		t.Fatal(err)
	}
	db := memDuck(t)
	if _, err := db.Exec(fmt.Sprintf(`ATTACH '%s' AS wh`, m.path)); err != nil {
		t.Fatal(err)
	}
	const nights = 50
	for i := range nights {
		// a night's small change: one customer renamed
		if _, err := db.Exec(`UPDATE wh.customers SET name = name || '.' WHERE id = (SELECT min(id) FROM wh.customers)`); err != nil {
			t.Fatal(err)
		}
		if i == nights-1 {
			db.Exec(`DETACH wh`)
		}
		res, err := lk.Commit(ctx, m.path, []string{m.name})
		if n, _ := res.Snapshots(); err != nil || n != 1 {
			t.Fatalf("night %d: %d snapshots, %v; want the customers' one", i+1, n, err)
		}
	}
	fragment(t, lk, "invoices", m.name, 5)
	restore := lake.StopBeforeCommit(func(context.Context, string, string) error { return errKilled })
	db.Exec(fmt.Sprintf(`ATTACH '%s' AS wh`, m.path))
	db.Exec(`UPDATE wh.reviews SET rating = 6 - rating`)
	db.Exec(`DETACH wh`)
	if _, err := lk.Commit(ctx, m.path, []string{m.name}); err == nil {
		t.Fatal("the killed commit succeeded")
	}
	restore()
	if _, err := lk.Commit(ctx, m.path, []string{m.name}); err != nil {
		t.Fatalf("the next commit: %v", err)
	}
	root := filepath.Join(dir, "warehouse")
	filesBefore, bytesBefore := lakeSize(t, root)
	perPartition := partitionFiles(t, root, m.name)
	if perPartition["customers"] < nights {
		t.Fatalf("customers: %d data files before maintenance, want one per night", perPartition["customers"])
	}

	later := time.Now().Add(40 * 24 * time.Hour)
	res, err := lk.Maintain(ctx, lake.MaintainOptions{Keep: 35 * 24 * time.Hour, Loc: time.UTC, OrphansAfter: time.Nanosecond,
		Now: func() time.Time { return later }})
	if err != nil {
		t.Fatal(err)
	}
	tagged, expired, compacted, orphans := res.Totals()
	files, bytes := lakeSize(t, root)
	t.Logf("maintenance: %s; %d month-end tags, %d snapshots expired, %d partitions compacted, %d orphan files removed; lake %d files, %d bytes before, %d files, %d bytes after",
		res.Took.Round(time.Millisecond), tagged, expired, compacted, orphans, filesBefore, bytesBefore, files, bytes)
	if expired < nights || compacted != 1 || orphans == 0 {
		t.Errorf("expired %d, compacted %d, orphans %d; want at least %d expired, the invoices' partition compacted, the killed commit's files removed", expired, compacted, orphans, nights)
	}
	for name, n := range partitionFiles(t, root, m.name) {
		if n > 1 {
			t.Errorf("%s: %d data files in the account's partition after maintenance, want at most 1", name, n)
		}
	}
	tables := lake.Tables()
	compare(t, lk, m, tables)

	// The month-end tag: the snapshot current at the end of this month, read back equal.
	month := time.Date(time.Now().UTC().Year(), time.Now().UTC().Month(), 1, 0, 0, 0, 0, time.UTC)
	tbl, err := lk.Catalog().LoadTable(ctx, table.Identifier{lk.Namespace(), "customers"})
	if err != nil {
		t.Fatal(err)
	}
	refs := maps.Collect(tbl.Metadata().Refs())
	ref, ok := refs[lake.MonthEndTag(month)]
	if !ok {
		t.Fatalf("no tag %s: %v", lake.MonthEndTag(month), refs)
	}
	if n := len(lakeFiles(t, lk, "customers", m.name, ref.SnapshotID, t.TempDir())); n != 1 {
		t.Errorf("the month-end snapshot has %d files of the account", n)
	}

	// Maintenance again: nothing left to do.
	res, err = lk.Maintain(ctx, lake.MaintainOptions{Keep: 35 * 24 * time.Hour, Loc: time.UTC, Now: func() time.Time { return later }})
	if tagged, expired, compacted, orphans := res.Totals(); err != nil || tagged+expired+compacted+orphans != 0 {
		t.Errorf("maintenance again: %d tagged, %d expired, %d compacted, %d orphans, %v; want nothing", tagged, expired, compacted, orphans, err)
	}
}

// partitionFiles counts the Parquet data files of the account's partition of each table on
// disk (all snapshots' and none's).
func partitionFiles(t *testing.T, root, account string) map[string]int {
	t.Helper()
	out := map[string]int{}
	filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".parquet") && strings.Contains(p, "/account="+account+"/") {
			rel, _ := filepath.Rel(root, p)
			out[strings.Split(rel, string(filepath.Separator))[1]]++
		}
		return nil
	})
	return out
}

// fragment rewrites the account's partition of the table as another writer might: its rows in
// n small files (an overwrite with the first slice, appends of the others).
func fragment(t *testing.T, lk *lake.Lake, name, account string, n int) {
	t.Helper()
	ctx := context.Background()
	id := table.Identifier{lk.Namespace(), name}
	tbl, err := lk.Catalog().LoadTable(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	filter := iceberg.EqualTo(iceberg.Reference("account"), account)
	rows, err := tbl.Scan(table.WithRowFilter(filter)).ToArrowTable(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Release()
	tr := array.NewTableReader(rows, (rows.NumRows()+int64(n)-1)/int64(n))
	defer tr.Release()
	for i := 0; tr.Next(); i++ {
		rdr, err := array.NewRecordReader(tr.Schema(), []arrow.RecordBatch{tr.RecordBatch()})
		if err != nil {
			t.Fatal(err)
		}
		tx := tbl.NewTransaction()
		if i == 0 {
			err = tx.Overwrite(ctx, rdr, nil, table.WithOverwriteFilter(filter))
		} else {
			err = tx.Append(ctx, rdr, nil)
		}
		if err == nil {
			tbl, err = tx.Commit(ctx)
		}
		rdr.Release()
		if err != nil {
			t.Fatalf("fragment %s: %v", name, err)
		}
	}
}

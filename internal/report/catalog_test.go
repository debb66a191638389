package report

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	"github.com/billsync/billsync/internal/entity"
	"github.com/billsync/billsync/internal/warehouse"
)

// TestEveryEntityConforms runs one suite over every declared entity (internal/entity), against
// the test world: two real syncs from the simulator over HTTP into a real DuckDB file. An entity
// is declared once; this test fails until every place a table shows up takes it: the simulator
// serves it (paged: a complete stream that read records), its rows merged, the data-quality
// reports count it (entity_rows, which dq_sync_health reads) and name its deleted rows
// (dq_deleted), the Parquet export carries it, and the reports name it in both locales.
func TestEveryEntityConforms(t *testing.T) {
	w := testWorld(t)
	ctx := context.Background()
	db, err := warehouse.OpenReadOnly(ctx, w.db)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	count := func(t *testing.T, q string, args ...any) int64 {
		t.Helper()
		var n int64
		if err := db.QueryRowContext(ctx, q, args...).Scan(&n); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		return n
	}
	_, exported, err := ExportParquet(ctx, w.db, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	exportedRows := map[string]int64{}
	for _, e := range exported {
		exportedRows[e.Name] = e.Rows
	}
	// a deleted row of every table a whole list (or its child) writes, for dq_deleted
	deletedDB := filepath.Join(t.TempDir(), "billsync.duckdb")
	if err := copyFile(w.db, deletedDB); err != nil {
		t.Fatal(err)
	}
	deletable := map[string]string{} // table: the id of its row marked deleted
	for _, d := range entity.All() {
		if d.Rule != entity.FullRefresh {
			continue
		}
		for _, table := range append([]string{d.TableName()}, childTables(d)...) {
			var id string
			if err := db.QueryRowContext(ctx, "SELECT id FROM "+table+" ORDER BY id LIMIT 1").Scan(&id); err != nil {
				t.Fatalf("%s: no row to delete (the simulator sends none: a child table's come in its parent's array): %v", table, err)
			}
			deletable[table] = id
		}
	}
	var inserts []string
	for table, id := range deletable {
		inserts = append(inserts, fmt.Sprintf(`INSERT INTO record_changes VALUES ('main', '%s', '%s', '_deleted', NULL, NULL, TIMESTAMPTZ '2026-06-05 10:00:00+00', 2)`, table, id))
	}
	execDB(t, deletedDB, inserts...)
	names, rows := queryRows(t, deletedDB, "dq_deleted.sql", asOfVars, "")
	ei, ri, li := slices.Index(names, "entity"), slices.Index(names, "record_id"), slices.Index(names, "label")
	labelled := map[string]bool{}
	for _, r := range rows {
		if deletable[fmt.Sprint(r[ei])] == fmt.Sprint(r[ri]) && r[li] != nil && r[li] != "" {
			labelled[fmt.Sprint(r[ei])] = true
		}
	}

	for _, d := range entity.All() {
		t.Run(string(d.Name), func(t *testing.T) {
			table := d.TableName()
			// paged: the simulator serves it and a sync read it whole
			if n := count(t, `SELECT coalesce(sum(records), 0) FROM sync_streams WHERE entity = ? AND complete`, string(d.Name)); n == 0 {
				t.Errorf("paged: no complete stream of %s read a record (does the simulator serve %v?)", d.Name, d.Paths)
			}
			// merged: its records are in its table
			if len(d.Fields) == 0 {
				t.Fatalf("no fields")
			}
			if n := count(t, fmt.Sprintf(`SELECT count(%s) FROM %s`, d.Fields[0].Col, table)); n == 0 {
				t.Errorf("merged: %s.%s is empty", table, d.Fields[0].Col)
			}
			for _, c := range d.Derived {
				if n := count(t, `SELECT count(*) FROM `+c.Table); n == 0 {
					t.Errorf("merged: child table %s is empty", c.Table)
				}
			}
			// labelled: the reports name it in both locales
			for _, key := range append([]string{labelKey(d)}, childTables(d)...) {
				for code, l := range langs {
					if n := l.codeName(key); n == "" || n == key {
						t.Errorf("labelled: %s has no %s name", key, code)
					}
				}
			}
			if d.Rule == entity.FillDetail {
				return // its rows are its list's: counted, deleted, exported there
			}
			// counted: dq_sync_health's rows (entity_rows) are the table's
			if held, n := count(t, `SELECT coalesce(sum(rows), -1) FROM entity_rows WHERE entity = ?`, table), count(t, `SELECT count(*) FROM `+table); held != n {
				t.Errorf("counted: entity_rows says %d rows of %s, the table has %d", held, table, n)
			}
			// changed: internal/warehouse's TestEveryEntityTracksItsChanges (the simulator's two
			// syncs change only some entities)
			// exported: the Parquet export carries every row
			for _, tb := range append([]string{table}, childTables(d)...) {
				n, ok := exportedRows[tb]
				if want := count(t, `SELECT count(*) FROM `+tb); !ok || n != want {
					t.Errorf("exported: %s: %d rows (listed %v), the table has %d", tb, n, ok, want)
				}
			}
			// deleted: dq_deleted names a deleted row of it and of its child tables
			if d.Rule == entity.FullRefresh {
				for _, tb := range append([]string{table}, childTables(d)...) {
					if !labelled[tb] {
						t.Errorf("deleted: dq_deleted does not name the deleted %s row %s", tb, deletable[tb])
					}
				}
			}
		})
	}
}

func childTables(d *entity.Decl) []string {
	var ts []string
	for _, c := range d.Derived {
		ts = append(ts, c.Table)
	}
	return ts
}

// labelKey is the code a report shows for d: its table, or a detail read's own name.
func labelKey(d *entity.Decl) string {
	if d.Rule == entity.FillDetail {
		return string(d.Name)
	}
	return d.TableName()
}

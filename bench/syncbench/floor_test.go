package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/billsync/billsync/internal/entity"
	"github.com/billsync/billsync/internal/sandbox"
	"github.com/billsync/billsync/internal/warehouse"
)

// TestFloorLoadsEveryList: the floor reads and loads every list the declarations have (so a new
// list is measured without a hand entry), floor.sql has no section for a list that is gone, and
// each list's load, written by hand or generated, puts the simulator's records of it (as it
// serves them) into a real warehouse table, each row with its own raw record; where both exist
// they agree on every column the generated load fills.
func TestFloorLoadsEveryList(t *testing.T) {
	var names []string
	for _, l := range floorLists {
		names = append(names, l.entity)
	}
	for _, d := range entity.All() {
		if d.Paging == entity.Pages && !slices.Contains(names, string(d.Name)) {
			t.Errorf("the floor does not read the paged list %s", d.Name)
		}
	}
	if !slices.Contains(names, string(entity.WebhookDeliveries)) {
		t.Errorf("the floor does not read the webhook history: %v", names)
	}
	for section := range floorHandSQL {
		if !slices.Contains(names, section) {
			t.Errorf("floor.sql has a section for %s, which the list phase does not read (%v)", section, names)
		}
	}

	sb, err := sandbox.New(sandbox.Options{Seed: 42, Scale: 0.05, Now: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	dir := t.TempDir()
	b, err := warehouse.StartBuild(ctx, filepath.Join(dir, "floor.duckdb"), warehouse.BuildOptions{Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Discard()
	db := b.DB()
	for _, l := range floorLists {
		t.Run(l.entity, func(t *testing.T) {
			d, _ := entity.Get(entity.Name(l.entity))
			file := filepath.Join(dir, l.entity+".ndjson")
			n := writeNDJSON(t, sb.Dump(l.table), file)
			lit := "'" + file + "'"
			load := func(q string) []string {
				t.Helper()
				if _, err := db.ExecContext(ctx, "DELETE FROM "+l.table); err != nil {
					t.Fatal(err)
				}
				if _, err := db.ExecContext(ctx, strings.ReplaceAll(q, "__FILE__", lit)); err != nil {
					t.Fatalf("%v\n%s", err, q)
				}
				var rows, mismatched int64
				if err := db.QueryRowContext(ctx, `SELECT count(*), count(*) FILTER (WHERE id IS DISTINCT FROM json_extract_string(raw, '$.id')) FROM `+l.table).Scan(&rows, &mismatched); err != nil {
					t.Fatal(err)
				}
				if rows != n || mismatched > 0 {
					t.Errorf("%d rows of %d records, %d with another record's raw:\n%s", rows, n, mismatched, q)
				}
				return generatedColumns(t, db, d, l.table)
			}
			generated := load(floorGeneratedSQL(d))
			if hand, ok := floorHandSQL[l.entity]; ok {
				for _, diff := range rowDiffs(load(hand), generated, 3) {
					t.Errorf("floor.sql's load and the generated one differ: %s", diff)
				}
			}
		})
	}
}

// writeNDJSON writes records to path, one a line, and returns how many.
func writeNDJSON(t *testing.T, records []json.RawMessage, path string) int64 {
	t.Helper()
	if len(records) == 0 {
		t.Fatal("the simulator has no records of it")
	}
	var lines []byte
	for _, r := range records {
		b, err := json.Marshal(r) // compact: one record a line
		if err != nil {
			t.Fatal(err)
		}
		lines = append(append(lines, b...), '\n')
	}
	if err := os.WriteFile(path, lines, 0o644); err != nil {
		t.Fatal(err)
	}
	return int64(len(records))
}

// generatedColumns are the table's rows as text, ordered by id, over the columns the generated
// load fills (those with JSON names).
func generatedColumns(t *testing.T, db *sql.DB, d *entity.Decl, table string) []string {
	t.Helper()
	cols := []string{"id"}
	for _, f := range d.Fields {
		if len(f.JSON) > 0 {
			cols = append(cols, fmt.Sprintf(`'%[1]s=' || coalesce("%[1]s"::VARCHAR, 'NULL')`, f.Col))
		}
	}
	rows, err := db.Query(fmt.Sprintf("SELECT concat_ws(' | ', %s) FROM %s ORDER BY id", strings.Join(cols, ", "), table))
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// rowDiffs names the first few columns where rows a and b (generatedColumns) differ.
func rowDiffs(a, b []string, most int) []string {
	if len(a) != len(b) {
		return []string{fmt.Sprintf("%d rows against %d", len(a), len(b))}
	}
	var diffs []string
	for i := range a {
		ca, cb := strings.Split(a[i], " | "), strings.Split(b[i], " | ")
		for k := range min(len(ca), len(cb)) {
			if ca[k] != cb[k] && len(diffs) < most {
				diffs = append(diffs, fmt.Sprintf("row %s: %q against %q", ca[0], ca[k], cb[k]))
			}
		}
	}
	return diffs
}

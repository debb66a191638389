package report

import (
	"context"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/billsync/billsync/internal/config"
)

// TestSharedCallsChecked: a report shares a macro call only when every sheet calling it does so
// with the same text after the same variables; anything else is refused when the definition is
// loaded, with the files named.
func TestSharedCallsChecked(t *testing.T) {
	const pre = "-- a query\nSET VARIABLE as_of = coalesce(getvariable('as_of'), current_date);\n\n"
	call := "aging_items(getvariable('as_of'), tz := 'Asia/Jakarta')"
	yamlOf := func(shared string) string {
		return "name: r\ntitle: {id: R, en: R}\n" + shared + "sheets:\n" +
			"  - {name: A, query: a.sql}\n  - {name: B, query: b.sql}\n  - {name: C, query: c.sql}\n"
	}
	other := "SELECT 1 AS x;\n"
	for _, c := range []struct {
		name, shared, a, b string
		want               string // "" = loads; else part of the error
		sheets             int
	}{
		{"same call", "shared: [aging_items]\n", pre + "SELECT count(*) FROM " + call + " a;\n",
			pre + "SELECT * FROM " + call + " a -- each item\nORDER BY id;\n", "", 2},
		{"no sharing declared", "", pre + "SELECT * FROM " + call + ";\n", pre + "SELECT * FROM aging_items(current_date);\n", "", 0},
		{"other arguments", "shared: [aging_items]\n", pre + "SELECT * FROM " + call + ";\n",
			pre + "SELECT * FROM aging_items(getvariable('as_of'));\n", "shared calls must be the same", 0},
		{"other variables", "shared: [aging_items]\n", pre + "SELECT * FROM " + call + ";\n",
			pre + "SET VARIABLE bucket_1 = 15;\nSELECT * FROM " + call + ";\n", "sets other variables", 0},
		{"one sheet", "shared: [aging_items]\n", pre + "SELECT * FROM " + call + ";\n", other, "sharing needs two", 0},
		{"called twice", "shared: [aging_items]\n", pre + "SELECT * FROM " + call + " UNION ALL SELECT * FROM " + call + ";\n",
			pre + "SELECT * FROM " + call + ";\n", "calls it 2 times", 0},
		{"statement after", "shared: [aging_items]\n", pre + "SELECT * FROM " + call + ";\nSELECT 2;\n",
			pre + "SELECT * FROM " + call + ";\n", "more than one statement", 0},
		{"statement before", "shared: [aging_items]\n", pre + "CREATE TEMP TABLE t AS SELECT 1;\nSELECT * FROM " + call + ";\n",
			pre + "SELECT * FROM " + call + ";\n", "more than one statement", 0},
		// A semicolon in a string literal ends no statement.
		{"semicolon in a string", "shared: [aging_items]\n", pre + "SELECT concat_ws('; ', id, name) FROM " + call + ";\n",
			pre + "SELECT * FROM " + call + ";\n", "", 2},
		// Nor does a call in a comment count.
		{"call in a comment", "shared: [aging_items]\n", pre + "-- reads " + call + " once\nSELECT * FROM " + call + ";\n",
			pre + "SELECT * FROM " + call + "; -- " + call + "\n", "", 2},
		{"not a name", "shared: [\"aging_items(x)\"]\n", other, other, "not a macro name", 0},
		// A name that ends in the macro's is another macro: not a call of it.
		{"longer name", "shared: [aging_items]\n", pre + "SELECT * FROM " + call + ";\n",
			pre + "SELECT * FROM my_aging_items(1);\n", "sharing needs two", 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			sqls := fstest.MapFS{"a.sql": {Data: []byte(c.a)}, "b.sql": {Data: []byte(c.b)}, "c.sql": {Data: []byte(other)}}
			d, err := parseDefinition([]byte(yamlOf(c.shared)), sqls)
			if c.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				if got := len(d.shared); got != min(1, c.sheets) {
					t.Fatalf("%d shared calls", got)
				}
				if c.sheets > 0 && (d.shared[0].call != call || len(d.shared[0].sheets) != c.sheets) {
					t.Errorf("shared call %q by %v, want %q by %d sheets", d.shared[0].call, d.shared[0].sheets, call, c.sheets)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want one saying %q", err, c.want)
			}
		})
	}
}

// TestSharedResultRead: the credit report makes each shared call once, each
// sheet reads the stored rows in its place, and a call's table is dropped once every sheet sharing
// it has read it.
func TestSharedResultRead(t *testing.T) {
	w := testWorld(t)
	ctx := context.Background()
	type call struct {
		macro  string
		sheets []string
	}
	for _, c := range []struct {
		report string
		calls  []call
	}{
		{"credit", []call{
			{"credit_balances", []string{"credit_by_product.sql", "credit_balances.sql", "credit_reconciliation.sql"}},
			{"credit_freshness", []string{"credit_freshness_summary.sql", "credit_freshness.sql"}},
		}},
	} {
		t.Run(c.report, func(t *testing.T) {
			defs, err := selectReports([]string{c.report})
			if err != nil {
				t.Fatal(err)
			}
			d := defs[0]
			if len(d.shared) != len(c.calls) {
				t.Fatalf("report %s shares %d calls, want %d", c.report, len(d.shared), len(c.calls))
			}
			for i, cl := range c.calls {
				if d.shared[i].macro != cl.macro || !slices.Equal(d.shared[i].sheets, cl.sheets) {
					t.Fatalf("report %s shares %s by %v, want %s by %v", c.report, d.shared[i].macro, d.shared[i].sheets, cl.macro, cl.sheets)
				}
			}
			s, err := Options{Report: config.Report{ReportsOut: t.TempDir()}, DB: w.db, Formats: []string{"csv"}, AsOf: testAsOf, Log: quiet}.resolve()
			if err != nil {
				t.Fatal(err)
			}
			db, err := openWarehouse(ctx, s.DB)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			if err := attachScratch(ctx, db); err != nil {
				t.Fatal(err)
			}
			if s.mem, err = newNativeMemory(ctx, db, quiet); err != nil {
				t.Fatal(err)
			}
			r := &reportRun{d: d, sheets: make([]sheetDone, len(d.Sheets)), left: len(d.Sheets)}
			if err := r.prepare(ctx, db, s); err != nil {
				t.Fatal(err)
			}
			if err := r.makeShared(ctx, db, s); err != nil {
				t.Fatal(err)
			}
			for _, sh := range r.shared {
				var n int
				if err := db.QueryRowContext(ctx, "SELECT count(*) FROM "+sh.table).Scan(&n); err != nil || n == 0 {
					t.Fatalf("shared table %s: %d rows, %v; the world has rows for it", sh.table, n, err)
				}
				// Emptied, the sheets must come out empty: they read the table, not the macro.
				if _, err := db.ExecContext(ctx, "DELETE FROM "+sh.table); err != nil {
					t.Fatal(err)
				}
			}
			for ci, cl := range c.calls {
				table := r.shared[ci].table
				for i, q := range cl.sheets {
					sh := &d.Sheets[slices.IndexFunc(d.Sheets, func(s Sheet) bool { return s.Query == q })]
					text, err := r.sheetSQL(sh.Query)
					if err != nil {
						t.Fatal(err)
					}
					if strings.Contains(stripComments(text), cl.macro+"(") {
						t.Errorf("%s still calls %s:\n%s", sh.Query, cl.macro, text)
					}
					done, err := r.runSheet(ctx, db, s, sh)
					if err != nil {
						t.Fatal(err)
					}
					done.cs.abort()
					if done.out.rows != 0 {
						t.Errorf("%s: %d rows from an emptied shared table", sh.Query, done.out.rows)
					}
					var n int
					if err := db.QueryRowContext(ctx, "SELECT count(*) FROM duckdb_tables() WHERE database_name || '.' || schema_name || '.' || table_name = ?",
						table).Scan(&n); err != nil {
						t.Fatal(err)
					}
					if last := i == len(cl.sheets)-1; last != (n == 0) {
						t.Errorf("after %s (last of %s: %v): its shared table exists: %v", sh.Query, cl.macro, last, n > 0)
					}
				}
			}
		})
	}
}

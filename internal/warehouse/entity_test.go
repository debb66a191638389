package warehouse

import (
	"io/fs"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
)

// mergeFS copies the embedded merge SQL into a map so a test can break one file.
func mergeFS(t *testing.T) fstest.MapFS {
	t.Helper()
	m := fstest.MapFS{}
	err := fs.WalkDir(sqlFS, "merge", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(sqlFS, path)
		m[path] = &fstest.MapFile{Data: b}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func edit(t *testing.T, m fstest.MapFS, file, old, new string) {
	t.Helper()
	s := string(m[file].Data)
	if !strings.Contains(s, old) {
		t.Fatalf("%s does not contain %q", file, old)
	}
	m[file] = &fstest.MapFile{Data: []byte(strings.Replace(s, old, new, 1))}
}

func TestEveryEntityResolvesEveryStep(t *testing.T) {
	defs, err := loadEntityDefs(sqlFS)
	if err != nil {
		t.Fatal(err)
	}
	files, _ := fs.Glob(sqlFS, "merge/*.sql")
	if len(defs) != len(files)-len(mergeShared) || len(defs) < 10 {
		t.Fatalf("%d entities loaded from %d merge files", len(defs), len(files))
	}
	for e, d := range defs {
		for _, step := range d.steps() {
			if d.optOut[step] {
				continue
			}
			if strings.TrimSpace(stripComments(d.sql[step])) == "" {
				t.Errorf("%s: step %s resolved to no statement", e, step)
			}
		}
	}
}

// A renamed, dropped or emptied section must fail the load: before the contract, each of these
// left every test green while a table's change history or derived rows stopped being written.
func TestMergeSQLContractViolationsFailTheLoad(t *testing.T) {
	cases := []struct {
		name, file, old, new, want string
	}{
		{"renamed entity section", "merge/unpaid_transactions.sql", "-- name: changes", "-- name: change",
			`merge/unpaid_transactions.sql: unknown section(s) change`},
		{"dropped entity section", "merge/reviews.sql", "-- name: changes", "-- removed",
			`reviews: step "changes" has no section`},
		{"renamed common section", "merge/common.sql", "-- name: seen_in_run", "-- name: seen_in_runs",
			`merge/common.sql: unknown section(s) seen_in_runs`},
		{"dropped common section", "merge/common.sql", "-- name: deleted", "-- name: lifecycle_deleted",
			`unknown section(s) lifecycle_deleted`},
		{"empty section without opt-out", "merge/product_details.sql",
			"-- opt-out: owner and quantity changes are not tracked in record_changes", "",
			`product_details: section "changes" is empty; write ` + "`-- opt-out: <why>`"},
		{"renamed derived section", "merge/derived.sql", "-- name: invoice_transactions_first", "-- name: invoice_transaction_first",
			`merge/derived.sql: unknown section(s) invoice_transaction_first`},
		{"derived temp table renamed", "merge/derived.sql", "TEMP TABLE incoming_variants AS", "TEMP TABLE incoming_variant AS",
			`section product_variants_incoming does not create temp table incoming_variants`},
		{"unknown placeholder", "merge/common.sql", "INSERT INTO __TABLE__ BY NAME", "INSERT INTO __TABEL__ BY NAME",
			`keeps placeholder __TABEL__`},
		{"projection the direct path cannot take as a subquery", "merge/reviews.sql", "CREATE OR REPLACE TEMP TABLE projected AS",
			"CREATE TEMP TABLE projected AS", `reviews: section "project" must create the table with "CREATE OR REPLACE TEMP TABLE projected AS", once`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := mergeFS(t)
			edit(t, m, c.file, c.old, c.new)
			_, err := loadEntityDefs(m)
			if err == nil {
				t.Fatal("loaded without error")
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %q\ndoes not contain %q", err, c.want)
			}
		})
	}
}

// The registry and the migrations agree: every entity's table and derived table exists with the
// columns the merges write, and every table holding raw records is an entity's (a migration's
// table with no merge file, or a merge file with no table, fails here).
func TestEveryEntityHasItsTable(t *testing.T) {
	b := startBuild(t, newPath(t))
	rows, err := b.DB().Query(`SELECT table_name, list(column_name) FROM duckdb_columns()
		WHERE database_name = current_database() AND schema_name = 'main' GROUP BY table_name`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	columns := map[string][]any{}
	for rows.Next() {
		var name string
		var cols []any
		if err := rows.Scan(&name, &cols); err != nil {
			t.Fatal(err)
		}
		columns[name] = cols
	}
	data := DataTables()
	for _, table := range data {
		cols, ok := columns[table]
		if !ok {
			t.Errorf("table %s: no migration creates it", table)
			continue
		}
		for _, c := range []string{"account", "id", "raw", "first_seen_run", "last_seen_run", "deleted_upstream_at"} {
			if !slices.Contains(cols, any(c)) {
				t.Errorf("table %s has no column %s", table, c)
			}
		}
	}
	for table, cols := range columns {
		if slices.Contains(cols, any("raw")) && !slices.Contains(data, table) {
			t.Errorf("table %s holds raw records but no entity fills it (no merge/<entity>.sql)", table)
		}
	}
	if got := strings.Join(data, ","); got != "credit_ledger,customers,invoices,invoice_transactions,payment_requests,products,product_variants,reviews,unpaid_transactions,webhook_deliveries" {
		t.Errorf("data tables %s", got)
	}
}

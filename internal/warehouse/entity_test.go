package warehouse

import (
	"database/sql"
	"io/fs"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/billsync/billsync/internal/entity"
	duckdb "github.com/duckdb/duckdb-go/v2"
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
	hand := 0
	for _, d := range entity.All() {
		if len(d.SQL) > 0 {
			hand++
		}
	}
	if len(defs) != len(entity.All()) || len(defs) < 10 || hand != len(files)-len(mergeShared) {
		t.Fatalf("%d entities loaded from %d declarations, %d merge files for %d declaring SQL", len(defs), len(entity.All()), len(files)-len(mergeShared), hand)
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
		{"renamed entity section", "merge/payment_request_details.sql", "-- name: changes", "-- name: change",
			`merge/payment_request_details.sql: unknown section(s) change`},
		{"dropped entity section", "merge/product_details.sql", "-- name: changes", "-- removed",
			`product_details: step "changes" has no section`},
		{"section the declaration does not name", "merge/products.sql", "-- name: project", "-- name: changes\n-- opt-out: x\n\n-- name: project",
			`products: section "changes" of merge/products.sql is not in the declaration's SQL`},
		{"renamed common section", "merge/common.sql", "-- name: seen_in_run", "-- name: seen_in_runs",
			`merge/common.sql: unknown section(s) seen_in_runs`},
		{"dropped common section", "merge/common.sql", "-- name: deleted", "-- name: lifecycle_deleted",
			`unknown section(s) lifecycle_deleted`},
		{"empty section without opt-out", "merge/product_details.sql",
			"-- opt-out: owner and quantity changes are not tracked in record_changes", "",
			`product_details: section "changes" is empty; write ` + "`-- opt-out: <why>`"},
		{"hand projection without its child's array", "merge/product_details.sql", "variants AS x_product_variants,", "variants AS x_variants,",
			`product_details: section "project" is written by hand, so it must give child table product_variants its array ("variants" in the record) as column x_product_variants`},
		{"unknown placeholder", "merge/common.sql", "INSERT INTO __TABLE__ BY NAME", "INSERT INTO __TABEL__ BY NAME",
			`keeps placeholder __TABEL__`},
		{"projection the direct path cannot take as a subquery", "merge/credit_ledger.sql", "CREATE OR REPLACE TEMP TABLE projected AS",
			"CREATE TEMP TABLE projected AS", `credit_ledger: section "project" must create the table with "CREATE OR REPLACE TEMP TABLE projected AS", once`},
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
// table no entity declares, or a declared entity with no table, fails here).
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
			t.Errorf("table %s holds raw records but no entity fills it (no declaration in internal/entity)", table)
		}
	}
	// the migrated ones: an entity no migration creates has its table from its declaration
	var migrated []string
	for _, table := range data {
		if migratedTables[table] {
			migrated = append(migrated, table)
		}
	}
	if got := strings.Join(migrated, ","); got != "credit_ledger,customers,invoices,invoice_transactions,payment_requests,products,product_variants,reviews,unpaid_transactions,webhook_deliveries" {
		t.Errorf("data tables %s", got)
	}
}

// withDecl returns the declarations with n's replaced by what change makes of a copy.
func withDecl(t *testing.T, n entity.Name, change func(*entity.Decl)) []*entity.Decl {
	t.Helper()
	var out []*entity.Decl
	found := false
	for _, d := range entity.All() {
		if d.Name == n {
			c := *d
			change(&c)
			d, found = &c, true
		}
		out = append(out, d)
	}
	if !found {
		t.Fatalf("no entity %s", n)
	}
	return out
}

// A declaration and the merge files must agree, and a declaration the generator cannot serve
// fails the load, never a sync.
func TestDeclarationContractViolationsFailTheLoad(t *testing.T) {
	cases := []struct {
		name  string
		decls []*entity.Decl
		file  string // added to merge/
		want  string
	}{
		{"merge file no entity declares", entity.All(), "merge/refunds.sql",
			`merge/refunds.sql: no entity declares hand-written SQL of that name`},
		{"merge file of an entity whose SQL is generated", entity.All(), "merge/customers.sql",
			`merge/customers.sql: no entity declares hand-written SQL`},
		{"declared SQL without its file", withDecl(t, entity.Reviews, func(d *entity.Decl) { d.SQL = []string{"project"} }), "",
			`reviews: its declaration names hand-written SQL (project): open merge/reviews.sql`},
		{"field the generated projection cannot fill", withDecl(t, entity.Customers, func(d *entity.Decl) {
			d.Fields = append(slices.Clone(d.Fields), entity.Field{Col: "score", Type: entity.Number})
		}), "", `customers: field score has no JSON name and no hand-written project section computes it`},
		{"tracked change of no field", withDecl(t, entity.Reviews, func(d *entity.Decl) { d.Changes = []string{"status", "stars"} }), "",
			`reviews: change-tracked column "stars" is no field`},
		{"column every table has", withDecl(t, entity.Reviews, func(d *entity.Decl) {
			d.Fields = append(slices.Clone(d.Fields), entity.Field{Col: "raw", Type: entity.JSON, JSON: []string{"raw"}})
		}), "", `reviews: column "raw" is taken`},
		{"paged list without paths", withDecl(t, entity.Reviews, func(d *entity.Decl) { d.Paths = nil }), "",
			`reviews: a paged list needs its paths`},
		{"child column the generated SQL cannot fill", withDecl(t, entity.Invoices, func(d *entity.Decl) {
			c := d.Derived[0]
			c.Fields = append(slices.Clone(c.Fields), entity.Field{Col: "fee", Type: entity.Int})
			d.Derived = []entity.Child{c}
		}), "", `invoices: child table "invoice_transactions": column fee has no JSON name`},
		{"child without its array", withDecl(t, entity.Invoices, func(d *entity.Decl) {
			c := d.Derived[0]
			c.Array = ""
			d.Derived = []entity.Child{c}
		}), "", `invoices: child table "invoice_transactions": Array names the field of the parent's record holding its elements`},
		{"child's tracked change of no field", withDecl(t, entity.Invoices, func(d *entity.Decl) {
			c := d.Derived[0]
			c.Changes = []string{"state"}
			d.Derived = []entity.Child{c}
		}), "", `invoices: child table "invoice_transactions": change-tracked column "state" is no field`},
		{"child element validated", withDecl(t, entity.Invoices, func(d *entity.Decl) {
			c := d.Derived[0]
			c.Fields = []entity.Field{{Col: "status", Type: entity.Text, JSON: []string{"status"}, Required: true}}
			d.Derived = []entity.Child{c}
		}), "", `invoices: child table "invoice_transactions": column status is Required or Future, but a child's elements are not validated`},
		{"child declared twice differently", withDecl(t, entity.ProductDetails, func(d *entity.Decl) {
			c := d.Derived[0]
			c.ParentKey = "parent_id"
			d.Derived = []entity.Child{c}
		}), "", `product_details: child table "product_variants" is declared differently by another entity`},
		{"paged list read incrementally", withDecl(t, entity.Reviews, func(d *entity.Decl) { d.Rule = entity.Incremental }), "",
			`reviews: a paged list is read whole`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := mergeFS(t)
			if c.file != "" {
				m[c.file] = &fstest.MapFile{Data: []byte("-- name: project\nSELECT 1;\n")}
			}
			_, err := loadDeclared(m, c.decls)
			if err == nil {
				t.Fatal("loaded without error")
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %q\ndoes not contain %q", err, c.want)
			}
		})
	}
}

// The DDL each declaration implies is the table its migrations made: created in an empty
// database, every declared table has the migrated table's columns, in order, with its types.
// So a declaration cannot drift from the schema, and a new entity's table (created from its
// declaration at migrate time) has the shape every merge expects.
func TestDeclaredDDLMatchesTheMigrations(t *testing.T) {
	b := startBuild(t, newPath(t))
	fresh := openMemory(t)
	ddl := tableDDL(entity.All())
	if len(ddl) != len(DataTables()) {
		t.Errorf("DDL for %d tables, %d data tables", len(ddl), len(DataTables()))
	}
	const cols = `SELECT string_agg(column_name || ' ' || data_type, ', ' ORDER BY column_index) FROM duckdb_columns()
		WHERE database_name = current_database() AND schema_name = 'main' AND table_name = ?`
	for _, table := range DataTables() {
		if _, err := fresh.Exec(ddl[table]); err != nil {
			t.Fatalf("%s: %v\n%s", table, err, ddl[table])
		}
		got, want := queryString(t, fresh, cols, table), queryString(t, b.DB(), cols, table)
		if got != want || want == "" {
			t.Errorf("table %s\ndeclared %s\nmigrated %s", table, got, want)
		}
	}
}

// openMemory opens an empty in-memory DuckDB.
func openMemory(t *testing.T) *sql.DB {
	t.Helper()
	conn, err := duckdb.NewConnector("", nil)
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(conn)
	t.Cleanup(func() { db.Close() })
	return db
}

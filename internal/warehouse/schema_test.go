package warehouse

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// schemaSQL lists what a reader of the warehouse sees: every table and view with its columns
// and types, every macro with its parameters (defaults are in macros.sql). Bodies are left out:
// they live in migrations/ and macros.sql, which review shows anyway. Each line comes with the
// name of the object it belongs to.
const schemaSQL = `
WITH cols AS (
    SELECT CASE WHEN t.table_name IS NOT NULL THEN 'table' ELSE 'view' END AS kind,
           c.table_name AS name, c.column_index AS i, c.column_name || ' ' || c.data_type AS line
    FROM duckdb_columns() c
    LEFT JOIN duckdb_tables() t ON t.database_name = c.database_name AND t.schema_name = c.schema_name AND t.table_name = c.table_name
    WHERE c.database_name = current_database() AND c.schema_name = 'main' AND NOT c.internal
)
SELECT name, line FROM (
    SELECT DISTINCT kind, name, 0 AS i, kind || ' ' || name AS line FROM cols
    UNION ALL
    SELECT kind, name, i, '    ' || line FROM cols
    UNION ALL
    SELECT CASE f.function_type WHEN 'table_macro' THEN 'table macro' ELSE 'macro' END, f.function_name, 0,
           CASE f.function_type WHEN 'table_macro' THEN 'table macro ' ELSE 'macro ' END ||
           f.function_name || '(' || array_to_string(f.parameters, ', ') || ')'
    FROM duckdb_functions() f
    WHERE f.database_name = current_database() AND f.schema_name = 'main' AND NOT f.internal
      AND f.function_type IN ('macro', 'table_macro')
)
ORDER BY kind, name, i`

// TestSchemaSnapshot: a freshly migrated warehouse has exactly the schema of
// testdata/schema.txt, so a change to tables, columns, types, views or macros shows in review
// as a change of that file (-update rewrites it). The tables of entities no migration creates
// are left out: their declaration is their schema (TestDeclaredDDLMatchesTheMigrations), and
// their merge golden shows every column.
func TestSchemaSnapshot(t *testing.T) {
	b := startBuild(t, newPath(t))
	rows, err := b.DB().QueryContext(context.Background(), schemaSQL)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var got strings.Builder
	declared := declaredOnlyTables()
	for rows.Next() {
		var name, line string
		if err := rows.Scan(&name, &line); err != nil {
			t.Fatal(err)
		}
		if !slices.Contains(declared, name) {
			got.WriteString(line + "\n")
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("testdata", "schema.txt")
	if *update {
		if err := os.WriteFile(path, []byte(got.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if got.String() != string(want) {
		g, w := strings.Split(got.String(), "\n"), strings.Split(string(want), "\n")
		for i := range max(len(g), len(w)) {
			var a, b string
			if i < len(g) {
				a = g[i]
			}
			if i < len(w) {
				b = w[i]
			}
			if a != b {
				t.Fatalf("the migrated schema differs from %s (go test -run TestSchemaSnapshot -update rewrites it) at line %d:\n got  %s\n want %s", path, i+1, a, b)
			}
		}
	}
}

// TestMacrosFileIsIdempotent: macros.sql only creates or replaces macros and views (so applying
// it at every open is safe and a reader can apply it as temporary objects), and applying it
// again to a migrated warehouse changes nothing.
func TestMacrosFileIsIdempotent(t *testing.T) {
	comment := regexp.MustCompile(`(?m)^\s*--.*$`)
	for _, s := range regexp.MustCompile(`;\s*\n`).Split(macrosSQL, -1) {
		s = strings.TrimSpace(comment.ReplaceAllString(s, ""))
		if s != "" && !createRe.MatchString(s) {
			t.Errorf("macros.sql: a statement starts %.60q; want CREATE OR REPLACE MACRO or VIEW only", s)
		}
	}
	if n := strings.Count(temporaryMacros, "CREATE OR REPLACE TEMP "); n != len(createRe.FindAllString(macrosSQL, -1)) || n < 10 {
		t.Errorf("%d statements made temporary", n)
	}
	ctx := context.Background()
	b := startBuild(t, newPath(t))
	before := queryString(t, b.DB(), `SELECT string_agg(function_name || coalesce(macro_definition, ''), ';' ORDER BY function_name, macro_definition) FROM duckdb_functions() WHERE NOT internal AND schema_name = 'main' AND database_name = current_database()`)
	if err := migrate(ctx, b.DB()); err != nil {
		t.Fatal(err)
	}
	after := queryString(t, b.DB(), `SELECT string_agg(function_name || coalesce(macro_definition, ''), ';' ORDER BY function_name, macro_definition) FROM duckdb_functions() WHERE NOT internal AND schema_name = 'main' AND database_name = current_database()`)
	if before != after || !strings.Contains(after, "bs_ts") {
		t.Errorf("macros after a second migrate differ (or none):\nbefore %.200s\nafter  %.200s", before, after)
	}
	if v := queryString(t, b.DB(), `SELECT billsync_macros_version()`); v != MacrosVersion {
		t.Errorf("version %s, want %s", v, MacrosVersion)
	}
}

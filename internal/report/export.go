package report

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/billsync/billsync/internal/duckfile"
	"github.com/billsync/billsync/internal/warehouse"
)

// AnalystTables are the tables an export carries: the data and the run history. Sync
// bookkeeping (cursors, streams, credit fetch state, migrations) stays in the warehouse.
var AnalystTables = append(warehouse.DataTables(), "record_changes", "sync_runs")

// Exported is one table of an export: Path is its directory (or file) below the export, empty
// when the table had no rows and nothing was written.
type Exported struct {
	Name string
	Rows int64
	Path string
}

// ExportParquet writes the analyst tables of the warehouse as zstd Parquet under
// outDir/parquet/<table>/, Hive-partitioned by account (record_changes by
// account and entity), so a distributed engine can read the same data. The
// export is built beside the old one and swapped in when complete. An empty
// table is listed with no path: there is nothing to partition.
func ExportParquet(ctx context.Context, dbPath, outDir string) (string, []Exported, error) {
	db, err := warehouse.OpenReadOnly(ctx, dbPath)
	if err != nil {
		return "", nil, err
	}
	defer db.Close()
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		return "", nil, fmt.Errorf("output directory: %w", err)
	}
	final := filepath.Join(outDir, "parquet")
	work, err := os.MkdirTemp(outDir, ".parquet-*.tmp")
	if err != nil {
		return "", nil, fmt.Errorf("export directory: %w", err)
	}
	defer os.RemoveAll(work)
	// the export's COPY writes only into its work folder
	if err := duckfile.Confine(ctx, db, duckfile.Confinement{Dirs: []string{work}}); err != nil {
		return "", nil, err
	}
	tables, err := exportTables(ctx, db)
	if err != nil {
		return "", nil, err
	}
	var done []Exported
	for _, t := range tables {
		var n int64
		// The name comes from the catalog and AnalystTables, quoted as an identifier.
		if err := db.QueryRowContext(ctx, "SELECT count(*) FROM "+duckfile.QuoteIdent(t.name)).Scan(&n); err != nil {
			return "", nil, fmt.Errorf("export %s: %w", t.name, err)
		}
		e := Exported{Name: t.name, Rows: n}
		if n > 0 {
			if err := exportTable(ctx, db, t, filepath.Join(work, t.name)); err != nil {
				return "", nil, err
			}
			e.Path = filepath.Join(final, t.name)
			if len(t.partition) == 0 {
				e.Path = filepath.Join(e.Path, "data.parquet")
			}
		}
		done = append(done, e)
	}
	if err := os.Chmod(work, 0o755); err != nil {
		return "", nil, err
	}
	old := final + ".old"
	os.RemoveAll(old)
	if err := os.Rename(final, old); err != nil && !os.IsNotExist(err) {
		return "", nil, fmt.Errorf("replace %s: %w", final, err)
	}
	if err := os.Rename(work, final); err != nil {
		return "", nil, fmt.Errorf("replace %s: %w", final, err)
	}
	os.RemoveAll(old)
	return final, done, nil
}

type parquetTable struct {
	name      string
	columns   []string // in table order
	types     []string // DuckDB's type of each column
	partition []string
}

// parquetText says which DuckDB types the Parquet file carries as text: Parquet has no 128-bit
// integer and DuckDB would write HUGEINT and UHUGEINT as DOUBLE, which keeps 53 of their bits
// (raw_hash, a 128-bit hash, would no longer tell records apart). Decimal digits keep every bit
// and every reader can compare them or cast them back.
func parquetText(typ string) bool { return typ == "HUGEINT" || typ == "UHUGEINT" }

// exportTables lists the warehouse's analyst tables with their partition columns.
func exportTables(ctx context.Context, db *sql.DB) ([]parquetTable, error) {
	rows, err := db.QueryContext(ctx, `SELECT t.table_name, list(c.column_name ORDER BY c.column_index),
			list(c.data_type ORDER BY c.column_index)
		FROM duckdb_tables() t JOIN duckdb_columns() c USING (database_name, schema_name, table_name)
		WHERE t.database_name = current_database() AND t.schema_name = 'main' AND NOT t.temporary
		GROUP BY t.table_name ORDER BY t.table_name`)
	if err != nil {
		return nil, fmt.Errorf("list tables: %w", err)
	}
	defer rows.Close()
	var out []parquetTable
	for rows.Next() {
		var name string
		var cols, types []any
		if err := rows.Scan(&name, &cols, &types); err != nil {
			return nil, fmt.Errorf("list tables: %w", err)
		}
		if !slices.Contains(AnalystTables, name) {
			continue
		}
		t := parquetTable{name: name}
		for i := range cols {
			t.columns = append(t.columns, fmt.Sprint(cols[i]))
			t.types = append(t.types, fmt.Sprint(types[i]))
		}
		has := func(c string) bool { return slices.Contains(cols, any(c)) }
		if has("account") {
			t.partition = append(t.partition, "account")
		}
		if name == "record_changes" && has("entity") {
			t.partition = append(t.partition, "entity")
		}
		out = append(out, t)
	}
	return out, rows.Err()
}

// exportTable copies one table to dir. Table and column names come from the
// catalog, quoted as identifiers; the path is a parameter.
func exportTable(ctx context.Context, db *sql.DB, t parquetTable, dir string) error {
	opts := "FORMAT parquet, COMPRESSION zstd"
	if len(t.partition) > 0 {
		var quoted []string
		for _, p := range t.partition {
			quoted = append(quoted, duckfile.QuoteIdent(p))
		}
		opts += ", PARTITION_BY (" + strings.Join(quoted, ", ") + ")"
	}
	target := dir
	if len(t.partition) == 0 {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		target = filepath.Join(dir, "data.parquet")
	}
	q := "COPY (SELECT " + t.selectList() + " FROM " + duckfile.QuoteIdent(t.name) + ") TO ? (" + opts + ")"
	if _, err := db.ExecContext(ctx, q, target); err != nil {
		return fmt.Errorf("export %s: %w", t.name, err)
	}
	return nil
}

// selectList is every column of the table, in order, as the Parquet file carries it.
func (t parquetTable) selectList() string {
	var b strings.Builder
	for i, c := range t.columns {
		if i > 0 {
			b.WriteString(", ")
		}
		q := duckfile.QuoteIdent(c)
		if parquetText(t.types[i]) {
			b.WriteString("CAST(" + q + " AS VARCHAR) AS " + q)
			continue
		}
		b.WriteString(q)
	}
	return b.String()
}

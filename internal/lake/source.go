package lake

import (
	"context"
	"database/sql"
	"embed"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/iceberg-go"

	"github.com/billsync/billsync/internal/entity"
	"github.com/billsync/billsync/internal/sqlfile"
	"github.com/billsync/billsync/internal/warehouse"
)

//go:embed source.sql
var sqlFS embed.FS

var sourceSQL = sqlfile.MustLoad(sqlFS, "source.sql", "last_run")

// emptyDigest is the digest of a partition without rows: the lake holds none of an account
// it has no snapshot of.
const emptyDigest = "0"

// batchRows are the rows of one Arrow record batch.
const batchRows = 8192

// source is the published warehouse, opened read-only.
type source struct {
	db *sql.DB
}

func openSource(ctx context.Context, path string) (*source, error) {
	db, err := warehouse.OpenReadOnly(ctx, path)
	if err != nil {
		return nil, err
	}
	return &source{db: db}, nil
}

func (s *source) Close() error { return s.db.Close() }

// lastRun is the account's newest finished run in the file (0: none).
func (s *source) lastRun(ctx context.Context, account string) (int64, error) {
	var run sql.NullInt64
	if err := s.db.QueryRowContext(ctx, sourceSQL.Get("last_run"), account).Scan(&run); err != nil {
		return 0, fmt.Errorf("the published warehouse's last run of account %s: %w", account, err)
	}
	return run.Int64, nil
}

// lakeColumns are the columns of a table the lake holds, in order.
func lakeColumns(name string) []warehouse.Column {
	var out []warehouse.Column
	for _, c := range dataColumns()[name] {
		if !slices.Contains(skipped, c.Name) {
			out = append(out, c)
		}
	}
	return out
}

func quote(name string) string { return `"` + strings.ReplaceAll(name, `"`, `""`) + `"` }

// digest is the account's row count in the table and an order-independent hash of its rows'
// lake columns: equal digests, equal partitions (DuckDB's hash; a DuckDB upgrade that changes
// it costs one needless commit per table).
func (s *source) digest(ctx context.Context, name, account string) (int64, string, error) {
	var cols []string
	for _, c := range lakeColumns(name) {
		cols = append(cols, quote(c.Name))
	}
	// Generated from the declarations, as the warehouse's merge SQL is. The row's hash is hashed
	// again: DuckDB's hash of several values is its last value's hash XORed onto the others',
	// so XORed over rows a change of the last column in an even number of rows to the same
	// value cancelled out (four rows of a table marked deleted upstream in the same run were
	// never committed).
	q := fmt.Sprintf(`SELECT count(*), coalesce(bit_xor(hash(hash(%s))), 0)::VARCHAR FROM %s WHERE account = $1`, strings.Join(cols, ", "), sourceOf(name))
	var rows int64
	var digest string
	if err := s.db.QueryRowContext(ctx, q, account).Scan(&rows, &digest); err != nil {
		return 0, "", fmt.Errorf("digest of %s: %w", name, err)
	}
	if rows == 0 {
		digest = emptyDigest
	}
	return rows, digest, nil
}

// records reads the account's rows of the table as Arrow record batches of the lake table's
// schema sc: a column of sc the file does not have (one the declarations dropped) is null.
//
// DuckDB writes them to a Parquet file in a temporary directory and Arrow reads that back in
// batches: columnar all the way, where scanning them row by row through database/sql boxed
// every value (at scale 10 that scan and its garbage were most of a nightly commit's CPU).
// The file is removed by the returned cleanup, after the reader is consumed.
func (s *source) records(ctx context.Context, name, account string, sc *iceberg.Schema) (array.RecordReader, func(), error) {
	have := map[string]warehouse.Column{}
	for _, c := range lakeColumns(name) {
		have[c.Name] = c
	}
	var sel []string
	for _, f := range sc.Fields() {
		c, ok := have[f.Name]
		switch {
		case !ok:
			t, err := duckType(f.Type)
			if err != nil {
				return nil, nil, fmt.Errorf("column %s: %w", f.Name, err)
			}
			sel = append(sel, "CAST(NULL AS "+t+") AS "+quote(f.Name))
		case c.Type == entity.JSON:
			sel = append(sel, quote(c.Name)+"::VARCHAR AS "+quote(c.Name)) // JSON as its text
		default:
			sel = append(sel, quote(c.Name))
		}
	}
	// the table's key after account: id, or a child table's parent key and id
	var key []string
	for _, c := range lakeColumns(name)[1:] {
		key = append(key, quote(c.Name))
		if c.Name == "id" {
			break
		}
	}
	dir, err := os.MkdirTemp("", "billsync-lake-")
	if err != nil {
		return nil, nil, fmt.Errorf("read %s: %w", name, err)
	}
	cleanup := func() { os.RemoveAll(dir) }
	path := filepath.Join(dir, name+".parquet")
	// COPY takes no parameters: the account and the path as SQL literals. Uncompressed: the
	// file lives for one read; the lake's own files are zstd.
	q := fmt.Sprintf(`COPY (SELECT %s FROM %s WHERE account = %s ORDER BY %s) TO %s (FORMAT parquet, COMPRESSION uncompressed)`,
		strings.Join(sel, ", "), sourceOf(name), literal(account), strings.Join(key, ", "), literal(path))
	if _, err := s.db.ExecContext(ctx, q); err != nil {
		cleanup()
		return nil, nil, fmt.Errorf("read %s: %w", name, err)
	}
	pf, err := file.OpenParquetFile(path, false)
	if err != nil {
		cleanup()
		return nil, nil, fmt.Errorf("read %s: %w", name, err)
	}
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: batchRows}, memory.DefaultAllocator)
	if err == nil {
		var rr pqarrow.RecordReader
		if rr, err = fr.GetRecordReader(ctx, nil, nil); err == nil {
			return rr, func() { pf.Close(); cleanup() }, nil
		}
	}
	pf.Close()
	cleanup()
	return nil, nil, fmt.Errorf("read %s: %w", name, err)
}

// literal is s as a SQL string literal.
func literal(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// duckType is the DuckDB type a null column of Iceberg type t is written as.
func duckType(t iceberg.Type) (string, error) {
	switch t := t.(type) {
	case iceberg.StringType:
		return "VARCHAR", nil
	case iceberg.Int64Type:
		return "BIGINT", nil
	case iceberg.Int32Type:
		return "INTEGER", nil
	case iceberg.BooleanType:
		return "BOOLEAN", nil
	case iceberg.Float64Type:
		return "DOUBLE", nil
	case iceberg.DecimalType:
		return fmt.Sprintf("DECIMAL(%d,%d)", t.Precision(), t.Scale()), nil
	case iceberg.TimestampTzType:
		return "TIMESTAMPTZ", nil
	}
	return "", fmt.Errorf("no lake type for %s", t)
}

// icebergType is the Iceberg type of a warehouse column.
func icebergType(c warehouse.Column) (iceberg.Type, error) {
	switch c.Type {
	case entity.Text, entity.JSON:
		return iceberg.PrimitiveTypes.String, nil
	case entity.Int:
		return iceberg.PrimitiveTypes.Int64, nil
	case entity.Number:
		return iceberg.PrimitiveTypes.Float64, nil
	case entity.Decimal:
		return iceberg.DecimalTypeOf(20, 4), nil
	case entity.Time:
		return iceberg.PrimitiveTypes.TimestampTz, nil
	case typeInt32:
		return iceberg.PrimitiveTypes.Int32, nil
	case typeBool:
		return iceberg.PrimitiveTypes.Bool, nil
	}
	return nil, fmt.Errorf("column %s: no lake type for %s", c.Name, c.Type)
}

package lake

import (
	"context"
	"database/sql"
	"embed"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

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
	db      *sql.DB
	scanErr error // the last records() reader's read error, checked before its commit
}

func openSource(ctx context.Context, path string) (*source, error) {
	db, err := warehouse.OpenReadOnly(ctx, path)
	if err != nil {
		return nil, err
	}
	return &source{db: db}, nil
}

func (s *source) Close() error { return s.db.Close() }

func (s *source) err() error { return s.scanErr }

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
	// Generated from the declarations, as the warehouse's merge SQL is.
	q := fmt.Sprintf(`SELECT count(*), coalesce(bit_xor(hash(%s)), 0)::VARCHAR FROM %s WHERE account = $1`, strings.Join(cols, ", "), sourceOf(name))
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
func (s *source) records(ctx context.Context, name, account string, sc *iceberg.Schema) (array.RecordReader, error) {
	asc, err := table.SchemaToArrowSchema(sc, nil, true, false)
	if err != nil {
		return nil, err
	}
	have := map[string]warehouse.Column{}
	for _, c := range lakeColumns(name) {
		have[c.Name] = c
	}
	var sel []string
	for _, f := range sc.Fields() {
		c, ok := have[f.Name]
		switch {
		case !ok:
			sel = append(sel, "NULL")
		case c.Type == entity.JSON || c.Type == entity.Decimal:
			// JSON as its text; a decimal as text, parsed exactly (no float on the way)
			sel = append(sel, quote(c.Name)+"::VARCHAR")
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
	order := strings.Join(key, ", ")
	q := fmt.Sprintf(`SELECT %s FROM %s WHERE account = $1 ORDER BY %s`, strings.Join(sel, ", "), sourceOf(name), order)
	rows, err := s.db.QueryContext(ctx, q, account)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	defer rows.Close()
	b := array.NewRecordBuilder(memory.DefaultAllocator, asc)
	defer b.Release()
	fields := sc.Fields()
	dest := make([]any, len(fields))
	vals := make([]any, len(fields))
	for i := range dest {
		dest[i] = &vals[i]
	}
	var batches []arrow.RecordBatch
	release := func() {
		for _, r := range batches {
			r.Release()
		}
	}
	n := 0
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			release()
			return nil, fmt.Errorf("read %s: %w", name, err)
		}
		for i, f := range fields {
			if err := appendValue(b.Field(i), f.Type, vals[i]); err != nil {
				release()
				return nil, fmt.Errorf("read %s, column %s: %w", name, f.Name, err)
			}
		}
		if n++; n%batchRows == 0 {
			batches = append(batches, b.NewRecordBatch())
		}
	}
	if err := rows.Err(); err != nil {
		release()
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	if n == 0 || n%batchRows != 0 {
		batches = append(batches, b.NewRecordBatch())
	}
	rdr, err := array.NewRecordReader(asc, batches)
	release() // the reader holds its own references
	return rdr, err
}

// appendValue appends one DuckDB value to the column builder of Iceberg type t.
func appendValue(b array.Builder, t iceberg.Type, v any) error {
	if v == nil {
		b.AppendNull()
		return nil
	}
	switch t := t.(type) {
	case iceberg.StringType:
		s, ok := v.(string)
		if !ok {
			return fmt.Errorf("want text, got %T", v)
		}
		b.(*array.StringBuilder).Append(s)
	case iceberg.Int64Type:
		n, ok := v.(int64)
		if !ok {
			return fmt.Errorf("want an integer, got %T", v)
		}
		b.(*array.Int64Builder).Append(n)
	case iceberg.Int32Type:
		n, ok := v.(int32)
		if !ok {
			return fmt.Errorf("want an integer, got %T", v)
		}
		b.(*array.Int32Builder).Append(n)
	case iceberg.BooleanType:
		x, ok := v.(bool)
		if !ok {
			return fmt.Errorf("want true or false, got %T", v)
		}
		b.(*array.BooleanBuilder).Append(x)
	case iceberg.Float64Type:
		x, ok := v.(float64)
		if !ok {
			return fmt.Errorf("want a number, got %T", v)
		}
		b.(*array.Float64Builder).Append(x)
	case iceberg.DecimalType:
		s, ok := v.(string)
		if !ok {
			return fmt.Errorf("want a decimal as text, got %T", v)
		}
		d, err := decimal128.FromString(s, int32(t.Precision()), int32(t.Scale()))
		if err != nil {
			return fmt.Errorf("decimal %q: %w", s, err)
		}
		b.(*array.Decimal128Builder).Append(d)
	case iceberg.TimestampTzType:
		ts, ok := v.(time.Time)
		if !ok {
			return fmt.Errorf("want a time, got %T", v)
		}
		b.(*array.TimestampBuilder).Append(arrow.Timestamp(ts.UnixMicro()))
	default:
		return fmt.Errorf("no lake type for %s", t)
	}
	return nil
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

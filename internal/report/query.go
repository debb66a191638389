package report

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/big"
	"strings"
	"time"

	"github.com/billsync/billsync/internal/jobs/journalfile"
	"github.com/billsync/billsync/internal/warehouse"
	"github.com/billsync/billsync/queries"
	"github.com/duckdb/duckdb-go/v2"
)

// kind is how a result column's values are handled when written out.
type kind int

const (
	kindText kind = iota
	kindInt
	kindFloat
	kindDecimal
	kindDate
	kindTime // an instant (TIMESTAMPTZ): shown as the wall clock of the report's zone
	kindBool
	// kindWall is a wall-clock time without a zone (TIMESTAMP): shown as it stands. It is not
	// an instant, so it is never moved into the report's zone (a query's local_time() or an
	// analyst's TIMESTAMP '2026-11-27 00:00:00' would otherwise gain seven hours).
	kindWall
)

func kindOf(dbType string) kind {
	switch t := strings.ToUpper(dbType); {
	case strings.HasPrefix(t, "DECIMAL"):
		return kindDecimal
	case strings.HasSuffix(t, "INT") || t == "BIGINT" || t == "INTEGER" || t == "HUGEINT" || t == "UHUGEINT":
		return kindInt
	case t == "DOUBLE" || t == "FLOAT" || t == "REAL":
		return kindFloat
	case t == "DATE":
		return kindDate
	case t == "TIMESTAMP" || t == "TIMESTAMP_S" || t == "TIMESTAMP_MS" || t == "TIMESTAMP_NS":
		return kindWall
	case strings.HasPrefix(t, "TIMESTAMP"):
		return kindTime
	case t == "BOOLEAN":
		return kindBool
	}
	return kindText
}

// decimal is what the driver returns for DECIMAL columns; matched by method
// set so this package needs no import of the driver.
type decimal interface {
	Float64() float64
	String() string
}

// normalize turns a scanned value into int64, float64, decimal, time.Time,
// bool, string or nil, the only types the writers handle.
func normalize(v any, k kind) any {
	switch x := v.(type) {
	case duckdb.Decimal:
		return newDecimalValue(x)
	case nil, int64, float64, string, time.Time, bool, decimal:
		return v
	case int32:
		return int64(x)
	case int16:
		return int64(x)
	case int8:
		return int64(x)
	case uint64:
		return int64(x)
	case uint32:
		return int64(x)
	case *big.Int:
		if x.IsInt64() {
			return x.Int64()
		}
		f, _ := new(big.Float).SetInt(x).Float64()
		return f
	case float32:
		return float64(x)
	case []byte:
		return string(x)
	case duckdb.Interval:
		return formatInterval(x)
	}
	return fmt.Sprint(v)
}

// decimalValue is a DECIMAL from the driver with its float64 worked out once:
// the xlsx cell, the CSV and the totals each want it, and the driver's
// Float64 divides big.Floats.
type decimalValue struct {
	duckdb.Decimal
	f float64
}

func newDecimalValue(d duckdb.Decimal) decimalValue {
	if d.Value != nil && d.Value.IsInt64() && int(d.Scale) < len(pow10) {
		// A whole number below 2^53 is exact either way: the same float64 as the driver's.
		v, p := d.Value.Int64(), pow10[d.Scale]
		if q := v / p; v%p == 0 && q <= 1<<53 && q >= -(1<<53) {
			return decimalValue{d, float64(q)}
		}
	}
	return decimalValue{d, d.Float64()}
}

func (d decimalValue) Float64() float64 { return d.f }

// rat is the exact value.
func (d decimalValue) rat(r *big.Rat) *big.Rat {
	if d.Value.IsInt64() && int(d.Scale) < len(pow10) {
		return r.SetFrac64(d.Value.Int64(), pow10[d.Scale])
	}
	return r.SetFrac(d.Value, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(d.Scale)), nil))
}

var pow10 = [...]int64{1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18}

// formatInterval writes an interval as DuckDB's own clients do: "1 month 9 days 22:58:23.451".
func formatInterval(iv duckdb.Interval) string {
	var parts []string
	unit := func(n int64, one string) {
		if n == 0 {
			return
		}
		if n == 1 || n == -1 {
			parts = append(parts, fmt.Sprintf("%d %s", n, one))
			return
		}
		parts = append(parts, fmt.Sprintf("%d %ss", n, one))
	}
	unit(int64(iv.Months)/12, "year")
	unit(int64(iv.Months)%12, "month")
	unit(int64(iv.Days), "day")
	if us := iv.Micros; us != 0 || len(parts) == 0 {
		sign := ""
		if us < 0 {
			sign, us = "-", -us
		}
		clock := fmt.Sprintf("%s%02d:%02d:%02d", sign, us/3_600_000_000, us/60_000_000%60, us/1_000_000%60)
		if frac := us % 1_000_000; frac != 0 {
			clock += strings.TrimRight(fmt.Sprintf(".%06d", frac), "0")
		}
		parts = append(parts, clock)
	}
	return strings.Join(parts, " ")
}

// result describes the columns of a running query.
type result struct {
	names []string
	kinds []kind
}

// stream runs one query file's text on conn and hands each row to fn. The
// row slice is reused between calls.
func stream(ctx context.Context, conn *sql.Conn, file string, start func(result) error, fn func([]any) error) error {
	text, err := fs.ReadFile(queries.FS, file)
	if err != nil {
		return fmt.Errorf("query %s: %w", file, err)
	}
	return streamText(ctx, conn, file, string(text), start, fn)
}

// streamText is stream with the query's text given (file names it in errors). It reads the
// driver's rows directly: database/sql's Rows would lock and convert every value once more
// (Scan into *any), and the reports read millions of values.
func streamText(ctx context.Context, conn *sql.Conn, file, text string, start func(result) error, fn func([]any) error) error {
	err := conn.Raw(func(dc any) error {
		q, ok := dc.(driver.QueryerContext)
		if !ok {
			return fmt.Errorf("the driver's connection (%T) cannot run queries", dc)
		}
		rows, err := q.QueryContext(ctx, text, nil)
		if err != nil {
			return err
		}
		defer rows.Close()
		return scanDriver(ctx, rows, start, fn)
	})
	if err != nil {
		return fmt.Errorf("query %s: %w", file, err)
	}
	return nil
}

// scanDriver is scanAll over the driver's rows. ctx is checked every few thousand rows, as
// database/sql would close the rows when it ends.
func scanDriver(ctx context.Context, rows driver.Rows, start func(result) error, fn func([]any) error) error {
	typed, ok := rows.(driver.RowsColumnTypeDatabaseTypeName)
	if !ok {
		return fmt.Errorf("the driver's rows (%T) do not name their column types", rows)
	}
	res := result{names: rows.Columns()}
	for i := range res.names {
		res.kinds = append(res.kinds, kindOf(typed.ColumnTypeDatabaseTypeName(i)))
	}
	if err := start(res); err != nil {
		return err
	}
	dv := make([]driver.Value, len(res.names))
	vals := make([]any, len(res.names))
	for n := 1; ; n++ {
		if n%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		switch err := rows.Next(dv); {
		case errors.Is(err, io.EOF):
			return nil
		case err != nil:
			return err
		}
		for i, v := range dv {
			vals[i] = normalize(v, res.kinds[i])
		}
		if err := fn(vals); err != nil {
			return err
		}
	}
}

func scanAll(rows *sql.Rows, start func(result) error, fn func([]any) error) error {
	types, err := rows.ColumnTypes()
	if err != nil {
		return err
	}
	res := result{}
	for _, t := range types {
		res.names = append(res.names, t.Name())
		res.kinds = append(res.kinds, kindOf(t.DatabaseTypeName()))
	}
	if err := start(res); err != nil {
		return err
	}
	vals := make([]any, len(types))
	ptrs := make([]any, len(types))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return err
		}
		for i, v := range vals {
			vals[i] = normalize(v, res.kinds[i])
		}
		if err := fn(vals); err != nil {
			return err
		}
	}
	return rows.Err()
}

// attachJournal attaches the journal read-only when its file exists and has
// the tables queries read. It returns what the summary sheet says about the
// journal and whether the journal can be read.
func attachJournal(ctx context.Context, db *sql.DB, path string) (journalNote, bool) {
	if path == "" {
		return journalNote{state: "jnl_not_configured"}, false
	}
	switch err := journalfile.Attach(ctx, db, path); {
	case err == nil:
		return journalNote{path: path}, true
	case errors.Is(err, fs.ErrNotExist):
		return journalNote{path: path, state: "jnl_missing"}, false
	case errors.Is(err, journalfile.ErrNoTables):
		return journalNote{path: path, state: "jnl_no_tables"}, false
	default:
		return journalNote{path: path, state: "jnl_unreadable", detail: oneLine(err)}, false
	}
}

// prepareConn clears variables a previous user of the pooled connection set,
// makes credit_balance_reports visible on conn (the journal's table, or an
// empty stand-in) and the current macros.
func prepareConn(ctx context.Context, conn *sql.Conn, journal bool) error {
	vars, err := variables(ctx, conn)
	if err != nil {
		return err
	}
	for name := range vars {
		if !nameRe.MatchString(name) {
			return fmt.Errorf("unexpected variable name %q on the connection", name)
		}
		if _, err := conn.ExecContext(ctx, "RESET VARIABLE "+name); err != nil {
			return fmt.Errorf("reset variable %s: %w", name, err)
		}
	}
	if err := journalfile.Views(ctx, conn, journal); err != nil {
		return err
	}
	// The query files call the report macros as this billsync defines them, also on a file an
	// older billsync published; an analyst's query may call the warehouse's own.
	if err := warehouse.UseCurrentMacros(ctx, conn); err != nil {
		return err
	}
	return queries.UseCurrent(ctx, conn)
}

// setVar sets a DuckDB variable from text, cast to typ by DuckDB, so a bad
// value fails with DuckDB's own message.
func setVar(ctx context.Context, conn *sql.Conn, name, typ, value string) error {
	if !nameRe.MatchString(name) {
		return fmt.Errorf("variable name %q", name)
	}
	// The name is checked above and typ comes from a fixed list; the value is a parameter.
	if _, err := conn.ExecContext(ctx, "SET VARIABLE "+name+" = CAST(? AS "+typ+")", value); err != nil {
		return fmt.Errorf("%s=%q: %w", name, value, err)
	}
	return nil
}

// variables reads the connection's variables after the queries ran, so the
// summary shows the values the SQL actually used, defaults included.
func variables(ctx context.Context, conn *sql.Conn) (map[string]string, error) {
	rows, err := conn.QueryContext(ctx, "SELECT name, value::VARCHAR FROM duckdb_variables()")
	if err != nil {
		return nil, fmt.Errorf("read variables: %w", err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var name string
		var value sql.NullString
		if err := rows.Scan(&name, &value); err != nil {
			return nil, err
		}
		out[name] = value.String
	}
	return out, rows.Err()
}

func oneLine(err error) string {
	return strings.Join(strings.Fields(err.Error()), " ")
}

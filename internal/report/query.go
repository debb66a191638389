package report

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"regexp"

	"github.com/billsync/billsync/internal/report/value"
	"github.com/billsync/billsync/queries"
)

// result describes the columns of a running query.
type result struct {
	names []string
	kinds []value.Kind
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
		res.kinds = append(res.kinds, value.KindOf(typed.ColumnTypeDatabaseTypeName(i)))
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
			vals[i] = value.Normalize(v, res.kinds[i])
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
		res.kinds = append(res.kinds, value.KindOf(t.DatabaseTypeName()))
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
			vals[i] = value.Normalize(v, res.kinds[i])
		}
		if err := fn(vals); err != nil {
			return err
		}
	}
	return rows.Err()
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

// nameRe is a variable's name, as DuckDB is given it: in SET VARIABLE statements it is not a
// parameter.
var nameRe = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)

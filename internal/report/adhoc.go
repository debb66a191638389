package report

import (
	"context"
	"database/sql"
	"encoding/csv"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	duckdb "github.com/duckdb/duckdb-go/v2"

	"github.com/billsync/billsync/internal/cellsafe"
	"github.com/billsync/billsync/internal/duckfile"
	"github.com/billsync/billsync/internal/report/csvout"
	"github.com/billsync/billsync/internal/report/value"
	"github.com/billsync/billsync/internal/warehouse"
)

// tableRowLimit bounds what the terminal table shows; csv and xlsx have no limit.
const tableRowLimit = 10000

// Query runs an analyst's SQL on the warehouse with least privilege (analyst.go): the warehouse
// and the journal read-only, files only in the folders analystFiles allows, each statement
// checked before it runs. The as_of and tz variables are set and the journal is visible as
// credit_balance_reports; the last statement's rows are the result.
// Format "csv" and "table" write to w; "xlsx" writes a workbook into
// o.ReportsOut and returns its path.
func Query(ctx context.Context, o Options, text, format string, w io.Writer) (string, error) {
	if strings.TrimSpace(text) == "" {
		return "", fmt.Errorf("empty query")
	}
	if o.ReportsOut == "" {
		o.ReportsOut = "."
	}
	s, err := o.resolve()
	if err != nil {
		return "", err
	}
	db, err := warehouse.OpenReadOnly(ctx, s.DB)
	if err != nil {
		return "", err
	}
	defer db.Close()
	s.journal, s.hasJnl = attachJournal(ctx, db, s.Journal)
	if !o.AsOf.IsZero() {
		warnings, err := asOfWarnings(ctx, db, s.asOf, s.loc, s.TZ.String(), s.Account)
		if err != nil {
			return "", err
		}
		for _, w := range warnings {
			s.Log.Warn(w.text(nil))
		}
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		return "", err
	}
	defer conn.Close()
	if err := prepareConn(ctx, conn, s.hasJnl); err != nil {
		return "", err
	}
	if _, err := setReportVars(ctx, conn, s, &Definition{}); err != nil {
		return "", err
	}
	if err := setAdhocVars(ctx, conn, o.Vars); err != nil {
		return "", err
	}
	if err := setSessionZone(ctx, conn, s.TZ.String()); err != nil {
		return "", err
	}
	rows, names, err := runAnalyst(ctx, db, conn, s, text)
	if err != nil {
		return "", err
	}
	defer rows.Close()
	a := adhocRows{rows, names}
	switch format {
	case "csv", "":
		return "", adhocCSV(a, w, s.loc)
	case "table":
		return "", adhocTable(a, w, s.loc)
	case "xlsx":
		return adhocXLSX(a, s, text)
	}
	return "", fmt.Errorf("format %q: want csv, xlsx or table", format)
}

// setSessionZone makes the analyst's session compute in the report's zone, as a DuckDB client on
// a laptop in Jakarta would: created_at::DATE, hour(), date_trunc('month', …) and current_date
// then agree with the times printed. The report queries name their zone explicitly and give the
// same rows in any session zone (TestQueryFilesAnyZone), so `-sql @queries/…` still matches the
// report.
func setSessionZone(ctx context.Context, conn *sql.Conn, tz string) error {
	if _, err := conn.ExecContext(ctx, "SET TimeZone = "+duckfile.QuoteLiteral(tz)); err != nil {
		return fmt.Errorf("time zone %s: %w", tz, err)
	}
	return nil
}

// runAnalyst confines the instance, then runs text's statements one by one, each checked before
// it runs, and returns the last one's rows.
func runAnalyst(ctx context.Context, db *sql.DB, conn *sql.Conn, s *settings, text string) (*sql.Rows, []string, error) {
	// the folder a COPY writes into, as the reports' files
	if err := os.MkdirAll(s.ReportsOut, 0o755); err != nil {
		return nil, nil, fmt.Errorf("output directory: %w", err)
	}
	files, err := newAnalystFiles(s)
	if err != nil {
		return nil, nil, fmt.Errorf("query: %w", err)
	}
	if err := files.confine(ctx, db); err != nil {
		return nil, nil, err
	}
	stmts, err := splitSQL(text)
	if err != nil {
		return nil, nil, fmt.Errorf("query: %w", err)
	}
	if len(stmts) == 0 {
		return nil, nil, fmt.Errorf("empty query")
	}
	failed := func(err error) error {
		if strings.Contains(err.Error(), "Permission Error") {
			return fmt.Errorf("query: %w (%s)", err, files.hint())
		}
		return fmt.Errorf("query: %w", err)
	}
	last := len(stmts) - 1
	var typ duckdb.StmtType
	for i, st := range stmts {
		if err := files.allowText(st.toks, i+1); err != nil {
			return nil, nil, fmt.Errorf("query: %w", err)
		}
		if typ, err = statementKind(conn, st.text); err != nil {
			return nil, nil, failed(err)
		}
		if err := files.allowKind(st.toks, typ, i+1); err != nil {
			return nil, nil, fmt.Errorf("query: %w", err)
		}
		if i == last {
			break
		}
		if _, err := conn.ExecContext(ctx, st.text); err != nil {
			return nil, nil, failed(err)
		}
	}
	run, names := stmts[last].text, []string(nil)
	if typ == duckdb.STATEMENT_TYPE_SELECT {
		run, names = asText(ctx, conn, run)
	}
	rows, err := conn.QueryContext(ctx, run)
	if err != nil {
		return nil, nil, failed(err)
	}
	return rows, names, nil
}

// adhocRows are a query's rows with the names its header shows (the names the query gave its
// columns, also where asText renamed nothing but wrapped the query).
type adhocRows struct {
	*sql.Rows
	names []string
}

// asText rewrites a query whose result holds values the driver cannot hand over exactly, so
// DuckDB writes them as text: JSON (the driver decodes it into Go maps with float64 numbers:
// 1795646446556 came out as 1.795646446556e+12), nested values (lists, structs, maps, unions),
// 128-bit integers (more digits than a float64 holds), UUIDs, blobs, bits and times of day. The
// query runs as a subquery and its columns are taken by position, so names given twice stay as
// the query wrote them. It is given one SELECT (runAnalyst); one DuckDB cannot describe runs as
// written.
func asText(ctx context.Context, conn *sql.Conn, text string) (string, []string) {
	rows, err := conn.QueryContext(ctx, "DESCRIBE "+text)
	if err != nil {
		return text, nil
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil || len(cols) < 2 {
		return text, nil
	}
	var names, list []string
	wrap := false
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rows.Next() {
		if rows.Scan(ptrs...) != nil {
			return text, nil
		}
		name, typ := fmt.Sprint(vals[0]), strings.ToUpper(fmt.Sprint(vals[1]))
		pos := "#" + strconv.Itoa(len(names)+1)
		names = append(names, name)
		if textType(typ) {
			wrap = true
			list = append(list, "CAST("+pos+" AS VARCHAR)")
			continue
		}
		list = append(list, pos)
	}
	if rows.Err() != nil || !wrap {
		return text, nil
	}
	return "SELECT " + strings.Join(list, ", ") + " FROM (" + strings.TrimRight(strings.TrimSpace(text), ";") + "\n)", names
}

// scan is scanAll with the header the query wrote.
func (a adhocRows) scan(start func(result) error, fn func([]any) error) error {
	return scanAll(a.Rows, func(r result) error {
		if len(a.names) == len(r.names) {
			r.names = a.names
		}
		return start(r)
	}, fn)
}

// textType says whether a column of this DuckDB type is printed from DuckDB's own text.
func textType(typ string) bool {
	switch {
	case typ == "JSON", typ == "HUGEINT", typ == "UHUGEINT", typ == "UUID", typ == "BLOB", typ == "BIT",
		strings.HasPrefix(typ, "TIME ") || typ == "TIME", typ == "TIMETZ":
		return true
	case strings.HasSuffix(typ, "]"), strings.HasPrefix(typ, "STRUCT"), strings.HasPrefix(typ, "MAP"),
		strings.HasPrefix(typ, "UNION"):
		return true
	}
	return false
}

func adhocCSV(rows adhocRows, w io.Writer, loc *time.Location) error {
	cw := csv.NewWriter(w)
	cw.UseCRLF = true
	var kinds []value.Kind
	var rec []string
	start := func(r result) error {
		kinds = r.kinds
		return cw.Write(r.names)
	}
	err := rows.scan(start, func(v []any) error {
		rec = rec[:0]
		for i, x := range v {
			rec = append(rec, csvout.Value(x, kinds[i], loc))
		}
		return cw.Write(rec)
	})
	cw.Flush()
	if err != nil {
		return fmt.Errorf("query: %w", err)
	}
	return cw.Error()
}

// adhocTable prints an aligned text table; numbers are right-aligned.
func adhocTable(rows adhocRows, w io.Writer, loc *time.Location) error {
	var res result
	var cells [][]string
	more := 0
	err := rows.scan(func(r result) error { res = r; return nil }, func(v []any) error {
		if len(cells) >= tableRowLimit {
			more++
			return nil
		}
		line := make([]string, len(v))
		for i, x := range v {
			// a terminal would run an escape sequence, or draw a right-to-left override
			// reordered: what is drawn as nothing is shown by its code
			line[i] = cellsafe.Visible(strings.ReplaceAll(tableValue(x, res.kinds[i], loc), "\n", " "))
		}
		cells = append(cells, line)
		return nil
	})
	if err != nil {
		return fmt.Errorf("query: %w", err)
	}
	width := make([]int, len(res.names))
	for i, n := range res.names {
		width[i] = utf8.RuneCountInString(n)
	}
	for _, line := range cells {
		for i, c := range line {
			width[i] = max(width[i], utf8.RuneCountInString(c))
		}
	}
	printLine := func(vals []string, header bool) {
		parts := make([]string, len(vals))
		for i, v := range vals {
			pad := strings.Repeat(" ", width[i]-utf8.RuneCountInString(v))
			numeric := !header && (res.kinds[i] == value.KindInt || res.kinds[i] == value.KindFloat || res.kinds[i] == value.KindDecimal)
			if numeric {
				parts[i] = pad + v
			} else {
				parts[i] = v + pad
			}
		}
		fmt.Fprintln(w, strings.TrimRight(strings.Join(parts, "  "), " "))
	}
	printLine(res.names, true)
	rule := make([]string, len(width))
	for i, n := range width {
		rule[i] = strings.Repeat("-", n)
	}
	printLine(rule, true)
	for _, line := range cells {
		printLine(line, false)
	}
	fmt.Fprintf(w, "(%d rows", len(cells)+more)
	if more > 0 {
		fmt.Fprintf(w, "; the first %d shown, use -format csv for all", tableRowLimit)
	}
	fmt.Fprintln(w, ")")
	return nil
}

// tableValue is v as a person reads it on a terminal: instants in the report's zone to the
// second with the zone's name, floats to four decimals; the rest as in CSV.
func tableValue(v any, k value.Kind, loc *time.Location) string {
	switch x := v.(type) {
	case time.Time:
		switch k {
		case value.KindTime:
			return x.In(loc).Format("2006-01-02 15:04:05 MST")
		case value.KindWall:
			return x.UTC().Format("2006-01-02 15:04:05")
		}
	case float64:
		return strconv.FormatFloat(math.Round(x*1e4)/1e4, 'f', -1, 64)
	}
	return csvout.Value(v, k, loc)
}

// setAdhocVars sets -var values for ad-hoc SQL: a variable a report declares gets its declared
// type (so -sql @queries/<file> behaves as in the report), any other is text. as_of and tz are
// set from the options already.
func setAdhocVars(ctx context.Context, conn *sql.Conn, vars map[string]string) error {
	if len(vars) == 0 {
		return nil
	}
	types := map[string]string{}
	defs, err := Definitions()
	if err != nil {
		return err
	}
	for _, d := range defs {
		for _, v := range d.Vars {
			types[v.Name] = v.Type
		}
	}
	names := slices.Sorted(maps.Keys(vars))
	for _, name := range names {
		if name == "as_of" || name == "tz" {
			continue
		}
		typ := types[name]
		if typ == "" {
			typ = "VARCHAR"
		}
		if err := setVar(ctx, conn, name, typ, vars[name]); err != nil {
			return fmt.Errorf("-var %w", err)
		}
	}
	return nil
}

func adhocXLSX(rows adhocRows, s *settings, text string) (string, error) {
	if err := os.MkdirAll(s.ReportsOut, 0o755); err != nil {
		return "", fmt.Errorf("output directory: %w", err)
	}
	wb, err := newWorkbook(s)
	if err != nil {
		return "", err
	}
	defer wb.close()
	sheet := &Sheet{Name: "Result"}
	var xs *xlsxSheet
	n := 0
	err = rows.scan(func(r result) error {
		xs = wb.dataSheet(sheet.Name, resolveColumns(nil, r, nil, s.Locale))
		return nil
	}, func(v []any) error {
		n++
		return xs.write(v)
	})
	if err != nil {
		return "", fmt.Errorf("query: %w", err)
	}
	if _, err := xs.finish(sheet, newTotals(nil)); err != nil {
		return "", err
	}
	f := wb.f
	l := s.lang
	f.SetCellValue(summarySheet, "A1", l.w("adhoc"))
	f.SetCellStyle(summarySheet, "A1", "A1", wb.st.Title)
	for i, kv := range [][2]string{{l.w("warehouse"), s.DB}, {l.w("as_of"), l.date(s.AsOf)}, {l.w("tz"), s.TZ.String()},
		{l.w("adhoc_rows"), l.number(int64(n))}, {l.w("generated"), l.dateTime(time.Now(), s.loc)}, {"SQL", text}} {
		f.SetCellValue(summarySheet, cellName(1, i+3), kv[0])
		f.SetCellStyle(summarySheet, cellName(1, i+3), cellName(1, i+3), wb.st.Label)
		f.SetCellValue(summarySheet, cellName(2, i+3), kv[1])
		f.SetCellStyle(summarySheet, cellName(2, i+3), cellName(2, i+3), wb.st.Wrap)
	}
	f.SetColWidth(summarySheet, "A", "A", 14)
	f.SetColWidth(summarySheet, "B", "B", 100)
	path := filepath.Join(s.ReportsOut, "query_"+time.Now().In(s.loc).Format("2006-01-02_150405")+".xlsx")
	return path, wb.save(path)
}

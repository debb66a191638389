package report

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/csv"
	"io"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/billsync/billsync/internal/cellsafe"
	"github.com/billsync/billsync/internal/config"
	"github.com/billsync/billsync/internal/duckfile"
	"github.com/billsync/billsync/internal/report/csvout"
	"github.com/billsync/billsync/internal/report/value"
	"github.com/billsync/billsync/internal/warehouse"
	"github.com/xuri/excelize/v2"
)

var testAsOf = time.Date(2026, 6, 5, 0, 0, 0, 0, time.UTC)

func generateAll(t *testing.T, o Options) []string {
	t.Helper()
	w := testWorld(t)
	if o.DB == "" {
		o.DB = w.db
	}
	if o.ReportsOut == "" {
		o.ReportsOut = t.TempDir()
	}
	if o.AsOf.IsZero() {
		o.AsOf = testAsOf
	}
	o.Log = quiet
	files, err := Generate(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// TestWorkbooks reads every generated workbook back: sheets, headers, frozen
// panes, number formats, totals equal to the sum of the rows, and the chart.
func TestWorkbooks(t *testing.T) {
	files := generateAll(t, Options{})
	defs, err := Definitions()
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range defs {
		t.Run(d.Name, func(t *testing.T) {
			path := findFile(t, files, fileBase(d, &settings{asOf: "2026-06-05"})+".xlsx")
			f, err := excelize.OpenFile(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			want := []string{langs["id"].w("summary")}
			for _, s := range d.Sheets {
				want = append(want, s.tab("id"))
			}
			if got := f.GetSheetList(); !slices.Equal(got, want) {
				t.Fatalf("sheets %v, want %v", got, want)
			}
			if p, _ := f.GetDocProps(); !strings.Contains(p.Title, d.Title.In("id")) || p.Creator == "" {
				t.Errorf("document properties %+v", p)
			}
			for _, s := range d.Sheets {
				checkSheet(t, f, &s)
			}
			if d.Chart != nil && !hasChart(t, path) {
				t.Error("no chart in the workbook")
			}
		})
	}
}

// shown is the sheet's columns as the workbook shows them: the test world
// has one account, so no account column.
func shown(s *Sheet) []Column {
	return slices.DeleteFunc(slices.Clone(s.Columns), func(c Column) bool { return c.Name == "account" })
}

func checkSheet(t *testing.T, f *excelize.File, s *Sheet) {
	t.Helper()
	tab := s.tab("id")
	rows, err := f.GetRows(tab, excelize.Options{RawCellValue: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) == 0 {
		t.Fatalf("sheet %q is empty", s.Name)
	}
	header := rows[0]
	cols := shown(s)
	for i, c := range cols {
		if title := c.Title.In("id"); i >= len(header) || (header[i] != title && !strings.Contains(title, "{")) {
			t.Errorf("sheet %q column %d header %q, want %q", s.Name, i+1, at(header, i), title)
		}
	}
	panes, err := f.GetPanes(tab)
	if err != nil || !panes.Freeze || panes.YSplit != 1 {
		t.Errorf("sheet %q: header not frozen: %+v %v", s.Name, panes, err)
	}
	data := len(rows) - 1
	if len(s.Totals) > 0 {
		data--
	}
	if s.Check != nil {
		data--
	}
	if len(rows) > 1 && at(rows[1], 0) == langs["id"].w("none_rows") {
		data = 0 // the empty state
	}
	if data < 1 {
		return // the table and formats need rows
	}
	tables, _ := f.GetTables(tab)
	if len(tables) != 1 || !strings.HasPrefix(tables[0].Range, "A1:") {
		t.Errorf("sheet %q: want one table (autofilter) over the data, got %+v", s.Name, tables)
	}
	for i, c := range cols {
		if c.Format != "money" && c.Format != "date" && c.Format != "datetime" {
			continue
		}
		cell := cellName(i+1, 2)
		style, _ := f.GetCellStyle(tab, cell)
		st, _ := f.GetStyle(style)
		want, _ := numFmt(c.Format, "IDR", langs["id"])
		if st == nil || st.CustomNumFmt == nil || *st.CustomNumFmt != want {
			t.Errorf("sheet %q %s (%s): number format %v, want %q", s.Name, cell, c.Name, st, want)
		}
		if v := at(rows[1], i); v != "" && len(c.Empty) == 0 {
			if _, err := strconv.ParseFloat(v, 64); err != nil {
				t.Errorf("sheet %q %s: %q is not stored as a number", s.Name, cell, v)
			}
		}
	}
	next := data + 1
	if len(s.Totals) > 0 {
		checkTotals(t, s, rows[1:data+1], rows[next])
		next++
	}
	if s.Check != nil {
		if chk := rows[next]; !strings.Contains(chk[0], ": OK (") {
			t.Errorf("sheet %q: check row %q", s.Name, chk[0])
		}
	}
}

func checkTotals(t *testing.T, s *Sheet, data [][]string, totalRow []string) {
	if totalRow[0] != s.Totals.In("id") {
		t.Errorf("sheet %q: totals label %q, want %q", s.Name, totalRow[0], s.Totals.In("id"))
	}
	for i, c := range shown(s) {
		if !c.Total.Sum {
			continue
		}
		var sum float64
		for _, r := range data {
			v, _ := strconv.ParseFloat(at(r, i), 64)
			sum += v
		}
		got, err := strconv.ParseFloat(at(totalRow, i), 64)
		if err != nil || got != sum {
			t.Errorf("sheet %q column %s: total %q, rows sum to %v", s.Name, c.Name, at(totalRow, i), sum)
		}
	}
}

// sheetOf is a sheet of a report definition.
func sheetOf(t *testing.T, report, sheet string) *Sheet {
	t.Helper()
	defs, err := Definitions()
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range defs {
		for i := range d.Sheets {
			if d.Name == report && d.Sheets[i].Name == sheet {
				return &d.Sheets[i]
			}
		}
	}
	t.Fatalf("no sheet %s of %s", sheet, report)
	return nil
}

func at(r []string, i int) string {
	if i < len(r) {
		return r[i]
	}
	return ""
}

func hasChart(t *testing.T, path string) bool {
	t.Helper()
	return len(xlsxParts(t, path, "xl/charts/chart")) > 0
}

// xlsxParts reads the parts of the workbook at path whose names start with prefix, by name.
func xlsxParts(t *testing.T, path, prefix string) map[string][]byte {
	t.Helper()
	z, err := zip.OpenReader(path)
	if err != nil {
		t.Fatal(err)
	}
	defer z.Close()
	parts := map[string][]byte{}
	for _, f := range z.File {
		if !strings.HasPrefix(f.Name, prefix) {
			continue
		}
		r, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(r)
		r.Close()
		if err != nil {
			t.Fatalf("%s %s: %v", path, f.Name, err)
		}
		parts[f.Name] = b
	}
	return parts
}

func findFile(t *testing.T, files []string, base string) string {
	t.Helper()
	for _, f := range files {
		if filepath.Base(f) == base {
			return f
		}
	}
	t.Fatalf("%s not among %v", base, files)
	return ""
}

// TestCSVsEqualQueries parses every CSV with encoding/csv and compares it
// with the query's own result.
func TestCSVsEqualQueries(t *testing.T) {
	w := testWorld(t)
	files := generateAll(t, Options{Formats: []string{"csv"}})
	defs, _ := Definitions()
	jakarta, _ := time.LoadLocation("Asia/Jakarta")
	for _, d := range defs {
		for _, s := range d.Sheets {
			path := findFile(t, files, fileBase(d, &settings{Options: Options{}, asOf: "2026-06-05"})+"_"+slug(s.Name)+".csv")
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.HasPrefix(b, []byte(csvout.BOM)) {
				t.Errorf("%s: no byte-order mark", path)
			}
			b = bytes.TrimPrefix(b, []byte(csvout.BOM))
			if !bytes.Contains(b, []byte("\r\n")) {
				t.Errorf("%s: lines do not end in CRLF", path)
			}
			got, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
			if err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			names, rows := queryRows(t, w.db, s.Query, asOfVars, "")
			cols := shown(&s)
			var titles []string
			for _, c := range cols {
				titles = append(titles, c.Title.In("id"))
			}
			if !slices.Equal(got[0], titles) && !strings.Contains(strings.Join(titles, ""), "{") {
				t.Errorf("%s header %v, want %v", path, got[0], titles)
			}
			if len(got)-1 != len(rows) {
				t.Fatalf("%s: %d rows, query gives %d", path, len(got)-1, len(rows))
			}
			id := langs["id"]
			for i, r := range rows {
				for j, c := range cols {
					v := r[slices.Index(names, c.Name)]
					var want string
					switch x := v.(type) {
					case nil:
						// a number or time column stays one in the CSV: blank, where the
						// workbook says why in words
						if numeric := csvout.Numeric(c.Format); !numeric && c.Format != "datetime" && c.Format != "date" && c.Format != "month" {
							want = c.Empty.In("id")
						}
					case string:
						if c.Codes {
							x = id.codeName(x)
						}
						want = cellsafe.Text(x)
					default:
						format := c.Format
						if format == "" {
							format = defaultFormat(kindOfValue(v))
						}
						want = csvout.Display(v, format, kindOfValue(v), jakarta)
					}
					if got[i+1][j] != want {
						t.Errorf("%s row %d %s = %q, query gives %q", path, i+1, c.Name, got[i+1][j], want)
					}
				}
			}
		}
	}
}

// TestCreditJournalComparison writes a journal with three reported balances
// (matching, different, newer than the ledger copy) and checks the verdicts.
func TestCreditJournalComparison(t *testing.T) {
	w := testWorld(t)
	// A day after the second sync, so a balance can be reported after its ledger was read.
	vars := map[string]string{"as_of": "2026-06-06", "tz": "Asia/Jakarta"}
	names, rows := queryRows(t, w.db, "credit_balances.sql", vars, "")
	if len(rows) < 3 {
		t.Fatal("need three credit balances")
	}
	idx := func(n string) int { return slices.Index(names, n) }
	journal := filepath.Join(t.TempDir(), "billsync-jobs.duckdb")
	stmts := []string{`CREATE TABLE credit_balance_reports(account VARCHAR, customer_id VARCHAR, product_id VARCHAR,
		balance DECIMAL(20,4), reported_at TIMESTAMPTZ, job_run_id BIGINT, action_id VARCHAR)`}
	// Reported at the first sync (the ledger copy is newer): the first matches, the second is off by 7.
	// The third is reported after the copy was fetched, so it cannot be compared.
	at := []string{"2026-05-31 16:00:00+00", "2026-05-31 16:00:00+00", "2026-06-05 18:00:00+00"}
	for i := range 3 {
		r := rows[i]
		bal := "(SELECT coalesce(sum(credit - debit), 0) FROM ledger WHERE customer_id = '" + r[idx("customer_id")].(string) +
			"' AND product_id = '" + r[idx("product_id")].(string) + "' AND created_at <= TIMESTAMPTZ '" + at[i] + "')"
		if i == 1 {
			bal += " + 7"
		}
		stmts = append(stmts, "INSERT INTO credit_balance_reports VALUES ('main', '"+r[idx("customer_id")].(string)+"', '"+
			r[idx("product_id")].(string)+"', "+bal+", TIMESTAMPTZ '"+at[i]+"', 1, 'a"+strconv.Itoa(i)+"')")
	}
	stmts = append([]string{"ATTACH '" + w.db + "' AS wh (READ_ONLY)", "CREATE VIEW ledger AS SELECT * FROM wh.credit_ledger"}, stmts...)
	execDB(t, journal, stmts...)

	names, rows = queryRows(t, w.db, "credit_balances.sql", vars, journal)
	verdicts := map[string]string{}
	for _, r := range rows {
		if v, ok := r[idx("reconciliation")].(string); ok {
			verdicts[r[idx("customer_id")].(string)] = v
			if v == "MISMATCH" && r[idx("difference")].(value.Decimal).String() != "-7" {
				t.Errorf("difference %v, want -7", r[idx("difference")])
			}
		}
	}
	_, first := queryRows(t, w.db, "credit_balances.sql", vars, "")
	want := []string{"OK", "MISMATCH", "LEDGER OLDER THAN REPORT"}
	for i, v := range want {
		if got := verdicts[first[i][idx("customer_id")].(string)]; got != v {
			t.Errorf("balance %d: reconciliation %q, want %q", i, got, v)
		}
	}
	// Without the journal the columns are empty and the summary says why, in the report's language (id).
	files := generateAll(t, Options{Names: []string{"credit"}, Journal: filepath.Join(t.TempDir(), "none.duckdb")})
	f, err := excelize.OpenFile(findFile(t, files, "credit_2026-06-05.xlsx"))
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := f.GetCellValue("Saldo", cellName(slices.IndexFunc(shown(sheetOf(t, "credit", "Balances")), func(c Column) bool { return c.Name == "reported_balance" })+1, 2)); v != "tidak ada" {
		t.Errorf("reported balance without a journal reads %q, want the reason", v)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	summary, _ := f.GetRows("Ringkasan")
	if !slices.ContainsFunc(summary, func(r []string) bool {
		return len(r) > 1 && strings.Contains(r[1], "belum ada (belum pernah ada tugas tambah kredit)")
	}) {
		t.Errorf("summary does not say the journal is missing: %v", summary)
	}
}

// TestBadInput: mistakes get an error that names them.
func TestBadInput(t *testing.T) {
	w := testWorld(t)
	for _, tc := range []struct {
		name string
		o    Options
		want string
	}{
		{"unknown report", Options{Names: []string{"aging", "profit"}}, `no report named "profit"`},
		{"value outside the list", Options{Vars: map[string]string{"aging_basis": "paid"}}, "aging_basis"},
		{"unknown variable", Options{Names: []string{"reviews"}, Vars: map[string]string{"bucket_1": "10"}}, "bucket_1"},
		{"not a number", Options{Names: []string{"aging"}, Vars: map[string]string{"bucket_1": "ten"}}, "bucket_1"},
		{"format", Options{Formats: []string{"pdf"}}, `"pdf"`},
		{"no warehouse", Options{DB: filepath.Join(t.TempDir(), "nothing.duckdb")}, "does not exist"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := tc.o
			if o.DB == "" {
				o.DB = w.db
			}
			o.ReportsOut, o.AsOf, o.Log = t.TempDir(), testAsOf, quiet
			_, err := Generate(context.Background(), o)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// TestVarsChangeTheReport: a variable reaches the SQL and the titles.
func TestVarsChangeTheReport(t *testing.T) {
	files := generateAll(t, Options{Report: config.Report{Locale: "en"}, Names: []string{"aging"}, Vars: map[string]string{"bucket_1": "10", "aging_basis": "created"}})
	// The file names say how the report was made.
	f, err := excelize.OpenFile(findFile(t, files, "aging_2026-06-05_basis-created_bucket-1-10.xlsx"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	findFile(t, files, "aging_2026-06-05_basis-created_bucket-1-10_detail.csv")
	if v, _ := f.GetCellValue("By customer", "D1"); v != "1-10 days" {
		t.Errorf("bucket title %q, want 1-10 days", v)
	}
	if v, _ := f.GetCellValue("By customer", "E1"); v != "11-60 days" {
		t.Errorf("bucket title %q, want 11-60 days", v)
	}
	summary, _ := f.GetRows("Summary")
	if !slices.ContainsFunc(summary, func(r []string) bool { return len(r) > 1 && strings.Contains(r[1], "aging_basis = created") }) {
		t.Error("summary does not show aging_basis = created")
	}
}

func TestExpand(t *testing.T) {
	vals := map[string]string{"b": "30", "tz": "Asia/Jakarta"}
	for _, tc := range []struct{ in, want string }{
		{"1-{b} days", "1-30 days"},
		{"{b+1}-60", "31-60"},
		{"in {tz}", "in Asia/Jakarta"},
		{"{tz+1}", "{tz+1}"},
		{"{unknown}", "{unknown}"},
		{"no placeholders", "no placeholders"},
	} {
		if got := expand(tc.in, vals); got != tc.want {
			t.Errorf("expand(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestExportParquet(t *testing.T) {
	w := testWorld(t)
	dir, exported, err := ExportParquet(context.Background(), w.db, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	// Only the analyst tables, every one listed, and nothing else on disk.
	var names []string
	for _, e := range exported {
		names = append(names, e.Name)
		if (e.Rows > 0) != (e.Path != "") {
			t.Errorf("%+v: a path exactly when there are rows", e)
		}
	}
	if !slices.Equal(names, slices.Sorted(slices.Values(AnalystTables))) {
		t.Errorf("exported %v, want the analyst tables %v", names, AnalystTables)
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if !slices.Contains(AnalystTables, e.Name()) {
			t.Errorf("export holds %s, not an analyst table", e.Name())
		}
	}
	db, err := warehouse.OpenReadOnly(context.Background(), w.db)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, tc := range []struct{ table, files string }{
		{"invoices", "invoices/account=main/*.parquet"},
		{"record_changes", "record_changes/account=main/entity=*/*.parquet"},
	} {
		glob := filepath.Join(dir, tc.files)
		var want, got int64
		if err := db.QueryRow("SELECT count(*) FROM " + duckfile.QuoteIdent(tc.table)).Scan(&want); err != nil {
			t.Fatal(err)
		}
		if err := db.QueryRow("SELECT count(*) FROM read_parquet(?, hive_partitioning = true)", glob).Scan(&got); err != nil {
			t.Fatalf("%s: %v", glob, err)
		}
		if got != want || want == 0 {
			t.Errorf("%s: parquet has %d rows, table %d", tc.table, got, want)
		}
	}
}

// TestCreditReportInTheLedgerReadsSecond: the service stamps a reported balance in whole
// seconds, so a report stamped in the very second billsync read that customer's ledger may have
// come after the read (a daemon applies approved top-ups right after its sync): the copy cannot
// confirm it. It is not compared (a top-up the copy has not seen read as a red MISMATCH), and
// the customer's ledger freshness says the copy is older than the last report.
func TestCreditReportInTheLedgerReadsSecond(t *testing.T) {
	w := testWorld(t)
	vars := map[string]string{"as_of": "2026-06-06", "tz": "Asia/Jakarta"}
	names, rows := queryRows(t, w.db, "credit_balances.sql", vars, "")
	idx := func(n string) int { return slices.Index(names, n) }
	var cust, prod string
	for _, r := range rows {
		if _, ok := r[idx("ledger_fetched_at")].(time.Time); ok {
			cust, prod = r[idx("customer_id")].(string), r[idx("product_id")].(string)
			break
		}
	}
	if cust == "" {
		t.Fatal("no balance with a ledger copy")
	}
	journal := filepath.Join(t.TempDir(), "billsync-jobs.duckdb")
	execDB(t, journal, "ATTACH '"+w.db+"' AS wh (READ_ONLY)",
		`CREATE TABLE credit_balance_reports(account VARCHAR, customer_id VARCHAR, product_id VARCHAR,
		balance DECIMAL(20,4), reported_at TIMESTAMPTZ, job_run_id BIGINT, action_id VARCHAR)`,
		// A top-up of 500 the copy has not seen, stamped with the second of the read.
		`INSERT INTO credit_balance_reports
		SELECT 'main', '`+cust+`', '`+prod+`', (SELECT coalesce(sum(credit - debit), 0) + 500 FROM wh.credit_ledger
		WHERE customer_id = '`+cust+`' AND product_id = '`+prod+`'), date_trunc('second', f.last_fetched_at), 1, 'a1'
		FROM wh.credit_fetch_state f WHERE f.customer_id = '`+cust+`'`)

	names, rows = queryRows(t, w.db, "credit_balances.sql", vars, journal)
	idx = func(n string) int { return slices.Index(names, n) }
	for _, r := range rows {
		if r[idx("customer_id")] == cust && r[idx("product_id")] == prod {
			if got := r[idx("reconciliation")]; got != "LEDGER OLDER THAN REPORT" {
				t.Errorf("reconciliation %v, want LEDGER OLDER THAN REPORT", got)
			}
		}
	}
	names, rows = queryRows(t, w.db, "credit_freshness.sql", vars, journal)
	idx = func(n string) int { return slices.Index(names, n) }
	for _, r := range rows {
		if r[idx("customer_id")] == cust {
			if got := r[idx("freshness")]; got != "OLDER THAN LAST REPORT" {
				t.Errorf("freshness %v, want OLDER THAN LAST REPORT", got)
			}
		}
	}
}

// TestFormulaTextNeutralised: a customer chooses their own name; a name a
// spreadsheet would run as a formula is written as text: in the CSV with the
// apostrophe, the spreadsheet's mark; in the workbook as it is ("-Budi" prints
// "-Budi"), in a cell whose style has the quote prefix, so it stays text when a
// reader edits the cell. A phone number, arithmetic at worst, is marked in the
// workbook too (no cost there) and left alone in the CSV.
func TestFormulaTextNeutralised(t *testing.T) {
	w := testWorld(t)
	db := filepath.Join(t.TempDir(), "billsync.duckdb")
	if err := copyFile(w.db, db); err != nil {
		t.Fatal(err)
	}
	link := `=HYPERLINK("http://evil.example","x")`
	cmd := `+cmd|' /C calc'!A0`
	phone := "+62 812-3456-7890"
	execDB(t, db,
		`UPDATE unpaid_transactions SET customer_name = '`+strings.ReplaceAll(link, "'", "''")+`'`,
		`UPDATE customers SET name = '`+strings.ReplaceAll(cmd, "'", "''")+`'`,
		`UPDATE products SET name = '`+phone+`'`)
	files := generateAll(t, Options{DB: db, Names: []string{"aging", "credit"}})
	for _, tc := range []struct{ file, text string }{
		{"aging_2026-06-05_basis-due_by-customer.csv", link},
		{"credit_2026-06-05_balances.csv", cmd},
	} {
		found := false
		for _, c := range cellsOf(t, findFile(t, files, tc.file), "") {
			if c == tc.text {
				t.Errorf("%s: %q written raw", tc.file, c)
			}
			found = found || c == "'"+tc.text
		}
		if !found {
			t.Errorf("%s: %q not found neutralised", tc.file, tc.text)
		}
	}
	for _, tc := range []struct{ file, sheet, text string }{
		{"aging_2026-06-05_basis-due.xlsx", "Per pelanggan", link},
		{"credit_2026-06-05.xlsx", "Saldo", cmd},
		{"credit_2026-06-05.xlsx", "Saldo", phone},
		{"credit_2026-06-05.xlsx", "Per produk", phone},
		{"credit_2026-06-05.xlsx", "Ringkasan", phone}, // the headline lines name the products
	} {
		f, err := excelize.OpenFile(findFile(t, files, tc.file))
		if err != nil {
			t.Fatal(err)
		}
		rows, err := f.GetRows(tc.sheet)
		if err != nil {
			t.Fatal(err)
		}
		found := 0
		for r, row := range rows {
			for c, v := range row {
				// every customer (product) has the name: the workbook adds the start of the ID
				if v = withoutIDStart(v); v != tc.text && v != "'"+tc.text && !strings.HasPrefix(v, tc.text+" · ") {
					continue
				}
				cell := cellName(c+1, r+1)
				if v == "'"+tc.text {
					t.Errorf("%s %s %s: %q shows the apostrophe", tc.file, tc.sheet, cell, v)
				}
				if !quotePrefix(t, f, tc.sheet, cell) {
					t.Errorf("%s %s %s: %q without the quote prefix: a reader editing it runs it", tc.file, tc.sheet, cell, v)
				}
				found++
			}
		}
		f.Close()
		if found == 0 {
			t.Errorf("%s %s: %q not found", tc.file, tc.sheet, tc.text)
		}
	}
}

// quotePrefix says the cell's style marks its text as text even when edited.
func quotePrefix(t *testing.T, f *excelize.File, sheet, cell string) bool {
	t.Helper()
	id, err := f.GetCellStyle(sheet, cell)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.GetStyle(id); err != nil { // reads the style sheet
		t.Fatal(err)
	}
	xf := f.Styles.CellXfs.Xf[id]
	return xf.QuotePrefix != nil && *xf.QuotePrefix
}

// withoutIDStart is a printed name without the start of the ID the workbook adds to a name
// two customers or products carry (sameNames).
func withoutIDStart(s string) string {
	return idStartRe.ReplaceAllString(s, "")
}

var idStartRe = regexp.MustCompile(` \([0-9a-f-]{8,}…\)`)

// cellsOf is every cell's text of a CSV file (sheet "") or of a workbook's sheet, as a reader sees it.
func cellsOf(t *testing.T, path, sheet string) []string {
	t.Helper()
	var cells []string
	if sheet == "" {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		rows, err := csv.NewReader(bytes.NewReader(bytes.TrimPrefix(b, []byte(csvout.BOM)))).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rows {
			cells = append(cells, r...)
		}
		return cells
	}
	f, err := excelize.OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := f.GetRows(sheet)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		cells = append(cells, r...)
	}
	return cells
}

// TestEscapeLikeTextReadsBack: a spreadsheet reads _xHHHH_ in cell text as
// an escaped character, so a name holding such text is written escaped and
// reads back from the workbook as the CSV has it, in every arrangement
// (escapes side by side, sharing an underscore, an escaped underscore, half a
// surrogate pair, lower-case hex).
func TestEscapeLikeTextReadsBack(t *testing.T) {
	w := testWorld(t)
	db := filepath.Join(t.TempDir(), "billsync.duckdb")
	if err := copyFile(w.db, db); err != nil {
		t.Fatal(err)
	}
	names := []string{"_x0041_ literal", "a_x005F_x0041_b", "_x0041_x0042_", "_xD800_ half", "_x005F_xD800_",
		"_x005F_", "_x005F_x005F_", "__x0041__", "_x005f_ lower", "x_x_x0041_", "end _x0041_"}
	execDB(t, db, `UPDATE customers SET name = (['`+strings.Join(names, "','")+`'])[1 + (hash(id) % `+strconv.Itoa(len(names))+`)::BIGINT]`)
	files := generateAll(t, Options{DB: db, Names: []string{"credit"}})
	escapeLike := func(cells []string) map[string]int {
		n := map[string]int{}
		for _, c := range cells {
			// customers of one name: the workbook adds the start of the ID, the CSV has the ID column
			if c = withoutIDStart(c); strings.Contains(c, "_x") {
				n[c]++
			}
		}
		return n
	}
	want := escapeLike(cellsOf(t, findFile(t, files, "credit_2026-06-05_balances.csv"), ""))
	got := escapeLike(cellsOf(t, findFile(t, files, "credit_2026-06-05.xlsx"), "Saldo"))
	if len(want) < len(names)/2 {
		t.Fatalf("the balances show %d of the %d names: %v", len(want), len(names), want)
	}
	if !maps.Equal(got, want) {
		t.Errorf("workbook cells %v,\nCSV cells %v", got, want)
	}
}

// TestFailingReportNamesItself: reports run side by side; when one fails the error names it,
// and the files returned are those of the reports that completed (the one started with it
// among them), in the order asked.
func TestFailingReportNamesItself(t *testing.T) {
	w := testWorld(t)
	db := filepath.Join(t.TempDir(), "broken.duckdb")
	if err := copyFile(w.db, db); err != nil {
		t.Fatal(err)
	}
	execDB(t, db, "DROP TABLE reviews")
	out := t.TempDir()
	files, err := Generate(context.Background(), Options{Report: config.Report{ReportsOut: out}, DB: db, AsOf: testAsOf, Log: quiet,
		Names: []string{"webhooks", "reviews", "aging", "credit"}})
	if err == nil || !strings.HasPrefix(err.Error(), "report reviews: ") || strings.Contains(err.Error(), "report webhooks") {
		t.Fatalf("error %v, want one of report reviews", err)
	}
	var names []string
	for _, f := range files {
		if _, err := os.Stat(f); err != nil {
			t.Errorf("returned file %s: %v", f, err)
		}
		if strings.HasPrefix(filepath.Base(f), "reviews_") {
			t.Errorf("returned file %s of the failed report", f)
		}
		names = append(names, filepath.Base(f))
	}
	if len(names) == 0 || !strings.HasPrefix(names[0], "webhooks_") {
		t.Errorf("files %v, want webhooks' first", names)
	}
	leftovers, _ := filepath.Glob(filepath.Join(out, "reviews_*"))
	if len(leftovers) > 0 {
		t.Errorf("the failed report left %v", leftovers)
	}
}

package report

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/csv"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

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
	if o.OutDir == "" {
		o.OutDir = t.TempDir()
	}
	o.AsOf, o.Log = testAsOf, quiet
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
			path := findFile(t, files, d.Name+"_2026-06-05.xlsx")
			f, err := excelize.OpenFile(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			want := []string{summarySheet}
			for _, s := range d.Sheets {
				want = append(want, s.Name)
			}
			if got := f.GetSheetList(); !slices.Equal(got, want) {
				t.Fatalf("sheets %v, want %v", got, want)
			}
			if p, _ := f.GetDocProps(); !strings.Contains(p.Title, d.Title) || p.Creator == "" {
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

func checkSheet(t *testing.T, f *excelize.File, s *Sheet) {
	t.Helper()
	rows, err := f.GetRows(s.Name, excelize.Options{RawCellValue: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) == 0 {
		t.Fatalf("sheet %q is empty", s.Name)
	}
	header := rows[0]
	for i, c := range s.Columns {
		if i >= len(header) || (header[i] != c.Title && !strings.Contains(c.Title, "{")) {
			t.Errorf("sheet %q column %d header %q, want %q", s.Name, i+1, at(header, i), c.Title)
		}
	}
	panes, err := f.GetPanes(s.Name)
	if err != nil || !panes.Freeze || panes.YSplit != 1 {
		t.Errorf("sheet %q: header not frozen: %+v %v", s.Name, panes, err)
	}
	data := len(rows) - 1
	if s.Totals != "" {
		data--
	}
	if s.Check != nil {
		data--
	}
	if data < 1 {
		return // the table and formats need rows
	}
	tables, _ := f.GetTables(s.Name)
	if len(tables) != 1 || !strings.HasPrefix(tables[0].Range, "A1:") {
		t.Errorf("sheet %q: want one table (autofilter) over the data, got %+v", s.Name, tables)
	}
	for i, c := range s.Columns {
		if c.Format != "money" && c.Format != "date" && c.Format != "datetime" {
			continue
		}
		cell := cellName(i+1, 2)
		style, _ := f.GetCellStyle(s.Name, cell)
		st, _ := f.GetStyle(style)
		want := map[string]string{"money": moneyFormat("IDR"), "date": "yyyy-mm-dd", "datetime": "yyyy-mm-dd hh:mm"}[c.Format]
		if st == nil || st.CustomNumFmt == nil || *st.CustomNumFmt != want {
			t.Errorf("sheet %q %s (%s): number format %v, want %q", s.Name, cell, c.Name, st, want)
		}
		if v := at(rows[1], i); v != "" {
			if _, err := strconv.ParseFloat(v, 64); err != nil {
				t.Errorf("sheet %q %s: %q is not stored as a number", s.Name, cell, v)
			}
		}
	}
	if s.Totals == "" {
		return
	}
	totalRow := rows[data+1]
	if totalRow[0] != s.Totals {
		t.Errorf("sheet %q: totals label %q, want %q", s.Name, totalRow[0], s.Totals)
	}
	for i, c := range s.Columns {
		if !c.Total.Sum {
			continue
		}
		var sum float64
		for _, r := range rows[1 : data+1] {
			v, _ := strconv.ParseFloat(at(r, i), 64)
			sum += v
		}
		got, err := strconv.ParseFloat(at(totalRow, i), 64)
		if err != nil || got != sum {
			t.Errorf("sheet %q column %s: total %q, rows sum to %v", s.Name, c.Name, at(totalRow, i), sum)
		}
	}
	if s.Check != nil {
		if chk := rows[data+2]; !strings.HasSuffix(chk[0], ": OK") {
			t.Errorf("sheet %q: check row %q", s.Name, chk[0])
		}
	}
}

func at(r []string, i int) string {
	if i < len(r) {
		return r[i]
	}
	return ""
}

func hasChart(t *testing.T, path string) bool {
	t.Helper()
	z, err := zip.OpenReader(path)
	if err != nil {
		t.Fatal(err)
	}
	defer z.Close()
	for _, f := range z.File {
		if strings.HasPrefix(f.Name, "xl/charts/chart") {
			return true
		}
	}
	return false
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
			path := findFile(t, files, d.Name+"_2026-06-05_"+slug(s.Name)+".csv")
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Contains(b, []byte("\r\n")) {
				t.Errorf("%s: lines do not end in CRLF", path)
			}
			got, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
			if err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			names, rows := queryRows(t, w.db, s.Query, asOfVars, "")
			if !slices.Equal(got[0], names) {
				t.Errorf("%s header %v, want %v", path, got[0], names)
			}
			if len(got)-1 != len(rows) {
				t.Fatalf("%s: %d rows, query gives %d", path, len(got)-1, len(rows))
			}
			for i, r := range rows {
				for j, v := range r {
					want := csvValue(v, kindOfValue(v), jakarta)
					if got[i+1][j] != want {
						t.Errorf("%s row %d %s = %q, query gives %q", path, i+1, names[j], got[i+1][j], want)
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
			if v == "MISMATCH" && r[idx("difference")].(decimal).String() != "-7" {
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
	// Without the journal the columns are empty and the summary says why.
	files := generateAll(t, Options{Names: []string{"credit"}, Journal: filepath.Join(t.TempDir(), "none.duckdb")})
	f, err := excelize.OpenFile(findFile(t, files, "credit_2026-06-05.xlsx"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	summary, _ := f.GetRows(summarySheet)
	if !slices.ContainsFunc(summary, func(r []string) bool { return len(r) > 1 && strings.Contains(r[1], "does not exist") }) {
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
		{"time zone", Options{TZ: "Mars/Olympus"}, "Mars/Olympus"},
		{"format", Options{Formats: []string{"pdf"}}, `"pdf"`},
		{"no warehouse", Options{DB: filepath.Join(t.TempDir(), "nothing.duckdb")}, "does not exist"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := tc.o
			if o.DB == "" {
				o.DB = w.db
			}
			o.OutDir, o.AsOf, o.Log = t.TempDir(), testAsOf, quiet
			_, err := Generate(context.Background(), o)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// TestVarsChangeTheReport: a variable reaches the SQL and the titles.
func TestVarsChangeTheReport(t *testing.T) {
	files := generateAll(t, Options{Names: []string{"aging"}, Vars: map[string]string{"bucket_1": "10", "aging_basis": "created"}})
	f, err := excelize.OpenFile(findFile(t, files, "aging_2026-06-05.xlsx"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if v, _ := f.GetCellValue("By customer", "G1"); v != "1-10 days" {
		t.Errorf("bucket title %q, want 1-10 days", v)
	}
	if v, _ := f.GetCellValue("By customer", "H1"); v != "11-60 days" {
		t.Errorf("bucket title %q, want 11-60 days", v)
	}
	summary, _ := f.GetRows(summarySheet)
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
		if err := db.QueryRow("SELECT count(*) FROM " + ident(tc.table)).Scan(&want); err != nil {
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

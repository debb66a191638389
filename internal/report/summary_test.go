package report

import (
	"context"
	"fmt"
	"html"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/billsync/billsync/internal/config"
	"github.com/billsync/billsync/internal/report/value"
	"github.com/billsync/billsync/internal/sheetfmt"
	"github.com/xuri/excelize/v2"
)

// summaries generates every report and opens each workbook's summary sheet.
func summaries(t *testing.T, o Options) map[string]*excelize.File {
	t.Helper()
	files := generateAll(t, o)
	out := map[string]*excelize.File{}
	for _, p := range files {
		if !strings.HasSuffix(p, ".xlsx") {
			continue
		}
		f, err := excelize.OpenFile(p)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		out[p] = f
	}
	if len(out) == 0 {
		t.Fatal("no workbook written")
	}
	return out
}

// TestSummaryTextSpansItsColumns: the summary's values are split in columns for a headline
// table's figures; the description, each line's value and each note span them all (the
// description, merged over the first three, wrapped into half its width and was cut off).
func TestSummaryTextSpansItsColumns(t *testing.T) {
	last, _ := excelize.ColumnNumberToName(1 + summaryTableCols)
	note, _ := excelize.ColumnNumberToName(2 + summaryTableCols)
	for path, f := range summaries(t, Options{Names: []string{"credit", "aging"}}) {
		sh := f.GetSheetName(0)
		merged, err := f.GetMergeCells(sh)
		if err != nil {
			t.Fatal(err)
		}
		ends := map[string]string{}
		for _, m := range merged {
			ends[m.GetStartAxis()] = m.GetEndAxis()
		}
		if ends["A2"] != note+"2" {
			t.Errorf("%s: the description spans A2:%s, want A2:%s2", filepath.Base(path), ends["A2"], note)
		}
		rows, _ := f.GetRows(sh)
		for r, row := range rows {
			// (a text value: a table's totals row of one figure is cells of its own)
			if len(row) == 2 && strings.ContainsFunc(row[1], unicode.IsLetter) && r > 3 {
				cell := fmt.Sprintf("B%d", r+1)
				if end := ends[cell]; end != fmt.Sprintf("%s%d", last, r+1) && end != fmt.Sprintf("%s%d", note, r+1) {
					t.Errorf("%s: %s %q spans to %q, want the value columns", filepath.Base(path), cell, row[1], end)
				}
			}
		}
	}
}

// TestSummaryValuesAlignTop: a summary row is as tall as its longest wrapped
// text, so a value aligned to the bottom (the default) prints a line below its
// label. Every filled cell of every summary is aligned to the top.
func TestSummaryValuesAlignTop(t *testing.T) {
	for path, f := range summaries(t, Options{}) {
		sh := langs["id"].w("summary")
		rows, err := f.GetRows(sh)
		if err != nil {
			t.Fatal(err)
		}
		for r, row := range rows {
			for c, v := range row {
				if v == "" || r < 3 { // title and description
					continue
				}
				cell, _ := excelize.CoordinatesToCellName(c+1, r+1)
				if st := cellStyle(t, f, sh, cell); st.Alignment == nil || st.Alignment.Vertical != "top" {
					t.Errorf("%s: summary %s %q is not aligned to the top", path, cell, v)
				}
			}
		}
	}
}

// english finds words of English sentences billsync writes (errors, reasons,
// notes); none belongs in a cell of an Indonesian workbook.
var english = regexp.MustCompile(`\b(the|is|are|does|not|has|have|with|of|other|page|stars?|empty|malformed|shared|ambiguous|exactly|exist|kept|reported|balances?|customers?|ledger|none|no|after|before|today|run|was|been|cannot|could)\b`)

// TestIndonesianWorkbooksSayNoEnglish reads every cell of every workbook in
// the default locale, the journal missing (its sentence on the credit
// summary) and an as-of date before the history (a warning on each summary):
// no English sentence billsync writes reaches a cell. Exempt are what the
// service or the person sent (names, e-mails, review texts, response
// payloads, record versions) and the summary's paths and commands.
func TestIndonesianWorkbooksSayNoEnglish(t *testing.T) {
	w := testWorld(t)
	o := Options{Report: config.Report{ReportsOut: t.TempDir()}, DB: w.db, AsOf: firstSync.AddDate(0, 0, -3), Log: quiet, Formats: []string{"xlsx", "csv"}}
	files, err := Generate(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	exemptCols := []string{"Pelanggan", "Produk", "Ulasan", "E-mail", "Respons", "Versi pertama", "Versi disimpan", "Catatan", "fromEmail",
		"toEmail", "Usulan", "Tujuan", "Peristiwa", "Item", "Jalur daftar"}
	exemptRows := []string{"Basis data billsync", "Log tugas", "Buat ulang", "Kueri", "Parameter"}
	seen := 0
	for _, p := range files {
		if !strings.HasSuffix(p, ".xlsx") {
			continue
		}
		f, err := excelize.OpenFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, sh := range f.GetSheetList() {
			rows, err := f.GetRows(sh)
			if err != nil {
				t.Fatal(err)
			}
			for r, row := range rows {
				for c, v := range row {
					switch {
					case r > 0 && len(rows[0]) > c && slices.Contains(exemptCols, rows[0][c]) && sh != langs["id"].w("summary"):
						continue
					case sh == langs["id"].w("summary") && slices.Contains(exemptRows, row[0]):
						continue
					}
					seen++
					if m := english.FindString(v); m != "" {
						t.Errorf("%s, sheet %s row %d: %q (%q)", filepath.Base(p), sh, r+1, v, m)
					}
				}
			}
		}
		f.Close()
	}
	if seen < 1000 {
		t.Fatalf("only %d cells read", seen)
	}
}

// TestCodeListNames: a column of '; '-separated codes shows each code's name.
func TestCodeListNames(t *testing.T) {
	for _, tc := range []struct{ code, id, en string }{
		{"malformed; shared; ambiguous", "format salah; dipakai bersama; fromEmail tidak unik", "malformed; shared; fromEmail not unique"},
		{"empty", "kosong", "empty"},
		{"partial", "Parsial", "Partial"},
		{"inactive", "Tidak aktif", "Inactive"}, // statuses the spec names besides those the demo has
		{"created", "Dibuat", "Created"},
		{"x; y", "x; y", "x; y"},
	} {
		if got := langs["id"].codeName(tc.code); got != tc.id {
			t.Errorf("id %q: %q, want %q", tc.code, got, tc.id)
		}
		if got := langs["en"].codeName(tc.code); got != tc.en {
			t.Errorf("en %q: %q, want %q", tc.code, got, tc.en)
		}
	}
}

// cellStyle is a cell's style.
func cellStyle(t *testing.T, f *excelize.File, sheet, cell string) *excelize.Style {
	t.Helper()
	id, err := f.GetCellStyle(sheet, cell)
	if err != nil {
		t.Fatal(err)
	}
	st, err := f.GetStyle(id)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// cellFormat is the number format of a cell's style ("" = none).
func cellFormat(t *testing.T, f *excelize.File, sheet, cell string) string {
	t.Helper()
	st := cellStyle(t, f, sheet, cell)
	if st.CustomNumFmt == nil {
		return ""
	}
	return *st.CustomNumFmt
}

// TestCreditCountsApartFromBalances: on the credit By product sheet the
// counts of customers (all, with a reported balance, compared, mismatched) say they
// count customers and stand together before the balances, which are credit
// units.
func TestCreditCountsApartFromBalances(t *testing.T) {
	files := generateAll(t, Options{Names: []string{"credit"}, Formats: []string{"xlsx"}})
	f, err := excelize.OpenFile(findFile(t, files, "credit_2026-06-05.xlsx"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	l := langs["id"]
	intFmt, _ := numFmt("int", "IDR", l)
	creditFmt, _ := numFmt("credit", "IDR", l)
	sh := sheetOf(t, "credit", "By product").tab("id")
	rows, err := f.GetRows(sh)
	if err != nil || len(rows) < 2 {
		t.Fatalf("sheet %s: %d rows, %v", sh, len(rows), err)
	}
	lastCount, firstCredit, counts := -1, -1, 0
	for c, title := range rows[0] {
		cell, _ := excelize.CoordinatesToCellName(c+1, 2)
		format := cellFormat(t, f, sh, cell)
		if rows[1][c] == "(tidak diperiksa)" { // a count of mismatches when none was compared
			format = intFmt
		}
		switch format {
		case intFmt:
			counts++
			lastCount = c
			if !strings.Contains(title, "Pelanggan") {
				t.Errorf("column %q counts customers but does not say so", title)
			}
		case creditFmt:
			if firstCredit < 0 {
				firstCredit = c
			}
		}
	}
	// The customers first; the reconciliation's counts after the balances, out of print.
	if counts != 4 || firstCredit != 3 || lastCount < firstCredit {
		t.Errorf("header %q: %d count columns, the last at %d, the first balance at %d; want the customers, the balances, then 3 counts",
			rows[0], counts, lastCount, firstCredit)
	}
}

// TestExceptionsStyleSaysWhatWasChecked: green says "checked, none failed".
// Without a journal no reported balance can be checked, so the MISMATCH line
// says "not checked" in the plain style; with one matching report it is 0 of 1
// checked, in green.
func TestExceptionsStyleSaysWhatWasChecked(t *testing.T) {
	w := testWorld(t)
	names, rows := queryRows(t, w.db, "credit_balances.sql", map[string]string{"as_of": "2026-06-05", "tz": "Asia/Jakarta"}, "")
	if len(rows) == 0 {
		t.Fatal("no credit balance")
	}
	cust, prod := rows[0][slices.Index(names, "customer_id")].(string), rows[0][slices.Index(names, "product_id")].(string)
	journal := filepath.Join(t.TempDir(), "billsync-jobs.duckdb")
	at := "2026-05-31 16:00:00+00"
	execDB(t, journal, "ATTACH '"+w.db+"' AS wh (READ_ONLY)",
		`CREATE TABLE credit_balance_reports(account VARCHAR, customer_id VARCHAR, product_id VARCHAR,
		balance DECIMAL(20,4), reported_at TIMESTAMPTZ, job_run_id BIGINT, action_id VARCHAR)`,
		"INSERT INTO credit_balance_reports SELECT 'main', '"+cust+"', '"+prod+"', coalesce(sum(credit - debit), 0), TIMESTAMPTZ '"+at+
			"', 1, 'a0' FROM wh.credit_ledger WHERE customer_id = '"+cust+"' AND product_id = '"+prod+"' AND created_at <= TIMESTAMPTZ '"+at+"'")
	green := "375623"
	for _, tc := range []struct {
		journal, want string
		green         bool
	}{
		// the status first: a glance at a line opening with the check's name read as a mismatch
		// and what was not checked in words that do not name a mismatch
		{filepath.Join(t.TempDir(), "none.duckdb"), "Tidak diperiksa: saldo dilaporkan dibandingkan dengan mutasi kredit (", false},
		{journal, ": 0 dari 1 baris yang diperiksa", true},
	} {
		files := generateAll(t, Options{Names: []string{"credit"}, Formats: []string{"xlsx"}, Journal: tc.journal})
		f, err := excelize.OpenFile(findFile(t, files, "credit_2026-06-05.xlsx"))
		if err != nil {
			t.Fatal(err)
		}
		sh := langs["id"].w("summary")
		summary, _ := f.GetRows(sh)
		found := false
		for r, row := range summary {
			if len(row) < 2 || !strings.Contains(row[1], "Saldo dilaporkan TIDAK COCOK") && !strings.Contains(row[1], "saldo dilaporkan dibandingkan") {
				continue
			}
			if tc.green == false && strings.Contains(row[1], "TIDAK COCOK") {
				t.Errorf("journal %s: nothing was compared, but the line names a mismatch: %q", filepath.Base(tc.journal), row[1])
			}
			found = true
			st := cellStyle(t, f, sh, cellName(2, r+1))
			isGreen := st.Font != nil && st.Font.Color == green
			if !strings.Contains(row[1], tc.want) || isGreen != tc.green {
				t.Errorf("journal %s: %q green=%v, want %q green=%v", filepath.Base(tc.journal), row[1], isGreen, tc.want, tc.green)
			}
		}
		f.Close()
		if !found {
			t.Errorf("journal %s: no MISMATCH line on the summary: %q", filepath.Base(tc.journal), summary)
		}
	}
}

// TestReviewsTrendLeavesNothingOut: reviews older than the trend's window are
// one first row, "Sebelumnya", so the trend's total equals By product's.
func TestReviewsTrendLeavesNothingOut(t *testing.T) {
	files := generateAll(t, Options{Names: []string{"reviews"}, Formats: []string{"xlsx"}, Vars: map[string]string{"months": "2"}})
	f, err := excelize.OpenFile(findFile(t, files, "reviews_2026-06-05_months-2.xlsx"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	total := func(sheet string) (first []string, n string) {
		rows, err := f.GetRows(sheetOf(t, "reviews", sheet).tab("id"), excelize.Options{RawCellValue: true})
		if err != nil || len(rows) < 3 {
			t.Fatalf("sheet %s: %d rows, %v", sheet, len(rows), err)
		}
		c := slices.Index(rows[0], "Ulasan")
		return rows[1], rows[len(rows)-1][c]
	}
	_, byProduct := total("By product")
	first, trend := total("Monthly trend")
	if trend != byProduct || first[0] != "Sebelumnya" {
		t.Errorf("monthly trend total %s, first row %q; want By product's %s and the earlier reviews first", trend, first, byProduct)
	}
}

// TestWrappedLines: rows are made as tall as their text wraps, no taller (a
// label that fits its column keeps one line).
func TestWrappedLines(t *testing.T) {
	for _, tc := range []struct {
		s     string
		width int
		want  int
	}{
		{"Per peristiwa: Catatan", labelWidth - 1, 1},
		{"Per peristiwa dan tujuan: Tingkat keberhasilan", labelWidth - 1, 2},
		{"", 10, 1},
		{"aaaa bbbb cccc", 9, 2},
		{"aaaa bbbb\ncccc", 20, 2},
		{"abcdefghijklmnopqrstuvwxy", 10, 3},
	} {
		if got := sheetfmt.WrappedLines(tc.s, tc.width); got != tc.want {
			t.Errorf("%q at %d: %d lines, want %d", tc.s, tc.width, got, tc.want)
		}
	}
}

// TestSummaryDatesAsFinanceReadsThem: the generation time is a WIB date-time
// in the locale (not ISO), and notes name their dates as the cells show them.
func TestSummaryDatesAsFinanceReadsThem(t *testing.T) {
	generated := regexp.MustCompile(`^\d{1,2} (Jan|Feb|Mar|Apr|Mei|Jun|Jul|Agu|Sep|Okt|Nov|Des) \d{4} \d{2}:\d{2} WIB$`)
	for path, f := range summaries(t, Options{Names: []string{"credit", "webhooks"}, Formats: []string{"xlsx"}}) {
		rows, err := f.GetRows(langs["id"].w("summary"))
		if err != nil {
			t.Fatal(err)
		}
		var gen string
		var notes []string
		for _, r := range rows {
			if len(r) > 1 && r[0] == "Dibuat" {
				gen = r[1]
			}
			if len(r) > 1 && r[0] == "•" {
				notes = append(notes, r[1])
			}
		}
		if !generated.MatchString(gen) {
			t.Errorf("%s: Dibuat %q, want a WIB date-time such as 24 Nov 2026 02:21 WIB", filepath.Base(path), gen)
		}
		if n := strings.Join(notes, "\n"); !strings.Contains(n, "5 Jun 2026") || regexp.MustCompile(`\d{4}-\d{2}-\d{2}`).MatchString(n) {
			t.Errorf("%s: notes name dates in ISO, or not the as-of date: %s", filepath.Base(path), n)
		}
	}
}

// TestCreditSummaryShowsLedgerFreshness: the credit summary says how fresh
// the ledger copy is (customers and the oldest copy per freshness state), and
// those figures agree with every customer's row (the query, as the CSV has
// them); the Ledger freshness sheet lists the customers that need attention.
func TestCreditSummaryShowsLedgerFreshness(t *testing.T) {
	// Two days after the second sync, so the copies have an age.
	w := testWorld(t)
	vars := map[string]string{"as_of": "2026-06-07", "tz": "Asia/Jakarta"}
	files, err := Generate(context.Background(), Options{Report: config.Report{ReportsOut: t.TempDir()}, DB: w.db, Log: quiet,
		AsOf: secondSync.AddDate(0, 0, 2), Names: []string{"credit"}, Formats: []string{"xlsx"}})
	if err != nil {
		t.Fatal(err)
	}
	f, err := excelize.OpenFile(findFile(t, files, "credit_2026-06-07.xlsx"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	get := func(sheet string) [][]string {
		rows, err := f.GetRows(sheet, excelize.Options{RawCellValue: true})
		if err != nil || len(rows) < 2 {
			t.Fatalf("sheet %s: %d rows, %v", sheet, len(rows), err)
		}
		return rows
	}
	sum := get(sheetOf(t, "credit", "Freshness summary").tab("id"))
	detail := get(sheetOf(t, "credit", "Ledger freshness").tab("id"))
	customers, oldest := 0, 0.0
	for _, r := range sum[1:] {
		if r[0] == sheetOf(t, "credit", "Freshness summary").Totals.In("id") {
			if n, _ := strconv.Atoi(r[slices.Index(sum[0], "Pelanggan")]); n != customers {
				t.Errorf("the totals row says %d customers, its rows %d", n, customers)
			}
			continue
		}
		n, _ := strconv.Atoi(r[slices.Index(sum[0], "Pelanggan")])
		customers += n
		if v, err := strconv.ParseFloat(r[slices.Index(sum[0], "Data tertua (hari)")], 64); err == nil {
			oldest = max(oldest, v)
		}
	}
	detailOldest := 0.0
	for _, r := range detail[1:] {
		if c := slices.Index(detail[0], "Umur (hari)"); c < len(r) {
			if v, err := strconv.ParseFloat(r[c], 64); err == nil {
				detailOldest = max(detailOldest, v)
			}
		}
	}
	// The sheet prints the customers that need attention; the query (and the CSV) every one.
	names, all := queryRows(t, w.db, "credit_freshness.sql", vars, "")
	state := slices.Index(names, "freshness")
	attention := 0
	for _, r := range all {
		if r[state] != "OK" {
			attention++
		}
		detailOldest = max(detailOldest, value.Number(r[slices.Index(names, "fetched_days_ago")]))
	}
	if customers != len(all) || oldest != detailOldest || oldest < 2 {
		t.Errorf("freshness summary: %d customers, oldest %v days; the query has %d customers, oldest %v", customers, oldest, len(all), detailOldest)
	}
	if printed := len(detail) - 1; printed != attention && !(attention == 0 && printed == 1) {
		t.Errorf("the freshness sheet lists %d customers, want the %d that need attention", printed, attention)
	}
	summary, _ := f.GetRows(langs["id"].w("summary"))
	if !slices.ContainsFunc(summary, func(r []string) bool {
		return slices.Contains(r, "Data tertua (hari)") // the figure's title over its column
	}) {
		t.Errorf("the credit summary does not say how fresh the ledger is: %q", summary)
	}
}

// TestSummaryLongTextsWrap: a summary value longer than its column runs on
// over the columns beside it unless it wraps, and the page is then shrunk to
// fit its width (the as-of warning printed a whole summary at a third of its
// size). With an as-of date before the history every summary has its
// warning: every value wider than its column wraps, whatever its colour.
func TestSummaryLongTextsWrap(t *testing.T) {
	w := testWorld(t)
	sh := langs["id"].w("summary")
	for path, f := range summaries(t, Options{DB: w.db, AsOf: firstSync.AddDate(0, 0, -3)}) {
		rows, err := f.GetRows(sh)
		if err != nil {
			t.Fatal(err)
		}
		warned := false
		for r, row := range rows {
			if len(row) < 2 || r < 3 {
				continue
			}
			warned = warned || row[0] == langs["id"].w("warning")
			if len([]rune(row[1])) <= summaryWidth {
				continue
			}
			cell, _ := excelize.CoordinatesToCellName(2, r+1)
			if st := cellStyle(t, f, sh, cell); st.Alignment == nil || !st.Alignment.WrapText {
				t.Errorf("%s: summary %s (%s) %q is wider than its column and does not wrap", filepath.Base(path), cell, row[0], row[1])
			}
		}
		if !warned {
			t.Errorf("%s: no as-of warning on the summary", filepath.Base(path))
		}
	}
}

// TestReproduceLineReproduces runs each summary's reproduce line (its flags as
// cmd/report reads them) and compares the workbooks cell by cell: a workbook
// made in English, in another currency or from a journal elsewhere is made
// again the same, whatever the reader's environment says.
func TestReproduceLineReproduces(t *testing.T) {
	w := testWorld(t)
	journal := filepath.Join(t.TempDir(), "elsewhere.duckdb")
	execDB(t, journal, `CREATE TABLE credit_balance_reports(account VARCHAR, customer_id VARCHAR, product_id VARCHAR,
		balance DECIMAL(20,4), reported_at TIMESTAMPTZ, job_run_id BIGINT, action_id VARCHAR)`)
	for _, o := range []Options{
		{Report: config.Report{Locale: "en", Currency: "USD"}, Names: []string{"aging"}, Vars: map[string]string{"bucket_1": "15"}},
		{Names: []string{"credit"}, Journal: journal},
	} {
		o.DB, o.Formats = w.db, []string{"xlsx"}
		files := generateAll(t, o)
		l := langs["id"]
		if o.Locale == "en" {
			l = langs["en"]
		}
		f, err := excelize.OpenFile(files[0])
		if err != nil {
			t.Fatal(err)
		}
		line := ""
		rows, _ := f.GetRows(l.w("summary"))
		for _, r := range rows {
			if len(r) > 1 && r[0] == l.w("reproduce") {
				line = r[1]
			}
		}
		f.Close()
		args := strings.Fields(line)
		if len(args) < 2 || args[0] != "report" {
			t.Fatalf("%s: reproduce line %q", filepath.Base(files[0]), line)
		}
		// The flags as cmd/report reads them; a flag this test does not know fails it.
		again := Options{DB: "", Vars: map[string]string{}, Formats: []string{"xlsx"}}
		for i := 1; i < len(args); i++ {
			a := args[i]
			if !strings.HasPrefix(a, "-") {
				again.Names = append(again.Names, a)
				continue
			}
			i++
			v := args[i]
			switch a {
			case "-db":
				again.DB = v
			case "-as-of":
				d, err := time.Parse(time.DateOnly, v)
				if err != nil {
					t.Fatal(err)
				}
				again.AsOf = d
			case "-tz":
				again.TZ = config.MustZone(v)
			case "-account":
				again.Account = v
			case "-locale":
				again.Locale = v
			case "-currency":
				again.Currency = v
			case "-journal":
				again.Journal = v
			case "-var":
				k, val, _ := strings.Cut(v, "=")
				again.Vars[k] = val
			default:
				t.Fatalf("reproduce line %q: flag %s", line, a)
			}
		}
		files2 := generateAll(t, again)
		if filepath.Base(files2[0]) != filepath.Base(files[0]) {
			t.Errorf("reproduced %s, want %s", filepath.Base(files2[0]), filepath.Base(files[0]))
			continue
		}
		a, b := workbookCells(t, files[0], l), workbookCells(t, files2[0], l)
		if !slices.Equal(a, b) {
			for i := range min(len(a), len(b)) {
				if a[i] != b[i] {
					t.Errorf("%s reproduced by %q: %s, want %s", filepath.Base(files[0]), line, b[i], a[i])
					break
				}
			}
			if len(a) != len(b) {
				t.Errorf("%s reproduced by %q: %d cells, want %d", filepath.Base(files[0]), line, len(b), len(a))
			}
		}
	}
}

// workbookCells is every cell of every sheet as "sheet!cell=text", but the
// summary's time of making.
func workbookCells(t *testing.T, path string, l *lang) []string {
	t.Helper()
	f, err := excelize.OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	for _, sh := range f.GetSheetList() {
		rows, err := f.GetRows(sh)
		if err != nil {
			t.Fatal(err)
		}
		for r, row := range rows {
			if sh == l.w("summary") && len(row) > 0 && row[0] == l.w("generated") {
				continue
			}
			for c, v := range row {
				cell, _ := excelize.CoordinatesToCellName(c+1, r+1)
				out = append(out, sh+"!"+cell+"="+v)
			}
		}
	}
	return out
}

// TestSummaryCountsReadAsNumbers: every count and difference the summary
// writes in its text (rows per sheet, rows checked, a check's difference)
// has the locale's separators, as the headline figures and the cells do:
// "2005 baris" beside "2.005" reads as a year or a different figure.
func TestSummaryCountsReadAsNumbers(t *testing.T) {
	id, en := langs["id"], langs["en"]
	for _, tc := range []struct {
		l    *lang
		c    checkResult
		want string
	}{
		{id, checkResult{label: "Periksa", diff: 1234567.5, rowsOff: 1200, rows: 5036}, "Periksa: TIDAK COCOK (selisih 1.234.567,5; 1.200/5.036 baris)"},
		{en, checkResult{label: "Check", diff: -2500, rowsOff: 3, rows: 12000}, "Check: MISMATCH (difference -2,500; 3/12,000 rows)"},
		{id, checkResult{label: "Periksa", ok: true, rows: 720}, "Periksa: OK (selisih 0; 0/720 baris)"},
	} {
		if got := tc.c.text(tc.l); got != tc.want {
			t.Errorf("%q, want %q", got, tc.want)
		}
	}
	// A warehouse with a sheet of more than 999 rows: the credit ledger, grown.
	w := testWorld(t)
	db := filepath.Join(t.TempDir(), "billsync.duckdb")
	if err := copyFile(w.db, db); err != nil {
		t.Fatal(err)
	}
	execDB(t, db, `INSERT INTO credit_ledger SELECT l.* REPLACE (l.id || '-' || t.n AS id, TIMESTAMPTZ '2026-06-02 03:00:00+00' AS created_at)
		FROM credit_ledger l, range(1, 1 + 5000 // (SELECT count(*) FROM credit_ledger)) t(n)`)
	plain, separated := regexp.MustCompile(`\d{4,}`), regexp.MustCompile(`\d\.\d{3} baris dari`)
	for path, f := range summaries(t, Options{DB: db, Names: []string{"credit"}, Formats: []string{"xlsx"}}) {
		rows, err := f.GetRows(id.w("summary"))
		if err != nil {
			t.Fatal(err)
		}
		seen := false
		for _, r := range rows {
			if len(r) < 2 || slices.Contains([]string{id.w("warehouse"), id.w("journal"), id.w("generated"), id.w("params"), id.w("reproduce"), id.w("queries"), id.w("as_of")}, r[0]) {
				continue
			}
			// Dates (1 Jun 2026) carry a year, paths what they are named.
			text := regexp.MustCompile(`\d{1,2} \p{L}{3} \d{4}|/\S+`).ReplaceAllString(r[1], "")
			if m := plain.FindString(text); m != "" {
				t.Errorf("%s: %s %q: %s without separators", filepath.Base(path), r[0], r[1], m)
			}
			seen = seen || separated.MatchString(r[1])
		}
		if !seen {
			t.Errorf("%s: no sheet of more than 999 rows on the summary: %q", filepath.Base(path), rows)
		}
	}
}

// TestCreditMismatchCountSaysWhenNothingWasCompared: a product whose reported
// balances could not be compared (none reported, or the ledger copy older than
// the report) has no count of mismatches: "0" would read as checked and fine.
// Where one balance was compared, its count says 0 of 1 compared.
func TestCreditMismatchCountSaysWhenNothingWasCompared(t *testing.T) {
	w := testWorld(t)
	vars := map[string]string{"as_of": "2026-06-06", "tz": "Asia/Jakarta"}
	names, rows := queryRows(t, w.db, "credit_balances.sql", vars, "")
	idx := func(n string) int { return slices.Index(names, n) }
	cust, prod := rows[0][idx("customer_id")].(string), rows[0][idx("product_id")].(string)
	journal := filepath.Join(t.TempDir(), "billsync-jobs.duckdb")
	at := "2026-05-31 16:00:00+00" // before the first sync's ledger read: compared
	execDB(t, journal, "ATTACH '"+w.db+"' AS wh (READ_ONLY)",
		`CREATE TABLE credit_balance_reports(account VARCHAR, customer_id VARCHAR, product_id VARCHAR,
		balance DECIMAL(20,4), reported_at TIMESTAMPTZ, job_run_id BIGINT, action_id VARCHAR)`,
		`INSERT INTO credit_balance_reports SELECT 'main', '`+cust+`', '`+prod+`', coalesce(sum(credit - debit), 0),
		TIMESTAMPTZ '`+at+`', 1, 'a1' FROM wh.credit_ledger WHERE customer_id = '`+cust+`' AND product_id = '`+prod+`'
		AND created_at <= TIMESTAMPTZ '`+at+`'`)
	for _, tc := range []struct {
		journal  string
		compared int // products with a compared balance
	}{{filepath.Join(t.TempDir(), "none.duckdb"), 0}, {journal, 1}} {
		files := generateAll(t, Options{Names: []string{"credit"}, Formats: []string{"xlsx"}, Journal: tc.journal})
		f, err := excelize.OpenFile(findFile(t, files, "credit_2026-06-05.xlsx"))
		if err != nil {
			t.Fatal(err)
		}
		sheet, _ := f.GetRows(sheetOf(t, "credit", "By product").tab("id"))
		summary, _ := f.GetRows(langs["id"].w("summary"))
		f.Close()
		col := slices.Index(sheet[0], "Pelanggan tidak cocok")
		if col < 0 {
			t.Fatalf("no mismatch column in %q", sheet[0])
		}
		compared := 0
		for _, r := range sheet[1:] {
			if r[0] == sheetOf(t, "credit", "By product").Totals.In("id") {
				break // the totals and check rows
			}
			switch r[col] {
			case "(tidak diperiksa)":
			case "0":
				compared++
			default:
				t.Errorf("mismatches %q", r[col])
			}
		}
		if compared != tc.compared {
			t.Errorf("journal %s: %d products with a mismatch count, want %d", filepath.Base(tc.journal), compared, tc.compared)
		}
		// The summary says it once, on the Reconciliation check line: 0 of the compared rows.
		want := map[int]string{0: "Tidak diperiksa: saldo dilaporkan dibandingkan", 1: "Saldo dilaporkan TIDAK COCOK: 0 dari 1 baris yang diperiksa"}[tc.compared]
		if !slices.ContainsFunc(summary, func(r []string) bool { return len(r) > 1 && strings.Contains(r[1], want) }) {
			t.Errorf("journal %s: no summary line %q: %q", filepath.Base(tc.journal), want, summary)
		}
	}
}

// TestCollectionsClosedSheetSaysItListsDeleted: the closed-unpaid sheet lists
// the items deleted upstream too, so its total is the Monthly sheet's closed
// unpaid amount plus its deleted amount. Its name says so: under the Monthly
// column's own name the two totals disagreed on the summary.
func TestCollectionsClosedSheetSaysItListsDeleted(t *testing.T) {
	w := testWorld(t)
	db := filepath.Join(t.TempDir(), "billsync.duckdb")
	if err := copyFile(w.db, db); err != nil {
		t.Fatal(err)
	}
	// An open invoice of the window deleted upstream, seen at the second sync.
	execDB(t, db, `INSERT INTO record_changes SELECT account, 'invoices', id, '_deleted', NULL, NULL,
		TIMESTAMPTZ '2026-06-05 17:00:00+00', 2 FROM invoices
		WHERE status NOT IN ('paid', 'closed') AND created_at >= TIMESTAMPTZ '2026-05-01 00:00:00+07' ORDER BY id LIMIT 1`)
	for _, loc := range []string{"id", "en"} {
		l := langs[loc]
		files := generateAll(t, Options{Report: config.Report{Locale: loc}, DB: db, Names: []string{"collections"}, Formats: []string{"xlsx"}})
		f, err := excelize.OpenFile(files[0])
		if err != nil {
			t.Fatal(err)
		}
		summary, _ := f.GetRows(l.w("summary"))
		f.Close()
		monthly, closed := sheetOf(t, "collections", "Monthly"), sheetOf(t, "collections", "Closed unpaid")
		title := func(s *Sheet, col string) string {
			for _, c := range s.Columns {
				if c.Name == col { // as the summary names it: its own words, without the sheet's
					if t := c.Summary.In(loc); t != "" {
						return t
					}
					return c.Title.In(loc)
				}
			}
			t.Fatalf("no column %s", col)
			return ""
		}
		figure := func(label string) int64 {
			for _, r := range summary {
				if len(r) > 1 && r[0] == label {
					n, err := strconv.ParseInt(regexp.MustCompile(`\D`).ReplaceAllString(r[1], ""), 10, 64)
					if err != nil && r[1] != "-" {
						t.Fatalf("%s: %q", label, r[1])
					}
					return n
				}
			}
			t.Fatalf("%s: no headline %q in %q", loc, label, summary)
			return 0
		}
		shut, gone := figure(title(monthly, "closed_unpaid_amount")), figure(title(monthly, "deleted_amount"))
		listed := figure(title(closed, "amount"))
		if gone == 0 {
			t.Fatal("no deleted amount: the fixture deleted nothing")
		}
		if listed != shut+gone {
			t.Errorf("%s: closed sheet total %d, want closed %d + deleted %d", loc, listed, shut, gone)
		}
		if word := map[string]string{"id": "dihapus", "en": "deleted"}[loc]; !strings.Contains(strings.ToLower(closed.tab(loc)), word) {
			t.Errorf("%s: sheet %q lists deleted items and does not say so", loc, closed.tab(loc))
		}
	}
}

// TestNotesNameWhatTheSheetsShow: a note explains what a reader sees, so the
// words it quotes ('belum teramati') are a column title, a sheet name or the
// text of an empty cell of that report, and a rate it defines ("Tingkat
// keberhasilan = berhasil / ...") is a column title, in each locale. Quoted
// lower-case single words are values the service or a variable takes ('paid').
func TestNotesNameWhatTheSheetsShow(t *testing.T) {
	defs, err := Definitions()
	if err != nil {
		t.Fatal(err)
	}
	quoted := regexp.MustCompile(`'([^']+)'`)
	rate := regexp.MustCompile(`^([^=:;]+?) = [^;]*/`)
	value := regexp.MustCompile(`^[a-z_]+$`)
	for _, d := range defs {
		for _, loc := range locales {
			var shown []string
			for _, s := range d.Sheets {
				shown = append(shown, strings.ToLower(s.tab(loc)))
				for _, c := range s.Columns {
					shown = append(shown, strings.ToLower(c.Title.In(loc)))
					if e := c.Empty.In(loc); e != "" {
						shown = append(shown, strings.ToLower(e))
					}
				}
			}
			for _, n := range d.Notes {
				text := n.In(loc)
				for _, m := range quoted.FindAllStringSubmatch(text, -1) {
					term := strings.ToLower(m[1])
					if value.MatchString(m[1]) || strings.HasPrefix(m[1], "s ") { // a value; an English possessive
						continue
					}
					if !slices.ContainsFunc(shown, func(s string) bool { return strings.HasPrefix(s, term) }) {
						t.Errorf("%s (%s): the note quotes '%s', which no title or empty cell shows", d.Name, loc, m[1])
					}
				}
				if m := rate.FindStringSubmatch(text); m != nil && !slices.Contains(shown, strings.ToLower(m[1])) {
					t.Errorf("%s (%s): the note defines %q, which no column is called", d.Name, loc, m[1])
				}
			}
		}
	}
}

// TestChartMonthsShowTheirYear: a chart of months labels each with its year
// marked as one: "Des 25" reads as the 25th of December, "Des '25" cannot.
func TestChartMonthsShowTheirYear(t *testing.T) {
	files := generateAll(t, Options{Names: []string{"collections"}, Formats: []string{"xlsx"}})
	formats := regexp.MustCompile(`formatCode="([^"]*)"`)
	found := false
	for _, b := range xlsxParts(t, files[0], "xl/charts/chart") {
		for _, m := range formats.FindAllStringSubmatch(string(b), -1) {
			code := html.UnescapeString(m[1])
			if !strings.Contains(code, "mmm") {
				continue
			}
			found = true
			if !strings.Contains(code, "yyyy") && !strings.Contains(code, `"'"yy`) {
				t.Errorf("month axis format %q: a two-digit year reads as a day", code)
			}
		}
	}
	if !found {
		t.Fatal("no month axis in the collections chart")
	}
}

// TestCodeColumnsShowNames: a column of the service's or billsync's codes
// shows each by its name in the locale; a raw code (payment_request_details,
// CREDIT_USAGE) in an Indonesian workbook is a word the reader cannot read.
func TestCodeColumnsShowNames(t *testing.T) {
	w := testWorld(t)
	db := filepath.Join(t.TempDir(), "billsync.duckdb")
	if err := copyFile(w.db, db); err != nil {
		t.Fatal(err)
	}
	// The detail reads a sync with details makes: their streams are on the sync health sheet.
	execDB(t, db, `INSERT INTO sync_streams (run_id, stream, entity, started_at, finished_at, pages, records, requests, retries, complete)
		SELECT 1, e, e, TIMESTAMPTZ '2026-05-31 17:00:00+00', TIMESTAMPTZ '2026-05-31 17:01:00+00', 1, 1, 1, 0, true
		FROM (VALUES ('payment_request_details'), ('product_details')) v(e)`)
	files := generateAll(t, Options{DB: db, Formats: []string{"xlsx"}})
	defs, err := Definitions()
	if err != nil {
		t.Fatal(err)
	}
	raw := regexp.MustCompile(`^([a-z]+(_[a-z]+)+|[A-Z]+(_[A-Z]+)+)$`)
	seen := 0
	for _, d := range defs {
		var path string
		for _, p := range files {
			if strings.HasPrefix(filepath.Base(p), d.Name+"_") && strings.HasSuffix(p, ".xlsx") {
				path = p
			}
		}
		f, err := excelize.OpenFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range d.Sheets {
			rows, err := f.GetRows(s.tab("id"))
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range s.Columns {
				if !c.Codes || len(rows) == 0 {
					continue
				}
				j := slices.Index(rows[0], c.Title.In("id"))
				for _, r := range rows[1:] {
					if j < 0 || j >= len(r) {
						continue
					}
					seen++
					if raw.MatchString(r[j]) {
						t.Errorf("%s, %s, %s: raw code %q", d.Name, s.tab("id"), c.Title.In("id"), r[j])
					}
				}
			}
		}
		f.Close()
	}
	if seen < 100 {
		t.Fatalf("only %d code cells read", seen)
	}
}

// TestEmptySheetSaysSo: a data sheet without rows says "(tidak ada baris)"
// under its header, inside its print area: a printed page of a header alone
// reads as rows that failed to print.
func TestEmptySheetSaysSo(t *testing.T) {
	files := generateAll(t, Options{Names: []string{"data-quality"}, Formats: []string{"xlsx"}})
	f, err := excelize.OpenFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sh := sheetOf(t, "data-quality", "Conflicting duplicates").tab("id")
	rows, err := f.GetRows(sh)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 || len(rows[1]) == 0 || rows[1][0] != langs["id"].w("none_rows") {
		t.Fatalf("sheet %s: rows %q, want the header and %q", sh, rows, langs["id"].w("none_rows"))
	}
	for _, n := range f.GetDefinedName() {
		if n.Name == "_xlnm.Print_Area" && n.Scope == sh && !strings.HasSuffix(n.RefersTo, "$2") {
			t.Errorf("print area %s leaves the empty state out", n.RefersTo)
		}
	}
}

// TestWebhookNextAttemptSaysNone: a delivery with no next attempt says so; a
// blank cell beside a failure could be an attempt the report failed to show.
func TestWebhookNextAttemptSaysNone(t *testing.T) {
	files := generateAll(t, Options{Names: []string{"webhooks"}, Formats: []string{"xlsx"}})
	f, err := excelize.OpenFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, name := range []string{"By event and destination", "Needs attention"} {
		rows, err := f.GetRows(sheetOf(t, "webhooks", name).tab("id"))
		if err != nil || len(rows) < 2 {
			t.Fatalf("%s: %d rows, %v", name, len(rows), err)
		}
		j := slices.Index(rows[0], "Percobaan berikut")
		for i, r := range rows[1:] {
			if j >= 0 && len(r) > 0 && r[0] != "Total" && (j >= len(r) || r[j] == "") {
				t.Errorf("%s row %d: next attempt blank", name, i+2)
			}
		}
	}
}

// TestHeadlineLinesTellRowsApart: two products of the same name (the service
// allows it) are two headline lines a reader must tell apart: each label is
// unique, the product's ID beginning where names repeat.
func TestHeadlineLinesTellRowsApart(t *testing.T) {
	for path, f := range summaries(t, Options{Names: []string{"credit"}, Formats: []string{"xlsx"}}) {
		rows, err := f.GetRows(langs["id"].w("summary"))
		if err != nil {
			t.Fatal(err)
		}
		seen, in := map[string]bool{}, false
		n := 0
		for _, r := range rows {
			if len(r) == 0 {
				continue
			}
			switch {
			case r[0] == langs["id"].w("headline"):
				in = true
				continue
			case r[0] == langs["id"].w("checks") || r[0] == langs["id"].w("notes"):
				in = false
			case len(r) == 1: // a headline table's heading
				continue
			}
			if !in {
				continue
			}
			n++
			if seen[r[0]] {
				t.Errorf("%s: headline label %q twice", filepath.Base(path), r[0])
			}
			seen[r[0]] = true
		}
		if n < 3 {
			t.Fatalf("%s: %d headline lines", filepath.Base(path), n)
		}
	}
}

// TestHeadlineCutSaysWhereTheRestIs: a headline sheet of more rows than the
// summary shows ends its lines with how many more there are and on which
// sheet; "… 135 baris" alone read as a count of something.
func TestHeadlineCutSaysWhereTheRestIs(t *testing.T) {
	w := testWorld(t)
	db := filepath.Join(t.TempDir(), "billsync.duckdb")
	if err := copyFile(w.db, db); err != nil {
		t.Fatal(err)
	}
	execDB(t, db, `INSERT INTO credit_ledger SELECT l.* REPLACE ('p-' || t.n AS product_id, l.id || '-' || t.n AS id)
		FROM (SELECT * FROM credit_ledger ORDER BY id LIMIT 1) l, range(40) t(n)`)
	for path, f := range summaries(t, Options{DB: db, Names: []string{"credit"}, Formats: []string{"xlsx"}}) {
		rows, _ := f.GetRows(langs["id"].w("summary"))
		found := false
		for _, r := range rows {
			if len(r) > 1 && r[0] == "…" {
				found = true
				if want := "baris lagi di lembar " + sheetOf(t, "credit", "By product").tab("id"); !strings.Contains(r[1], want) {
					t.Errorf("%s: %q, want it to say %q", filepath.Base(path), r[1], want)
				}
			}
		}
		if !found {
			t.Errorf("%s: no cut headline", filepath.Base(path))
		}
	}
}

// TestWalletNotInLedgerYetSaysSo: a product topped up by a job (a reported balance in the
// journal) whose ledger copy has no entry for it yet has no wallet to show; the sheets and the
// headline say why instead of a blank, which read as unknown or as a bug.
func TestWalletNotInLedgerYetSaysSo(t *testing.T) {
	w := testWorld(t)
	journal := filepath.Join(t.TempDir(), "billsync-jobs.duckdb")
	// A customer and a product with no ledger entry between them.
	execDB(t, journal, "ATTACH '"+w.db+"' AS wh (READ_ONLY)",
		`CREATE TABLE credit_balance_reports(account VARCHAR, customer_id VARCHAR, product_id VARCHAR,
			balance DECIMAL(20,4), reported_at TIMESTAMPTZ, job_run_id BIGINT, action_id VARCHAR)`,
		`INSERT INTO credit_balance_reports
		 SELECT 'main', c.id, p.id, 5000, TIMESTAMPTZ '2026-06-04 10:00:00+07', 1, 'a1'
		 FROM wh.customers c, wh.products p
		 WHERE NOT EXISTS (SELECT 1 FROM wh.credit_ledger l WHERE l.customer_id = c.id AND l.product_id = p.id)
		 ORDER BY c.id, p.id LIMIT 1`)
	for _, locale := range []string{"id", "en"} {
		l := langs[locale]
		want := map[string]string{"id": "(belum ada mutasinya)", "en": "(not in the ledger yet)"}[locale]
		files := generateAll(t, Options{Report: config.Report{Locale: locale}, Names: []string{"credit"}, Journal: journal, Formats: []string{"xlsx"}})
		f, err := excelize.OpenFile(files[0])
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{"By product", "Balances"} {
			s := sheetOf(t, "credit", name)
			rows, err := f.GetRows(s.tab(locale))
			if err != nil {
				t.Fatal(err)
			}
			wallet := slices.Index(rows[0], s.column("wallet_type").Title.In(locale))
			n := 0
			for _, r := range rows[1:] {
				if len(r) < 3 || (s.Check != nil && strings.HasPrefix(r[0], s.Check.Label.In(locale))) ||
					(len(s.Totals) > 0 && r[0] == s.Totals.In(locale)) {
					continue // the check and totals rows
				}
				switch at(r, wallet) {
				case "":
					t.Errorf("%s %s: a blank wallet: %q", locale, name, r)
				case want:
					n++
				}
			}
			if n != 1 {
				t.Errorf("%s %s: %d rows say %q, want the one topped up", locale, name, n, want)
			}
		}
		summary, err := f.GetRows(l.w("summary"))
		if err != nil {
			t.Fatal(err)
		}
		if !slices.ContainsFunc(summary, func(r []string) bool { return len(r) > 1 && strings.Contains(r[0], " · "+want) }) {
			t.Errorf("%s: no headline line says %q", locale, want)
		}
		f.Close()
	}
}

// TestLongSummaryBreaksBeforeSheets: a summary too long for one printed page (credit's headline
// lines per product, at the summary's readable size) breaks before its notes, so the headline
// figures and checks print together and the notes, sheets and "about this report" start the next
// page, rather than a few lines of settings running onto it; a summary that fits has no break, nor
// has one whose headline alone is longer than a page (it runs on).
func TestLongSummaryBreaksBeforeSheets(t *testing.T) {
	w := testWorld(t)
	db := filepath.Join(t.TempDir(), "billsync.duckdb")
	if err := copyFile(w.db, db); err != nil {
		t.Fatal(err)
	}
	// Each product's ledger spread over five products of short names: a headline longer than a page.
	execDB(t, db, `UPDATE credit_ledger SET product_id = product_id || '-' || (hash(id) % 5)::VARCHAR`,
		`INSERT INTO products (account, id, name) SELECT DISTINCT account, product_id, 'Produk ' || right(product_id, 6) FROM credit_ledger`)
	for _, tc := range []struct {
		report, db string
		break_     bool
	}{{"webhooks", w.db, false}, {"credit", w.db, true}, {"credit", db, false}} {
		files := generateAll(t, Options{DB: tc.db, Names: []string{tc.report}, Formats: []string{"xlsx"}})
		f, err := excelize.OpenFile(files[0])
		if err != nil {
			t.Fatal(err)
		}
		rows, err := f.GetRows(langs["id"].w("summary"))
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		sheets := slices.IndexFunc(rows, func(r []string) bool { return len(r) == 1 && r[0] == langs["id"].w("notes") }) + 1
		brk := summaryBreaks(t, files[0])
		switch {
		case tc.break_ && !slices.Equal(brk, []int{sheets}):
			t.Errorf("%s: %d summary rows: page breaks before rows %v, want before %d (Notes)", tc.report, len(rows), brk, sheets)
		case !tc.break_ && len(brk) > 0:
			t.Errorf("%s: %d summary rows: page breaks before rows %v, want none", tc.report, len(rows), brk)
		}
	}
}

// summaryBreaks are the rows a manual page break of the workbook's summary comes before.
func summaryBreaks(t *testing.T, path string) []int {
	t.Helper()
	b, ok := xlsxParts(t, path, "xl/worksheets/sheet1.xml")["xl/worksheets/sheet1.xml"]
	if !ok {
		t.Fatal("no summary sheet")
	}
	var out []int
	for _, m := range regexp.MustCompile(`<rowBreaks[^>]*>(.*?)</rowBreaks>`).FindAllSubmatch(b, -1) {
		for _, id := range regexp.MustCompile(`<brk id="(\d+)"`).FindAllSubmatch(m[1], -1) {
			n, _ := strconv.Atoi(string(id[1]))
			out = append(out, n+1)
		}
	}
	return out
}

// TestSummaryHeadlineBeforeProvenance: a summary says what the report found first (the
// headline figures, then the checks) and how it was made last, under "Tentang laporan ini":
// the warehouse path, parameters, the command to make it again and the queries' hashes come
// after every headline and check line, and no headline label repeats a sheet's name before
// a figure only one sheet has.
func TestSummaryHeadlineBeforeProvenance(t *testing.T) {
	for _, locale := range []string{"id", "en"} {
		l := langs[locale]
		for path, f := range summaries(t, Options{Report: config.Report{Locale: locale}}) {
			rows, err := f.GetRows(l.w("summary"))
			if err != nil {
				t.Fatal(err)
			}
			find := func(label string) int {
				return slices.IndexFunc(rows, func(r []string) bool { return len(r) > 0 && r[0] == label })
			}
			headline, checks, about := find(l.w("headline")), find(l.w("checks")), find(l.w("about"))
			if about < 0 {
				t.Errorf("%s: no %q", path, l.w("about"))
				continue
			}
			if headline < 0 { // a report of lists only (data-quality): nothing to put first
				headline = about
			}
			if headline > about || checks > about {
				t.Errorf("%s: headline (row %d) or checks (row %d) after %q (row %d)", path, headline+1, checks+1, l.w("about"), about+1)
			}
			for _, key := range []string{"warehouse", "params", "reproduce", "queries", "runs", "account", "generated"} {
				if r := find(l.w(key)); r >= 0 && r < about {
					t.Errorf("%s: %q (row %d) before %q (row %d)", path, l.w(key), r+1, l.w("about"), about+1)
				}
			}
			if strings.HasPrefix(filepath.Base(path), "aging_") && locale == "id" {
				// the words a controller uses, not "Per pelanggan: Item"
				for _, want := range []string{"Jumlah pelanggan", "Item terbuka", "Total terutang"} {
					if r := find(want); r < headline || r > about {
						t.Errorf("%s: headline %q at row %d, not between rows %d and %d", path, want, r+1, headline+1, about+1)
					}
				}
			}
			if r := find(l.w("as_of")); r < 0 || r > headline {
				t.Errorf("%s: the as-of date (row %d) is not above the headline (row %d)", path, r+1, headline+1)
			}
			// Labels of the headline section: "By customer: Items" said the sheet's name needlessly.
			end := about
			if checks > headline {
				end = min(checks, about)
			}
			for _, r := range rows[min(headline+1, end):end] {
				if len(r) == 0 || r[0] == "" {
					break
				}
				if strings.HasPrefix(r[0], "Per pelanggan: ") || strings.HasPrefix(r[0], "By customer: ") || strings.HasPrefix(r[0], "Bulanan: ") {
					t.Errorf("%s: headline label %q repeats its sheet's name", path, r[0])
				}
			}
		}
	}
}

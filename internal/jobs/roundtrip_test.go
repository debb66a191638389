package jobs_test

import (
	"context"
	"database/sql"
	"encoding/csv"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/billsync/billsync/internal/config"
	"github.com/billsync/billsync/internal/jobs"
	"github.com/billsync/billsync/internal/report"
	"github.com/xuri/excelize/v2"
)

// dqFiles renders the data-quality report from the synced warehouse: its workbook and its e-mail sheet as CSV.
func dqFiles(e *env) (book, sheetCSV string) {
	e.t.Helper()
	files, err := report.Generate(context.Background(), report.Options{
		Report: config.Report{ReportsOut: filepath.Join(e.dir, "reports")}, DB: e.wh, Journal: e.journal,
		Formats: []string{"xlsx", "csv"}, AsOf: testNow, Account: "test",
		Names: []string{"data-quality"}})
	if err != nil {
		e.t.Fatal(err)
	}
	for _, f := range files {
		switch {
		case strings.HasSuffix(f, ".xlsx"):
			book = f
		case strings.HasSuffix(f, ".csv") && strings.Contains(filepath.Base(f), "e-mail"):
			sheetCSV = f
		}
	}
	if book == "" || sheetCSV == "" {
		e.t.Fatalf("the data-quality report has no workbook or e-mail sheet: %v", files)
	}
	return book, sheetCSV
}

// TestDataQualityEmailSheetRoundTrip is the documented round trip, end to end: sync (the shared warehouse),
// the data-quality report, its e-mail sheet taken as it stands (every row and column kept, the workbook with
// all its sheets, or the sheet's CSV), toEmail filled in place for the customers to fix, plan, apply.
func TestDataQualityEmailSheetRoundTrip(t *testing.T) {
	e := newEnv(t)
	book, sheetCSV := dqFiles(e)

	// Untouched, nothing is to be changed: one clear sentence, not a problem per row.
	for _, in := range []string{book, sheetCSV} {
		_, err := e.plan(jobs.EmailFix, in)
		if ie := inputErrors(t, err); len(ie) != 1 || !strings.Contains(err.Error(), "every toEmail is blank") {
			t.Errorf("%s as it stands: %v", filepath.Base(in), err)
		}
	}

	// The person fills toEmail of the malformed address in the workbook, as in Excel, and saves it.
	f, err := excelize.OpenFile(book)
	if err != nil {
		t.Fatal(err)
	}
	// The sheet's tab is in the report's language; the job takes the first sheet with its columns.
	var sheet string
	var rows [][]string
	for _, name := range f.GetSheetList() {
		r, err := f.GetRows(name)
		if err != nil {
			t.Fatal(err)
		}
		if len(r) > 0 && slices.Contains(r[0], "fromEmail") {
			sheet, rows = name, r
			break
		}
	}
	if sheet == "" {
		t.Fatalf("no sheet of %s has a fromEmail column: %v", book, f.GetSheetList())
	}
	// Columns by name, as the job matches them. Besides fromEmail and toEmail, which the job reads, the
	// headers are in the report's language (id by default): "ID pelanggan", "Masalah".
	key := func(h string) string { return strings.ToLower(strings.NewReplacer(" ", "", "_", "").Replace(h)) }
	col := map[string]int{}
	for i, h := range rows[0] {
		col[key(h)] = i
	}
	fixed := map[string]string{} // customer id -> new e-mail
	var blank int
	for r, row := range rows[1:] {
		if strings.Contains(row[col["masalah"]], "format salah") && !strings.Contains(row[col["masalah"]], "dipakai bersama") {
			cell, _ := excelize.CoordinatesToCellName(col["toemail"]+1, r+2)
			to := "fixed." + row[col["idpelanggan"]][:8] + "@example.com"
			f.SetCellValue(sheet, cell, to)
			fixed[row[col["idpelanggan"]]] = to
		} else {
			blank++
		}
	}
	if len(fixed) == 0 || blank == 0 {
		t.Fatalf("the sheet has %d malformed and %d other rows; the test needs both", len(fixed), blank)
	}
	if err := f.Save(); err != nil {
		t.Fatal(err)
	}
	f.Close()

	// The same edit in the sheet's CSV, through a spreadsheet-like CSV round trip.
	recs := readCSV(t, sheetCSV)
	col = map[string]int{}
	for i, h := range recs[0] {
		col[key(h)] = i
	}
	for _, rec := range recs[1:] {
		if to, ok := fixed[rec[col["idpelanggan"]]]; ok {
			rec[col["toemail"]] = strings.Replace(to, "fixed.", "csv.", 1)
		}
	}
	cf, _ := os.Create(sheetCSV)
	csv.NewWriter(cf).WriteAll(recs)
	cf.Close()

	reqs := e.requests()
	p := e.mustPlan(jobs.EmailFix, book)
	if e.requests() != reqs {
		t.Error("planning sent requests")
	}
	if len(p.Actions) != len(fixed) || len(p.SkippedLines) != blank {
		t.Fatalf("plan of the workbook: %d actions, %d left out; want %d and %d", len(p.Actions), len(p.SkippedLines), len(fixed), blank)
	}
	if pc := e.mustPlan(jobs.EmailFix, sheetCSV); len(pc.Actions) != len(fixed) || len(pc.SkippedLines) != blank {
		t.Errorf("plan of the CSV sheet: %d actions, %d left out", len(pc.Actions), len(pc.SkippedLines))
	}
	res := e.apply(p.ID)
	if res.Status != jobs.RunCompleted {
		t.Fatalf("apply: %+v", res)
	}
	now := map[string]string{}
	for _, c := range records[simCustomer](e, "customers") {
		now[c.ID] = c.Email
	}
	for id, to := range fixed {
		if now[id] != to {
			t.Errorf("customer %s has %q, want %q", id, now[id], to)
		}
	}
	if n := e.posts("/hl/v1/customer/update"); n != len(fixed) {
		t.Errorf("%d e-mail updates, want %d: rows left blank are left alone", n, len(fixed))
	}
}

// TestFormulaLikeEmailsReadBack: a workbook shows formula-like text as it is, marked as text by
// its cell style (no apostrophe in the text), and a CSV with the apostrophe; either, read back as
// a job's input, gives the e-mail exactly as the warehouse has it, so the plan finds the customer.
func TestFormulaLikeEmailsReadBack(t *testing.T) {
	e := newEnv(t)
	wh := filepath.Join(e.dir, "warehouse.duckdb")
	b, err := os.ReadFile(e.wh)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(wh, b, 0o644); err != nil {
		t.Fatal(err)
	}
	e.wh = wh
	emails := []string{"-budi @example.com", "=ani @example.com", "@citra @example.com", "+dewi @example.com"}
	db, err := sql.Open("duckdb", wh)
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]string{} // e-mail -> customer
	rows, err := db.Query(`SELECT id FROM customers WHERE account = 'test' AND deleted_upstream_at IS NULL ORDER BY id LIMIT 4`)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; rows.Next(); i++ {
		var id string
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		ids[emails[i]] = id
	}
	rows.Close()
	for email, id := range ids {
		if _, err := db.Exec(`UPDATE customers SET email = ? WHERE account = 'test' AND id = ?`, email, id); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	if len(ids) != len(emails) {
		t.Fatalf("%d customers", len(ids))
	}
	book, sheetCSV := dqFiles(e)

	// Each person's edit: a new address for the four customers, in the workbook and in the CSV.
	to := func(email string) string { return "fixed." + ids[email][:8] + "@example.com" }
	f, err := excelize.OpenFile(book)
	if err != nil {
		t.Fatal(err)
	}
	sheet := f.GetSheetList()[1]
	grid, err := f.GetRows(sheet)
	if err != nil {
		t.Fatal(err)
	}
	from, toCol := slices.Index(grid[0], "fromEmail"), slices.Index(grid[0], "toEmail")
	seen := 0
	for r, row := range grid[1:] {
		if _, ok := ids[row[from]]; ok {
			seen++
			cell, _ := excelize.CoordinatesToCellName(toCol+1, r+2)
			f.SetCellValue(sheet, cell, to(row[from]))
		} else if strings.Contains(row[from], " @example.com") {
			t.Errorf("workbook shows %q, not the e-mail as it is", row[from])
		}
	}
	if seen != len(emails) {
		t.Fatalf("the workbook's %s lists %d of the %d e-mails as they are", sheet, seen, len(emails))
	}
	if err := f.Save(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	recs := readCSV(t, sheetCSV)
	recs[0][0] = strings.TrimPrefix(recs[0][0], "\ufeff") // the byte-order mark
	from, toCol = slices.Index(recs[0], "fromEmail"), slices.Index(recs[0], "toEmail")
	for _, rec := range recs[1:] {
		if _, ok := ids[strings.TrimPrefix(rec[from], "'")]; ok {
			if !strings.HasPrefix(rec[from], "'") {
				t.Errorf("CSV has %q without the apostrophe", rec[from])
			}
			rec[toCol] = to(rec[from][1:])
		}
	}
	cf, _ := os.Create(sheetCSV)
	csv.NewWriter(cf).WriteAll(recs)
	cf.Close()

	for _, in := range []string{book, sheetCSV} {
		p := e.mustPlan(jobs.EmailFix, in)
		got := map[string]bool{}
		for _, a := range p.Actions {
			if id, ok := ids[a.Request["fromEmail"]]; ok {
				got[a.Request["fromEmail"]] = true
				if a.Current["customerId"] != id || a.Request["toEmail"] != to(a.Request["fromEmail"]) {
					t.Errorf("%s: %q planned for %s → %q, want %s → %q", filepath.Base(in), a.Request["fromEmail"],
						a.Current["customerId"], a.Request["toEmail"], id, to(a.Request["fromEmail"]))
				}
			}
		}
		if len(got) != len(emails) {
			t.Errorf("%s: the plan has %d of the %d e-mails as the warehouse has them: %v", filepath.Base(in), len(got), len(emails), got)
		}
	}
}

// readCSV reads a CSV file whole.
func readCSV(t *testing.T, path string) [][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return recs
}

package jobs_test

import (
	"bytes"
	"encoding/csv"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/billsync/billsync/internal/jobs"
	"github.com/billsync/billsync/internal/sheetfmt"
	"github.com/xuri/excelize/v2"
)

// reviewPlan plans three top-ups over two products, amounts a reviewer reads grouped.
func reviewPlan(e *env) (*jobs.Plan, string) {
	cs := e.customers(3)
	p1 := e.product(creditUsage)
	p2 := e.product(func(p simProduct) bool { return creditUsage(p) && p.ID != p1.ID })
	in := e.file("topup.csv", "customerId,productId,amount", cs[0].ID+","+p1.ID+",150000", cs[1].ID+","+p1.ID+",1250000",
		cs[2].ID+","+p2.ID+",7500")
	return e.mustPlan(jobs.CreditTopup, in, func(o *jobs.PlanOptions) { o.Location = jakarta(e.t) }), in
}

// sheetRows is every row of a sheet, raw (numbers unformatted).
func sheetRows(t *testing.T, f *excelize.File, sheet string) [][]string {
	t.Helper()
	rows, err := f.GetRows(sheet, excelize.Options{RawCellValue: true})
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// numberCell says whether a cell holds a number (not text) and its number format.
func numberCell(t *testing.T, f *excelize.File, sheet, cell string) (bool, string) {
	t.Helper()
	typ, err := f.GetCellType(sheet, cell)
	if err != nil {
		t.Fatal(err)
	}
	v, _ := f.GetCellValue(sheet, cell, excelize.Options{RawCellValue: true})
	_, perr := strconv.ParseFloat(v, 64)
	isNum := (typ == excelize.CellTypeNumber || typ == excelize.CellTypeUnset) && perr == nil
	id, _ := f.GetCellStyle(sheet, cell)
	st, err := f.GetStyle(id)
	if err != nil {
		t.Fatal(err)
	}
	format := ""
	if st.CustomNumFmt != nil {
		format = *st.CustomNumFmt
	}
	return isNum, format
}

func col(t *testing.T, header []string, title string) int {
	t.Helper()
	for i, h := range header {
		if h == title {
			return i
		}
	}
	t.Fatalf("no column %q in %q", title, header)
	return -1
}

// TestPlanAndResultWorkbooks opens the plan and result workbooks as a reviewer's spreadsheet does: amounts
// are numbers with the credit format (not text, not rupiah), headers in Indonesian or English, the summary
// sheet has the total per product and overall, and the plan is printed like the reports.
func TestPlanAndResultWorkbooks(t *testing.T) {
	e := newEnv(t)
	plan, _ := reviewPlan(e)
	res := e.apply(plan.ID)
	for _, tc := range []struct {
		locale                                    string
		summary, planSheet, resultSheet, rowTitle string
		total, product, balance                   string
	}{
		{"id", "Ringkasan", "Rencana", "Hasil", "Baris", "Total", "Produk", "Saldo dilaporkan"},
		{"en", "Summary", "Plan", "Result", "Row", "Total", "Product", "Reported balance"},
	} {
		o := jobs.FileOptions{Locale: tc.locale, Location: jakarta(t)}
		path := filepath.Join(e.dir, "plan-"+tc.locale+".xlsx")
		if err := jobs.WriteTableFile(path, jobs.PlanTable(plan, o), o); err != nil {
			t.Fatal(err)
		}
		f, err := excelize.OpenFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if got := f.GetSheetList(); len(got) != 2 || got[0] != tc.summary || got[1] != tc.planSheet {
			t.Fatalf("%s: sheets %q", tc.locale, got)
		}
		rows := sheetRows(t, f, tc.planSheet)
		amount := col(t, rows[0], "amount")
		if rows[0][0] != tc.rowTitle || len(rows) != 4 {
			t.Errorf("%s: header %q, %d rows", tc.locale, rows[0], len(rows))
		}
		for r := 2; r <= 4; r++ {
			cell, _ := excelize.CoordinatesToCellName(amount+1, r)
			isNum, format := numberCell(t, f, tc.planSheet, cell)
			if !isNum || !strings.Contains(format, "#,##0") || strings.Contains(format, "Rp") {
				t.Errorf("%s: %s is a number %v with format %q; want a number in credit units", tc.locale, cell, isNum, format)
			}
		}
		if v, _ := f.GetCellValue(tc.planSheet, "A2"); v != "1" {
			t.Errorf("%s: A2 = %q", tc.locale, v)
		}
		// Printed like the reports: landscape, at a scale that keeps 11 pt text at 8 pt or more (never
		// fit to width, which shrinks a wide sheet below it), the header row on every page, a footer
		// (TestJobFilesPrinted measures the pages).
		layout, _ := f.GetPageLayout(tc.planSheet)
		if layout.Orientation == nil || *layout.Orientation != "landscape" || layout.AdjustTo == nil ||
			*layout.AdjustTo < sheetfmt.MinScale || layout.FitToWidth != nil && *layout.FitToWidth > 0 {
			t.Errorf("%s: page layout %+v", tc.locale, layout)
		}
		names := f.GetDefinedName()
		titles := false
		for _, n := range names {
			titles = titles || n.Name == "_xlnm.Print_Titles" && n.Scope == tc.planSheet && strings.HasSuffix(n.RefersTo, "!$1:$1")
		}
		hf, _ := f.GetHeaderFooter(tc.planSheet)
		if !titles || hf == nil || !strings.Contains(hf.OddFooter, "&P") {
			t.Errorf("%s: print titles %v, footer %+v", tc.locale, titles, hf)
		}
		// The summary sheet: a row per product, then the total.
		sum := sheetRows(t, f, tc.summary)
		var head []string
		var products, totals [][]string
		for i, r := range sum {
			if len(r) > 0 && r[0] == tc.product {
				head = r
				for _, pr := range sum[i+1:] {
					if pr[0] == tc.total {
						totals = append(totals, pr)
						break
					}
					products = append(products, pr)
				}
			}
		}
		if head == nil || len(products) != 2 || len(totals) != 1 {
			t.Fatalf("%s: summary sheet %q", tc.locale, sum)
		}
		if got := totals[0][1:4]; got[0] != "3" || got[2] != "1407500" {
			t.Errorf("%s: totals row %q, want 3 rows and 1407500 credit", tc.locale, totals[0])
		}
		for _, pr := range products {
			if pr[3] != "1400000" && pr[3] != "7500" {
				t.Errorf("%s: product row %q", tc.locale, pr)
			}
		}
		totalRow := len(sum)
		isNum, format := numberCell(t, f, tc.summary, "D"+strconv.Itoa(totalRow))
		if !isNum || !strings.Contains(format, "#,##0") {
			t.Errorf("%s: summary total D%d: number %v format %q", tc.locale, totalRow, isNum, format)
		}
		f.Close()

		rpath := filepath.Join(e.dir, "result-"+tc.locale+".xlsx")
		if err := jobs.WriteTableFile(rpath, jobs.ResultTable(res.Plan, nil, o), o); err != nil {
			t.Fatal(err)
		}
		rf, err := excelize.OpenFile(rpath)
		if err != nil {
			t.Fatal(err)
		}
		rrows := sheetRows(t, rf, tc.resultSheet)
		bal := col(t, rrows[0], tc.balance)
		cell, _ := excelize.CoordinatesToCellName(bal+1, 2)
		if isNum, format := numberCell(t, rf, tc.resultSheet, cell); !isNum || strings.Contains(format, "Rp") || rrows[1][bal] == "" {
			t.Errorf("%s: result balance %s = %q: number %v format %q", tc.locale, cell, rrows[1][bal], isNum, format)
		}
		rf.Close()
	}
}

// TestPlanCSVHasBOMAndPlansAgain: the plan and result CSVs start with the UTF-8 byte-order mark (Indonesian
// Excel reads them right), read back as written, and the plan file, CSV or workbook, planned again as a
// job's input is the same plan.
func TestPlanCSVHasBOMAndPlansAgain(t *testing.T) {
	e := newEnv(t)
	plan, _ := reviewPlan(e)
	o := jobs.FileOptions{Location: jakarta(t)}
	table := jobs.PlanTable(plan, o)
	csvPath := filepath.Join(e.dir, "plan.csv")
	xlsxPath := filepath.Join(e.dir, "plan.xlsx")
	for _, p := range []string{csvPath, xlsxPath} {
		if err := jobs.WriteTableFile(p, table, o); err != nil {
			t.Fatal(err)
		}
	}
	b, _ := os.ReadFile(csvPath)
	if !bytes.HasPrefix(b, []byte("\xef\xbb\xbfBaris,")) {
		t.Fatalf("the plan CSV starts %q", b[:min(len(b), 12)])
	}
	recs, err := csv.NewReader(bytes.NewReader(bytes.TrimPrefix(b, []byte("\xef\xbb\xbf")))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != len(table.Rows)+1 || recs[0][0] != "Baris" || recs[2][col(t, recs[0], "amount")] != "1250000" {
		t.Errorf("read back %q", recs)
	}
	for i, c := range table.Columns {
		if recs[0][i] != c.Title {
			t.Errorf("header %d = %q, want %q", i, recs[0][i], c.Title)
		}
	}
	for _, p := range []string{csvPath, xlsxPath} {
		again := e.mustPlan(jobs.CreditTopup, p)
		if again.ID != plan.ID || !again.Existing {
			t.Errorf("%s planned again: plan %s (existing %v), want %s", filepath.Base(p), again.ID, again.Existing, plan.ID)
		}
	}
	res := e.apply(plan.ID)
	rpath := filepath.Join(e.dir, "result.csv")
	if err := jobs.WriteTableFile(rpath, jobs.ResultTable(res.Plan, nil, o), o); err != nil {
		t.Fatal(err)
	}
	if rb, _ := os.ReadFile(rpath); !bytes.HasPrefix(rb, []byte("\xef\xbb\xbf")) || !bytes.Contains(rb, []byte("berhasil")) {
		t.Errorf("result CSV: %q", rb[:min(len(rb), 80)])
	}
}

// syncStampRe is the warehouse's sync time, which the shared warehouse takes from the clock.
var syncStampRe = regexp.MustCompile(`synced \d{4}-\d\d-\d\d \d\d:\d\d WIB`)

// TestTerminalGolden pins what a person reads on the terminal: amounts grouped the Indonesian way, every
// time in WIB, the total per product, the run's number within its plan.
func TestTerminalGolden(t *testing.T) {
	e := newEnv(t)
	plan, _ := reviewPlan(e)
	o := jobs.FileOptions{Location: jakarta(t)}
	var b bytes.Buffer
	jobs.PrintPlan(&b, plan, 0, o)
	jobs.PrintSummary(&b, plan, o)
	res := e.apply(plan.ID, func(a *jobs.ApplyOptions) { a.Max = 2 })
	jobs.PrintResult(&b, res, o)
	jobs.PrintSummary(&b, res.Plan, o)
	res = e.apply(plan.ID)
	jobs.PrintResult(&b, res, o)
	res = e.apply(plan.ID)
	jobs.PrintResult(&b, res, o)
	got := syncStampRe.ReplaceAllString(strings.ReplaceAll(b.String(), e.dir, "$DIR"), "synced <sync time> WIB")
	for _, want := range []string{"1.250.000", "planned 2026-11-01 10:00 WIB", "run 2 of plan", "nothing to do"} {
		if !strings.Contains(got, want) {
			t.Errorf("the terminal output has no %q", want)
		}
	}
	checkGolden(t, "terminal_topup.golden", got)
}

package jobs_test

import (
	"path/filepath"
	"testing"

	"github.com/billsync/billsync/internal/jobs"
	"github.com/xuri/excelize/v2"
)

// TestJobWorkbookKeepsFormulasText: text from customers or products that a spreadsheet reads as a
// formula when a reviewer edits its cell (= + - @) is marked in a plan or result workbook as the
// reports mark it, by the cell style's quote prefix: it shows as it is and stays text when edited,
// on the rows sheet and on the summary (a product's name). Characters drawn as nothing show by
// their code, as in the reports. The job files used to write such text as a plain text cell, which
// F2 and Enter turn into a formula.
func TestJobWorkbookKeepsFormulasText(t *testing.T) {
	hostile := `=HYPERLINK("http://evil.example/","klik")`
	table := &jobs.Table{Name: "Rencana", Title: "Rencana p1",
		Columns: []jobs.Column{{Key: "seq", Title: "Baris"}, {Key: "target", Title: "Target"}, {Key: "note", Title: "Catatan"}},
		Rows:    [][]string{{"1", hostile, "ok"}, {"2", "Budi\u200b", "@SUM(A1)"}},
		Summary: &jobs.Summary{Rows: 2, Groups: []*jobs.Group{{Name: "-Promo", Rows: 2}}},
	}
	path := filepath.Join(t.TempDir(), "plan.xlsx")
	if err := jobs.WriteTableFile(path, table, jobs.FileOptions{}); err != nil {
		t.Fatal(err)
	}
	f, err := excelize.OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	quoted := func(sheet, cell string) bool {
		id, err := f.GetCellStyle(sheet, cell)
		if err != nil {
			t.Fatal(err)
		}
		xf := f.Styles.CellXfs.Xf[id]
		return xf.QuotePrefix != nil && *xf.QuotePrefix
	}
	summary := f.GetSheetList()[0]
	cells := []struct {
		sheet, cell, want string
		quoted            bool
	}{
		{"Rencana", "B2", hostile, true},
		{"Rencana", "C3", "@SUM(A1)", true},
		{"Rencana", "C2", "ok", false},
		{"Rencana", "B3", "Budi⟦U+200B⟧", false},
	}
	rows, err := f.GetRows(summary)
	if err != nil {
		t.Fatal(err)
	}
	for r, row := range rows {
		if len(row) > 0 && row[0] == "-Promo" {
			cell, _ := excelize.CoordinatesToCellName(1, r+1)
			cells = append(cells, struct {
				sheet, cell, want string
				quoted            bool
			}{summary, cell, "-Promo", true})
		}
	}
	if len(cells) != 5 {
		t.Fatalf("summary sheet has no row of the product -Promo: %q", rows)
	}
	for _, c := range cells {
		got, _ := f.GetCellValue(c.sheet, c.cell)
		if got != c.want || quoted(c.sheet, c.cell) != c.quoted {
			t.Errorf("%s!%s = %q, quote prefix %v; want %q, quote prefix %v", c.sheet, c.cell, got, quoted(c.sheet, c.cell), c.want, c.quoted)
		}
	}
}

package jobs

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/billsync/billsync/internal/cellsafe"
	"github.com/xuri/excelize/v2"
)

// TestDefusedCellsReadBack: text billsync wrote with the formula mark or with characters drawn as
// nothing shown by their code (a report sheet, a job's result file) reads back as the text itself,
// from CSV and from a workbook, so a report row used as a job's input names the customer's e-mail as
// the service has it.
func TestDefusedCellsReadBack(t *testing.T) {
	values := []string{"=budi@example.com", "+tag@example.com", "-", "@SUM(A1)", "+62 812-3456-7890",
		"'plain", "Ñoño", "a=b", "Budi\u200bSantoso", "\u202eosotnaS iduB"}
	header := []string{"customerId", "fromEmail"}
	rows := [][]string{header}
	for _, v := range values {
		rows = append(rows, []string{"c1", v})
	}
	dir := t.TempDir()

	// The CSV and the workbook as a job's result file writes them.
	csvPath, resultPath := filepath.Join(dir, "in.csv"), filepath.Join(dir, "result.xlsx")
	tab := &Table{Name: "Hasil", Columns: []Column{{Title: header[0]}, {Title: header[1]}}, Rows: rows[1:]}
	for _, p := range []string{csvPath, resultPath} {
		if err := WriteTableFile(p, tab, FileOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// The workbook as a report writes it: every text cell through cellsafe.Text.
	xlsxPath := filepath.Join(dir, "in.xlsx")
	f := excelize.NewFile()
	for i, r := range rows {
		cell, _ := excelize.CoordinatesToCellName(1, i+1)
		cells := []any{cellsafe.Text(r[0]), cellsafe.Text(r[1])}
		if err := f.SetSheetRow("Sheet1", cell, &cells); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.SaveAs(xlsxPath); err != nil {
		t.Fatal(err)
	}

	for _, path := range []string{csvPath, xlsxPath, resultPath} {
		tab, err := readTable(path, func(h []string) bool { return slices.Equal(h, header) })
		if err != nil {
			t.Fatalf("%s: %v", filepath.Base(path), err)
		}
		var got []string
		for _, r := range tab.rows {
			got = append(got, r.cells[1])
		}
		if !slices.Equal(got, values) {
			t.Errorf("%s read back %q, want %q", filepath.Base(path), got, values)
		}
	}
}

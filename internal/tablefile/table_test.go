package tablefile_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/billsync/billsync/internal/tablefile"
	"github.com/xuri/excelize/v2"
)

// review is a plan-like table: a number column, text that wraps, a text column whose IDs show by
// their start, an explaining column empty in every row, and a reference column.
func review() *tablefile.Table {
	return &tablefile.Table{Name: "Plan", Title: "Plan p1",
		Columns: []tablefile.Column{{Title: "Row", Format: "int"}, {Title: "Target", ShortIDs: true},
			{Title: "Amount", Format: "credit"}, {Title: "Error", Explains: true}, {Title: "Action ID", Ref: true}},
		Rows: [][]string{
			{"1", "customer 00304804-1111-2222-3333-444455556666 (Made)", "1250000", "", "a-1"},
			{"2", "=HYPERLINK(\"http://x.example/\")", "7500", "", "a-2"},
			{"3", "+62 812-3456-7890", "12.5", "", "a-3"},
		},
		Summary: tablefile.Summary{Name: "Summary", Facts: [][2]string{{"Plan", "p1"}, {"Input", "-in.csv"}},
			Head: []tablefile.Column{{Title: "Product"}, {Title: "Rows", Format: "int"}, {Title: "Credit", Format: "credit"}},
			Rows: [][]any{{"-Promo", 3, 1257512.5}}, Total: []any{"Total", 3, 1257512.5}},
	}
}

// TestCSV: the reports' CSV (byte-order mark, CRLF, quoted as encoding/csv quotes), formula-like
// text marked with an apostrophe, a phone number left alone, and no temporary file left beside it.
func TestCSV(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "sub", "plan.csv")
	if err := tablefile.Write(path, review(), tablefile.Options{}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want := "\ufeffRow,Target,Amount,Error,Action ID\r\n" +
		"1,customer 00304804-1111-2222-3333-444455556666 (Made),1250000,,a-1\r\n" +
		"2,\"'=HYPERLINK(\"\"http://x.example/\"\")\",7500,,a-2\r\n" +
		"3,+62 812-3456-7890,12.5,,a-3\r\n"
	if string(b) != want {
		t.Errorf("CSV:\n%q\nwant\n%q", b, want)
	}
	if entries, _ := os.ReadDir(filepath.Dir(path)); len(entries) != 1 {
		t.Errorf("the folder holds %d files, want the CSV alone", len(entries))
	}
}

// TestWorkbook: the summary first, then the rows: numbers typed in their formats, IDs shown by
// their start, formula-like text quote-prefixed on both sheets, the empty explaining column moved
// out of print with the reference column, the header repeated and filtered.
func TestWorkbook(t *testing.T) {
	path := filepath.Join(t.TempDir(), "plan.xlsx")
	if err := tablefile.Write(path, review(), tablefile.Options{Locale: "en", Footer: "Plan p1"}); err != nil {
		t.Fatal(err)
	}
	f, err := excelize.OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if got := f.GetSheetList(); len(got) != 2 || got[0] != "Summary" || got[1] != "Plan" {
		t.Fatalf("sheets %q", got)
	}
	rows, err := f.GetRows("Plan", excelize.Options{RawCellValue: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(rows[0], "|"); got != "Row|Target|Amount|Error|Action ID" {
		t.Errorf("header %q", got)
	}
	if rows[1][1] != "customer 00304804… (Made)" || rows[3][2] != "12.5" {
		t.Errorf("rows %q", rows)
	}
	style := func(sheet, cell string) excelize.Style {
		id, _ := f.GetCellStyle(sheet, cell)
		st, err := f.GetStyle(id)
		if err != nil {
			t.Fatal(err)
		}
		return *st
	}
	quoted := func(sheet, cell string) bool {
		id, _ := f.GetCellStyle(sheet, cell)
		q := f.Styles.CellXfs.Xf[id].QuotePrefix
		return q != nil && *q
	}
	for _, c := range []struct {
		sheet, cell string
		quoted      bool
	}{{"Plan", "B3", true}, {"Plan", "B4", true}, {"Plan", "B2", false}, {"Summary", "B4", true}, {"Summary", "A7", true}, {"Summary", "B3", false}} {
		if quoted(c.sheet, c.cell) != c.quoted {
			v, _ := f.GetCellValue(c.sheet, c.cell)
			t.Errorf("%s!%s %q: quote prefix %v, want %v", c.sheet, c.cell, v, !c.quoted, c.quoted)
		}
	}
	if typ, _ := f.GetCellType("Plan", "C2"); typ != excelize.CellTypeUnset && typ != excelize.CellTypeNumber {
		t.Errorf("Plan!C2 is of type %v, want a number", typ)
	}
	if st := style("Plan", "C2"); st.CustomNumFmt == nil || !strings.Contains(*st.CustomNumFmt, "#,##0") {
		t.Errorf("Plan!C2 format %+v", st.CustomNumFmt)
	}
	if v, _ := f.GetCellValue("Summary", "C7", excelize.Options{RawCellValue: true}); v != "1257512.5" {
		t.Errorf("Summary!C7 = %q", v)
	}
	names := map[string]string{}
	for _, n := range f.GetDefinedName() {
		if n.Scope == "Plan" {
			names[n.Name] = n.RefersTo
		}
	}
	if names["_xlnm.Print_Area"] != "'Plan'!$A$1:$C$4" || names["_xlnm.Print_Titles"] != "'Plan'!$1:$1" ||
		names["_xlnm._FilterDatabase"] != "'Plan'!$A$1:$E$4" {
		t.Errorf("defined names of Plan: %q", names)
	}
}

// TestWriteRefusesOtherFiles: a path that is neither .csv nor .xlsx is refused, nothing written.
func TestWriteRefusesOtherFiles(t *testing.T) {
	dir := t.TempDir()
	err := tablefile.Write(filepath.Join(dir, "plan.ods"), review(), tablefile.Options{})
	if err == nil || !strings.Contains(err.Error(), "want .csv or .xlsx") {
		t.Errorf("err = %v", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("the folder holds %d files", len(entries))
	}
}

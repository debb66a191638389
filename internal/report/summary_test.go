package report

import (
	"strings"
	"testing"

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
				id, err := f.GetCellStyle(sh, cell)
				if err != nil {
					t.Fatal(err)
				}
				st, err := f.GetStyle(id)
				if err != nil {
					t.Fatal(err)
				}
				if st.Alignment == nil || st.Alignment.Vertical != "top" {
					t.Errorf("%s: summary %s %q is not aligned to the top", path, cell, v)
				}
			}
		}
	}
}

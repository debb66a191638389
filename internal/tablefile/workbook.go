package tablefile

import (
	"fmt"
	"io"
	"strings"

	"github.com/billsync/billsync/internal/report/sheetxml"
	"github.com/billsync/billsync/internal/sheetfmt"
	"github.com/xuri/excelize/v2"
)

// Save writes f to path as a File, the body rows of its streamed sheets (by sheet name) spliced
// into their parts as the zip is written. excelize builds the whole zip in a buffer before
// writing it out; a zip writer on the file itself writes each part as it is compressed.
func Save(f *excelize.File, path string, rows map[string]*sheetxml.Rows) error {
	ids := map[string]int{}
	for id, name := range f.GetSheetMap() {
		ids[name] = id
	}
	parts := map[string]*sheetxml.Rows{}
	for name, r := range rows {
		id, ok := ids[name]
		if !ok || r == nil {
			return fmt.Errorf("sheet %q was not written", name)
		}
		// excelize names a sheet's part after its id
		parts[fmt.Sprintf("xl/worksheets/sheet%d.xml", id)] = r
	}
	out, err := Create(path)
	if err != nil {
		return err
	}
	f.SetZipWriter(func(io.Writer) excelize.ZipWriter { return sheetxml.NewZipWriter(out, parts) })
	if _, err := f.WriteTo(io.Discard); err != nil {
		out.Abort()
		return fmt.Errorf("write %s: %w", path, err)
	}
	return out.Commit()
}

// DataSheet is how a streamed data sheet starts: its name and printed page, its columns'
// widths and titles, the header row's height. Its body rows follow the header (sheetxml.Rows).
type DataSheet struct {
	Name, Footer string
	Page         sheetfmt.Page
	Widths       []float64
	Titles       []string
	HeaderHeight float64
	// Filter is the range given an autofilter (the header and the rows); "" = none (a report's
	// data sheet filters by its table).
	Filter string
}

// Start adds the sheet to f, its page set up and its header row streamed: panes, page and
// widths must come before the first row of a stream sheet.
func (d *DataSheet) Start(f *excelize.File, st *Styles) (*excelize.StreamWriter, error) {
	if _, err := f.NewSheet(d.Name); err != nil {
		return nil, err
	}
	if err := sheetfmt.PageSetup(f, d.Name, d.Footer, d.Page); err != nil {
		return nil, err
	}
	if d.Filter != "" {
		if err := f.AutoFilter(d.Name, d.Filter, nil); err != nil {
			return nil, err
		}
	}
	sw, err := f.NewStreamWriter(d.Name)
	if err != nil {
		return nil, err
	}
	if err := sw.SetPanes(&excelize.Panes{Freeze: true, YSplit: 1, TopLeftCell: "A2", ActivePane: "bottomLeft"}); err != nil {
		return nil, err
	}
	for i, w := range d.Widths {
		if err := sw.SetColWidth(i+1, i+1, w); err != nil {
			return nil, err
		}
	}
	head := make([]any, len(d.Titles))
	for i, t := range d.Titles {
		head[i] = &excelize.Cell{StyleID: st.Header, Value: t}
	}
	return sw, sw.SetRow("A1", head, excelize.RowOpts{Height: d.HeaderHeight})
}

// PrintArea prints the sheet's first cols columns of its first rows rows (cols 0: no area set):
// the reference columns after them (IDs, links) stay in the file, out of print, so the figures
// are not shrunk to make room for them.
func PrintArea(f *excelize.File, sheet string, cols, rows int) error {
	if cols == 0 {
		return nil
	}
	return f.SetDefinedName(&excelize.DefinedName{Name: "_xlnm.Print_Area", RefersTo: SheetRef(sheet) + AbsRange(1, 1, cols, rows), Scope: sheet})
}

// SheetRef is the start of a reference to a cell of sheet: 'name'!.
func SheetRef(sheet string) string { return "'" + strings.ReplaceAll(sheet, "'", "''") + "'!" }

// AbsRange is the absolute range from column c1, row r1 to c2, r2: $A$1:$C$9.
func AbsRange(c1, r1, c2, r2 int) string {
	a, _ := excelize.CoordinatesToCellName(c1, r1, true)
	b, _ := excelize.CoordinatesToCellName(c2, r2, true)
	return a + ":" + b
}

// CellName is the cell at column col, row row: C9.
func CellName(col, row int) string {
	s, _ := excelize.CoordinatesToCellName(col, row)
	return s
}

package report

import (
	"fmt"
	"math"
	"time"
	"unicode/utf8"

	"github.com/xuri/excelize/v2"
)

// excelEpoch is day 0 of Excel's 1900 date system (with its leap-year quirk
// folded in, valid for dates after 1900-03-01).
const excelEpoch = 25569 // days from 1899-12-30 to 1970-01-01

// maxCellText is Excel's limit on the characters in one cell.
const maxCellText = 32767

// styles holds the workbook's style ids by column format, for body and totals rows.
type styles struct {
	header, title, subtitle, label, wrap, check, checkBad, dateLeft int
	body, total                                                     map[string]int
}

// numFmts are the number formats per column format; "money" is set per currency.
var numFmts = map[string]string{
	"int":      "#,##0",
	"credit":   "#,##0.00",
	"decimal1": "#,##0.0",
	"rating":   "0.00",
	"percent":  "0.0%",
	"date":     "yyyy-mm-dd",
	"month":    "mmm yyyy",
	"datetime": "yyyy-mm-dd hh:mm",
}

// moneyFormat is a whole-unit amount with the currency's symbol or code.
func moneyFormat(currency string) string {
	symbols := map[string]string{"IDR": "Rp", "USD": "$", "EUR": "€", "SGD": "S$", "MYR": "RM", "GBP": "£", "JPY": "¥"}
	if s, ok := symbols[currency]; ok {
		return `"` + s + ` "#,##0;-"` + s + ` "#,##0`
	}
	return `#,##0" ` + currency + `"`
}

func newStyles(f *excelize.File, currency string) (*styles, error) {
	s := &styles{body: map[string]int{}, total: map[string]int{}}
	border := []excelize.Border{{Type: "top", Color: "000000", Style: 1}, {Type: "bottom", Color: "000000", Style: 6}}
	add := func(st *excelize.Style) int {
		id, err := f.NewStyle(st)
		if err != nil {
			panic(err) // styles are constants of this file; a failure is a programming error
		}
		return id
	}
	s.header = add(&excelize.Style{
		Font:      &excelize.Font{Bold: true, Color: "FFFFFF"},
		Fill:      excelize.Fill{Type: "pattern", Pattern: 1, Color: []string{"1F4E79"}},
		Alignment: &excelize.Alignment{Vertical: "center", WrapText: true},
	})
	s.title = add(&excelize.Style{Font: &excelize.Font{Bold: true, Size: 16, Color: "1F4E79"}})
	s.subtitle = add(&excelize.Style{Font: &excelize.Font{Bold: true, Size: 12, Color: "1F4E79"}})
	s.label = add(&excelize.Style{Font: &excelize.Font{Bold: true}, Alignment: &excelize.Alignment{Vertical: "top"}})
	s.wrap = add(&excelize.Style{Alignment: &excelize.Alignment{WrapText: true, Vertical: "top"}})
	dateFmt := numFmts["date"]
	s.dateLeft = add(&excelize.Style{CustomNumFmt: &dateFmt, Alignment: &excelize.Alignment{Horizontal: "left"}})
	s.check = add(&excelize.Style{Font: &excelize.Font{Italic: true, Color: "375623"}})
	s.checkBad = add(&excelize.Style{Font: &excelize.Font{Bold: true, Color: "C00000"}})
	fmts := map[string]string{"money": moneyFormat(currency)}
	for k, v := range numFmts {
		fmts[k] = v
	}
	s.total["text"] = add(&excelize.Style{Font: &excelize.Font{Bold: true}, Border: border})
	for k, v := range fmts {
		v := v
		s.body[k] = add(&excelize.Style{CustomNumFmt: &v})
		s.total[k] = add(&excelize.Style{CustomNumFmt: &v, Font: &excelize.Font{Bold: true}, Border: border})
	}
	return s, nil
}

// xlsxSheet streams one data sheet: header, rows, totals and check rows, and
// a table over header and rows for the autofilter.
type xlsxSheet struct {
	f        *excelize.File
	sw       *excelize.StreamWriter
	name     string
	cols     []column
	st       *styles
	loc      *time.Location
	row      []any
	cells    []excelize.Cell
	n        int // data rows written
	totalRow int // row number of the totals row, 0 = none
}

func newXLSXSheet(f *excelize.File, st *styles, loc *time.Location, name string, cols []column) (*xlsxSheet, error) {
	if _, err := f.NewSheet(name); err != nil {
		return nil, err
	}
	sw, err := f.NewStreamWriter(name)
	if err != nil {
		return nil, err
	}
	// Panes and widths must come before the first row of a stream sheet.
	if err := sw.SetPanes(&excelize.Panes{Freeze: true, YSplit: 1, TopLeftCell: "A2", ActivePane: "bottomLeft"}); err != nil {
		return nil, err
	}
	for i, c := range cols {
		if err := sw.SetColWidth(i+1, i+1, c.width); err != nil {
			return nil, err
		}
	}
	x := &xlsxSheet{f: f, sw: sw, name: name, cols: cols, st: st, loc: loc,
		row: make([]any, len(cols)), cells: make([]excelize.Cell, len(cols))}
	// The row holds pointers to the reused cells: a Cell value stored in an
	// interface would be a fresh allocation per cell.
	for i, c := range cols {
		x.cells[i] = excelize.Cell{StyleID: st.header, Value: c.title}
		x.row[i] = &x.cells[i]
	}
	if err := sw.SetRow("A1", x.row, excelize.RowOpts{Height: 30}); err != nil {
		return nil, err
	}
	for i, c := range cols {
		x.cells[i].StyleID = st.body[c.format]
	}
	return x, nil
}

func (x *xlsxSheet) write(vals []any) error {
	x.n++
	for i, v := range vals {
		x.cells[i].Value = x.cellValue(v, x.cols[i])
	}
	cell, _ := excelize.CoordinatesToCellName(1, x.n+1)
	return x.sw.SetRow(cell, x.row)
}

// cellValue converts a query value to what the cell holds: numbers stay
// numbers, dates become Excel serial days in the report's time zone.
func (x *xlsxSheet) cellValue(v any, c column) any {
	switch t := v.(type) {
	case decimal:
		return t.Float64()
	case time.Time:
		if c.kind == kindDate {
			return serialDay(t)
		}
		return serialTime(t, x.loc)
	case string:
		if len(t) > maxCellText && utf8.RuneCountInString(t) > maxCellText {
			return string([]rune(t)[:maxCellText])
		}
	case float64:
		if math.IsNaN(t) || math.IsInf(t, 0) {
			return nil
		}
	}
	return v
}

// serialDay is a DATE (midnight UTC from the driver) as an Excel serial day.
func serialDay(t time.Time) float64 {
	return float64(t.Unix()/86400 + excelEpoch)
}

// serialTime is an instant as an Excel serial date-time of its wall clock in loc.
func serialTime(t time.Time, loc *time.Location) float64 {
	_, off := t.In(loc).Zone()
	secs := t.Unix() + int64(off)
	return float64(secs)/86400 + excelEpoch + float64(t.Nanosecond())/86400e9
}

// finish writes the totals and check rows, the table and flushes the sheet.
func (x *xlsxSheet) finish(s *Sheet, tot *totals) (checkResult, error) {
	var chk checkResult
	last := x.n + 1
	if s.Totals != "" {
		last++
		if err := x.sw.SetRow(cellName(1, last), x.totalsRow(s.Totals, tot), excelize.RowOpts{}); err != nil {
			return chk, err
		}
		x.totalRow = last
	}
	if s.Check != nil {
		chk = tot.check(s.Check)
		if err := x.sw.SetRow(cellName(1, last+1), x.checkRow(chk)); err != nil {
			return chk, err
		}
	}
	if x.n > 0 {
		end := cellName(len(x.cols), x.n+1)
		err := x.sw.AddTable(&excelize.Table{Range: "A1:" + end, Name: tableName(x.name),
			StyleName: "TableStyleLight9", ShowRowStripes: boolPtr(true)})
		if err != nil {
			return chk, fmt.Errorf("table: %w", err)
		}
	}
	return chk, x.sw.Flush()
}

func (x *xlsxSheet) totalsRow(label string, tot *totals) []any {
	row := make([]any, len(x.cols))
	for i, c := range x.cols {
		cell := excelize.Cell{StyleID: x.st.total[c.format]}
		if c.format == "text" || c.format == "" {
			cell.StyleID = x.st.total["text"]
		}
		if i == 0 {
			cell.Value = label
		} else if v, ok := tot.value(c); ok {
			cell.Value = v
		}
		row[i] = cell
	}
	return row
}

func (x *xlsxSheet) checkRow(chk checkResult) []any {
	row := make([]any, len(x.cols))
	style := x.st.check
	if !chk.ok {
		style = x.st.checkBad
	}
	for i, c := range x.cols {
		cell := excelize.Cell{StyleID: style}
		switch {
		case i == 0:
			cell.Value = chk.label + ": " + chk.verdict()
		case c.name == chk.column:
			cell.Value, cell.StyleID = chk.diff, x.st.total[c.format]
		}
		row[i] = cell
	}
	return row
}

func cellName(col, row int) string {
	s, _ := excelize.CoordinatesToCellName(col, row)
	return s
}

// tableName makes an Excel table name (letters, digits, underscores) from a sheet name.
func tableName(sheet string) string {
	b := []byte("t_")
	for _, r := range sheet {
		if r < 128 && (r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			b = append(b, byte(r))
		} else {
			b = append(b, '_')
		}
	}
	return string(b)
}

func boolPtr(b bool) *bool { return &b }

package report

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/billsync/billsync/internal/cellsafe"
	"github.com/billsync/billsync/internal/report/csvout"
	"github.com/billsync/billsync/internal/report/sheetxml"
	"github.com/billsync/billsync/internal/report/value"
	"github.com/billsync/billsync/internal/sheetfmt"
	"github.com/billsync/billsync/internal/tablefile"
	"github.com/xuri/excelize/v2"
)

// excelEpoch is day 0 of Excel's 1900 date system (with its leap-year quirk
// folded in, valid for dates after 1900-03-01).
const excelEpoch = 25569 // days from 1899-12-30 to 1970-01-01

// maxCellText is Excel's limit on the characters in one cell.
const maxCellText = tablefile.MaxCellText

// styles are the workbook's cell styles, shared with every workbook billsync writes.
type styles = tablefile.Styles

// moneySymbol is the currency's symbol, or its code.
func moneySymbol(currency string) string {
	if f := moneyFormat(currency); strings.HasPrefix(f, `"`) {
		return strings.TrimSpace(strings.Trim(strings.SplitN(f, "#", 2)[0], `"`))
	}
	return currency
}

// numFmt is a column format's number format in the locale.
func numFmt(format, currency string, l *lang) (string, bool) {
	return sheetfmt.NumberFormat(format, currency, l.code)
}

func newStyles(f *excelize.File, currency string, l *lang) (*styles, error) {
	return tablefile.NewStyles(f, currency, l.code)
}

// widthSample is how many rows are held back to size the columns before the
// sheet is streamed. Sheets up to this size are sized exactly (totals
// included); beyond it summed columns get room for totals 10,000 times the
// largest value seen.
const widthSample = 2000

// idStartWidth is the room a name gets for the start of the ID after it, " (9b1431cf…)",
// where other customers or products carry the name too (sameNames).
const idStartWidth = 12

// xlsxSheet streams one data sheet: header, rows, totals and check rows, and
// a table over header and rows for the autofilter. The first widthSample rows
// are held back until the columns' widths are known.
type xlsxSheet struct {
	f        *excelize.File
	sw       *excelize.StreamWriter
	name     string
	cols     []column
	st       *styles
	loc      *time.Location
	l        *lang
	cells    []excelize.Cell // the body rows' styles
	n        int             // data rows written
	totalRow int             // row number of the totals row, 0 = none
	held     [][]any
	widths   []float64
	rows     *sheetxml.Rows // the body rows, after the header when the workbook is saved
	row      []sheetxml.Cell
	mode     sheetxml.Mode
	footer   string
	// same are the names several customers or products carry, for the columns that tell
	// them apart; labelled is the row as printed when one of them does.
	same     *sameNames
	labelled []any
}

// newXLSXSheet makes a data sheet of f whose rows can be written apart from
// f: nothing touches f until assemble, so sheets of one workbook can be
// written at once and assembled in order.
func newXLSXSheet(f *excelize.File, st *styles, loc *time.Location, l *lang, name string, cols []column, footer string) *xlsxSheet {
	x := &xlsxSheet{f: f, name: name, cols: cols, st: st, loc: loc, l: l, footer: footer,
		cells: make([]excelize.Cell, len(cols)), widths: make([]float64, len(cols))}
	for i, c := range cols {
		x.widths[i] = headerWidth(c.title)
	}
	return x
}

// page is how the data sheet prints: landscape, its printed columns (all but the reference
// columns) at their widths, at most at sheetfmt.ListScale, the header row repeated.
func (x *xlsxSheet) page() sheetfmt.Page {
	p := sheetfmt.Page{TitleFirst: 1, TitleLast: 1, MaxScale: sheetfmt.ListScale}
	for i, c := range x.cols {
		if c.reference {
			break
		}
		p.Widths = append(p.Widths, x.widths[i])
	}
	return p
}

// footerText is the printed footer: report and as-of left, sheet centre,
// page x of y right.
func footerText(title, asOf string, l *lang) string {
	return sheetfmt.Footer(title+" · "+l.w("as_of_footer")+" "+asOf, l.code)
}

// headerWidth is the width a header needs: it wraps, so its longest word,
// or the whole title when short.
func headerWidth(title string) float64 {
	return float64(tablefile.HeaderChars(title, 12))*1.1 + 2 // bold
}

func (x *xlsxSheet) write(vals []any) error {
	if x.same != nil {
		vals = x.tellApart(vals)
	}
	if x.rows == nil {
		x.measure(vals)
		x.held = append(x.held, slices.Clone(vals))
		if len(x.held) < widthSample {
			return nil
		}
		return x.startRows(nil)
	}
	return x.put(vals)
}

// tellApart is the row with the names other customers or products carry too followed by
// the start of their IDs (sameNames); the row itself, which the CSV writes, is unchanged.
func (x *xlsxSheet) tellApart(vals []any) []any {
	out := vals
	for i := range x.cols {
		c := &x.cols[i]
		if c.apartKind == "" {
			continue
		}
		name, _ := vals[i].(string)
		id, _ := vals[c.apartID].(string)
		if label, ok := x.same.label(c.apartKind, name, id); ok {
			if &out[0] == &vals[0] {
				out = append(x.labelled[:0], vals...)
				x.labelled = out
			}
			out[i] = label
		}
	}
	return out
}

func (x *xlsxSheet) put(vals []any) error {
	x.n++
	if x.row == nil {
		x.row = make([]sheetxml.Cell, len(x.cols))
	}
	lines := 1
	for i, v := range vals {
		x.row[i] = x.cell(v, &x.cols[i], x.cells[i].StyleID)
		if x.cells[i].StyleID == x.st.TextWrap && x.row[i].Type == sheetxml.String {
			lines = max(lines, sheetfmt.WrappedLines(x.row[i].Str, int(min(x.widths[i], x.cols[i].width))-3))
		}
	}
	if lines > 1 {
		return x.rows.PutTall(x.row, float64(15*lines))
	}
	return x.rows.Put(x.row)
}

// cell is a value as its workbook cell, of style s: numbers stay numbers, dates become Excel
// serial days in the report's time zone, codes their friendly names, NULL the column's reason
// for it (aligned as numbers are in a number column) or an empty cell, text as it is (text a
// spreadsheet would run as a formula takes the style's twin with the quote prefix).
func (x *xlsxSheet) cell(v any, c *column, s int) sheetxml.Cell {
	switch t := v.(type) {
	case nil:
		if c.empty == "" {
			return sheetxml.Cell{Style: s}
		}
		if c.format != "text" && c.format != "" {
			s = x.st.Reason
		}
		return sheetxml.Cell{Style: s, Type: sheetxml.String, Str: c.empty}
	case value.Decimal:
		return sheetxml.Cell{Style: s, Type: sheetxml.Number, Num: t.Float64()}
	case time.Time:
		switch c.kind {
		case value.KindDate:
			return sheetxml.Cell{Style: s, Type: sheetxml.Number, Num: serialDay(t)}
		case value.KindWall:
			return sheetxml.Cell{Style: s, Type: sheetxml.Number, Num: serialTime(t, time.UTC)}
		}
		return sheetxml.Cell{Style: s, Type: sheetxml.Number, Num: serialTime(t, x.loc)}
	case string:
		if t == "" {
			return sheetxml.Cell{Style: s, Type: sheetxml.String}
		}
		return x.st.TextCell(x.displayText(t, c), s)
	case float64:
		return sheetxml.Cell{Style: s, Type: sheetxml.Number, Num: t}
	case int64:
		return sheetxml.Cell{Style: s, Type: sheetxml.Int, Int: t}
	case bool:
		c := sheetxml.Cell{Style: s, Type: sheetxml.Bool}
		if t {
			c.Int = 1
		}
		return c
	}
	return sheetxml.Cell{Style: s, Type: sheetxml.String, Str: fmt.Sprint(v)}
}

// displayText is text as the cell shows it: a code by its friendly name, characters drawn as
// nothing by their code (cellsafe.Visible).
func (x *xlsxSheet) displayText(t string, c *column) string {
	if c.codes {
		return c.codeName(t, x.l)
	}
	return cellsafe.Visible(t)
}

// measure widens the columns to the values as displayed.
func (x *xlsxSheet) measure(vals []any) {
	for i, v := range vals {
		x.widths[i] = max(x.widths[i], float64(x.displayLen(v, x.cols[i]))+2)
	}
}

// displayLen is about how many characters v takes as the cell shows it.
func (x *xlsxSheet) displayLen(v any, c column) int {
	digits := func(f float64) int {
		n := len(strconv.FormatFloat(math.Abs(math.Round(f)), 'f', 0, 64))
		n += (n - 1) / 3
		if f < 0 {
			n++
		}
		return n
	}
	switch t := v.(type) {
	case nil:
		return utf8.RuneCountInString(c.empty)
	case string:
		t = x.displayText(t, &c)
		if c.apartKind != "" {
			return min(utf8.RuneCountInString(t), maxTextWidth+idStartWidth)
		}
		return min(utf8.RuneCountInString(t), maxTextWidth)
	case time.Time:
		switch {
		case c.format == "month":
			return 8 // Nov 2026
		case c.kind == value.KindDate:
			return 11 // 23 Nov 2026
		}
		return 17 // 23 Nov 2026 16:05
	}
	n := digits(value.Number(v))
	switch c.format {
	case "money":
		n += 4
	case "decimal1":
		n += 2
	case "decimal2", "rating":
		n += 3
	case "percent":
		n = 6
	case "text":
		n = len(csvout.Value(v, c.kind, x.loc))
	}
	return n
}

// startRows sizes the columns (with the totals when every row is held) and
// writes the held rows; the rows are written as they come from then on.
func (x *xlsxSheet) startRows(tot *totals) error {
	for i, c := range x.cols {
		if !c.total.Sum {
			continue
		}
		if tot != nil {
			if v, ok := tot.value(c); ok {
				x.widths[i] = max(x.widths[i], float64(x.displayLen(v, c))*1.1+2)
			}
		} else {
			x.widths[i] += 5 // room for a total up to 10,000 times the largest value held
		}
	}
	for i, c := range x.cols {
		x.cells[i].StyleID = x.st.Body[c.format]
		if c.format == "text" || c.format == "" {
			x.cells[i].StyleID = x.st.Text
			if c.width > 0 {
				x.cells[i].StyleID = x.st.TextWrap
			}
		}
	}
	var err error
	if x.rows, err = sheetxml.New(x.mode, len(x.cols)); err != nil {
		return err
	}
	for _, r := range x.held {
		if err := x.put(r); err != nil {
			return err
		}
	}
	x.held = nil
	return nil
}

// header adds the sheet to the workbook and streams its header row; the body
// rows are spliced in after it when the workbook is saved.
func (x *xlsxSheet) header() error {
	lines := 1
	for i, c := range x.cols {
		w := x.widths[i]
		if c.width > 0 && c.format == "text" {
			w = min(w, c.width)
		}
		if c.apartKind != "" {
			w = min(w, maxTextWidth+idStartWidth+2)
		} else {
			w = min(w, maxTextWidth+2)
		}
		x.widths[i] = w
		lines = max(lines, int(math.Ceil(float64(utf8.RuneCountInString(c.title))*1.1/(w-1))))
	}
	titles := make([]string, len(x.cols))
	for i, c := range x.cols {
		titles[i] = c.title
	}
	sheet := tablefile.DataSheet{Name: x.name, Footer: x.footer, Page: x.page(), Widths: x.widths, Titles: titles,
		HeaderHeight: float64(15*max(lines, 2)) + 2}
	var err error
	x.sw, err = sheet.Start(x.f, x.st)
	return err
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

// finish ends the rows (done) and assembles the sheet into its workbook.
func (x *xlsxSheet) finish(s *Sheet, tot *totals) (checkResult, error) {
	chk, err := x.done(s, tot)
	if err != nil {
		return chk, err
	}
	return chk, x.assemble(s, tot, chk)
}

// done ends the body rows: a sheet of fewer than widthSample rows is sized
// with its totals and written now. It returns the sheet's check.
func (x *xlsxSheet) done(s *Sheet, tot *totals) (checkResult, error) {
	var chk checkResult
	if x.rows == nil {
		if err := x.startRows(tot); err != nil {
			return chk, err
		}
	}
	if s.Check != nil {
		chk = tot.check(s.Check, x.l)
	}
	return chk, nil
}

// assemble adds the sheet to its workbook: the header, the totals and check
// rows, the table and the print titles and area. Sheets are assembled one at
// a time, in the workbook's order, after done.
func (x *xlsxSheet) assemble(s *Sheet, tot *totals, chk checkResult) error {
	if err := x.header(); err != nil {
		return err
	}
	if err := x.rows.WriteStream(x.sw); err != nil {
		return err
	}
	last := x.n + 1
	if x.n == 0 {
		// A printed header alone reads as rows that failed to print.
		last++
		if err := x.sw.SetRow(cellName(1, last), []any{excelize.Cell{StyleID: x.st.Text, Value: x.l.w("none_rows")}}); err != nil {
			return err
		}
	}
	if len(s.Totals) > 0 {
		last++
		if err := x.sw.SetRow(cellName(1, last), x.totalsRow(s.Totals.In(x.l.code), tot), excelize.RowOpts{}); err != nil {
			return err
		}
		x.totalRow = last
	}
	if s.Check != nil {
		last++
		if err := x.sw.SetRow(cellName(1, last), x.checkRow(chk)); err != nil {
			return err
		}
	}
	if x.n > 0 {
		end := cellName(len(x.cols), x.n+1)
		err := x.sw.AddTable(&excelize.Table{Range: "A1:" + end, Name: tableName(x.name),
			StyleName: "TableStyleLight9", ShowRowStripes: boolPtr(true)})
		if err != nil {
			return fmt.Errorf("table: %w", err)
		}
	}
	if !s.prints(x.n) {
		// The sheet stays in the file as it is but prints only an empty cell, which a
		// spreadsheet leaves out of print: no page saying there is nothing, nor a page repeating
		// the summary.
		if err := x.sw.Flush(); err != nil {
			return err
		}
		ref := tablefile.SheetRef(x.name)
		return x.f.SetDefinedName(&excelize.DefinedName{Name: "_xlnm.Print_Area", RefersTo: ref + absRange(1, last+2, 1, last+2), Scope: x.name})
	}
	if err := x.printArea(last); err != nil {
		return err
	}
	return x.sw.Flush()
}

// printArea repeats the header on every printed page (and the first column on
// each page of a sheet too wide for one) and leaves the
// reference columns (IDs, URLs) out of print, so amounts are not shrunk to
// make room for them.
func (x *xlsxSheet) printArea(last int) error {
	if err := sheetfmt.PrintTitles(x.f, x.name, x.page()); err != nil {
		return fmt.Errorf("print titles: %w", err)
	}
	printed := slices.IndexFunc(x.cols, func(c column) bool { return c.reference })
	if printed < 0 {
		printed = len(x.cols)
	}
	return tablefile.PrintArea(x.f, x.name, printed, max(last, 1))
}

func (x *xlsxSheet) totalsRow(label string, tot *totals) []any {
	row := make([]any, len(x.cols))
	for i, c := range x.cols {
		cell := excelize.Cell{StyleID: x.st.Total[c.format]}
		if c.format == "text" || c.format == "" {
			cell.StyleID = x.st.Total["text"]
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
	style := x.st.Check
	if !chk.ok {
		style = x.st.CheckBad
	}
	for i, c := range x.cols {
		cell := excelize.Cell{StyleID: style}
		switch {
		case i == 0:
			cell.Value = chk.text(x.l)
		case c.name == chk.column:
			cell.Value, cell.StyleID = chk.diff, x.st.Total[c.format]
		}
		row[i] = cell
	}
	return row
}

func cellName(col, row int) string { return tablefile.CellName(col, row) }

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

func absRange(c1, r1, c2, r2 int) string { return tablefile.AbsRange(c1, r1, c2, r2) }

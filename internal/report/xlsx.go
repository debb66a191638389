package report

import (
	"fmt"
	"maps"
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
	"github.com/xuri/excelize/v2"
)

// excelEpoch is day 0 of Excel's 1900 date system (with its leap-year quirk
// folded in, valid for dates after 1900-03-01).
const excelEpoch = 25569 // days from 1899-12-30 to 1970-01-01

// maxCellText is Excel's limit on the characters in one cell.
const maxCellText = 32767

// styles holds the workbook's style ids by column format, for body and totals rows.
type styles struct {
	header, title, subtitle, label, wrap, check, checkBad, dateLeft, text int
	// textWrap is text of a column given a width (Column.Width): it wraps within it, the row
	// as tall as it needs, rather than running under the next column or widening the page.
	textWrap int
	// sumCheck and sumCheckBad are check and checkBad on the summary: they wrap, as
	// a long line there (the as-of warning) would otherwise run on over the columns
	// beside it and shrink the printed page to fit. A data sheet's check row does
	// not wrap: it runs on over the empty cells of its row.
	sumCheck, sumCheckBad int
	// value is a summary value without a number format. Every summary cell is
	// aligned to the top: a row is as tall as its longest wrapped text, and a
	// value at the bottom (the default) would print a line below its label.
	value int
	// reason is a number column's NULL shown as its reason ("belum teramati"): aligned right
	// with the numbers, not left against the column before it.
	reason int
	// tableHead and tableHeadLabel head a headline table on the summary (headline_table):
	// each figure's title over its column, aligned right with the figures; the label column's.
	tableHead, tableHeadLabel int
	// tableTotal is the label (and a blank figure) of a headline table's totals row.
	tableTotal        int
	body, total, left map[string]int
	// quoted is each body style's twin with the quote prefix: a text cell a spreadsheet would
	// read as a formula when edited (= + - @) is marked by its style, not by an apostrophe
	// in the text, so it shows as it is ("-Budi") and stays text when a reader edits it.
	quoted map[int]int
}

// numFmts are the number formats per column format, shared with every workbook billsync writes.
var numFmts = sheetfmt.NumFmts

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
	var err error
	s := &styles{body: map[string]int{}, total: map[string]int{}, left: map[string]int{}}
	border := []excelize.Border{{Type: "top", Color: "000000", Style: 1}, {Type: "bottom", Color: "000000", Style: 6}}
	add := func(st *excelize.Style) int {
		id, err := f.NewStyle(st)
		if err != nil {
			panic(err) // styles are constants of this file; a failure is a programming error
		}
		return id
	}
	s.header = add(sheetfmt.HeaderStyle())
	under := []excelize.Border{{Type: "bottom", Color: "000000", Style: 1}}
	s.tableHead = add(&excelize.Style{Font: &excelize.Font{Family: "Calibri", Bold: true}, Border: under,
		Alignment: &excelize.Alignment{Horizontal: "right", Vertical: "top", WrapText: true}})
	s.tableHeadLabel = add(&excelize.Style{Font: &excelize.Font{Family: "Calibri", Bold: true}, Border: under,
		Alignment: &excelize.Alignment{Vertical: "top", WrapText: true}})
	s.tableTotal = add(&excelize.Style{Font: &excelize.Font{Family: "Calibri", Bold: true}, Border: border,
		Alignment: &excelize.Alignment{Vertical: "top", WrapText: true}})
	s.title = add(&excelize.Style{Font: &excelize.Font{Family: "Calibri", Bold: true, Size: 16, Color: "1F4E79"}})
	s.subtitle = add(&excelize.Style{Font: &excelize.Font{Family: "Calibri", Bold: true, Size: 12, Color: "1F4E79"}, Alignment: &excelize.Alignment{Vertical: "top"}})
	s.value = add(&excelize.Style{Alignment: &excelize.Alignment{Vertical: "top", WrapText: true}})
	s.label = add(&excelize.Style{Font: &excelize.Font{Family: "Calibri", Bold: true}, Alignment: &excelize.Alignment{Vertical: "top", WrapText: true}})
	s.wrap = add(&excelize.Style{Alignment: &excelize.Alignment{WrapText: true, Vertical: "top"}})
	// Body text does not wrap: readers do not grow the rows of a file they
	// did not write, so wrapped text would run over the next row.
	// The indent keeps text clear of a right-aligned number beside it; spreadsheets apply an
	// indent only to text aligned left explicitly, not to the general alignment.
	s.text = add(&excelize.Style{Alignment: &excelize.Alignment{Horizontal: "left", Vertical: "top", Indent: 1}})
	s.textWrap = add(&excelize.Style{Alignment: &excelize.Alignment{Horizontal: "left", Vertical: "top", Indent: 1, WrapText: true}})
	s.reason = add(&excelize.Style{Alignment: &excelize.Alignment{Horizontal: "right", Vertical: "top"}})
	dateFmt, _ := numFmt("date", currency, l)
	s.dateLeft = add(&excelize.Style{CustomNumFmt: &dateFmt, Alignment: &excelize.Alignment{Horizontal: "left"}})
	s.check = add(&excelize.Style{Font: &excelize.Font{Family: "Calibri", Italic: true, Color: "375623"}, Alignment: &excelize.Alignment{Vertical: "top"}})
	s.checkBad = add(&excelize.Style{Font: &excelize.Font{Family: "Calibri", Bold: true, Color: "C00000"}, Alignment: &excelize.Alignment{Vertical: "top"}})
	s.sumCheck = add(&excelize.Style{Font: &excelize.Font{Family: "Calibri", Italic: true, Color: "375623"}, Alignment: &excelize.Alignment{Vertical: "top", WrapText: true}})
	s.sumCheckBad = add(&excelize.Style{Font: &excelize.Font{Family: "Calibri", Bold: true, Color: "C00000"}, Alignment: &excelize.Alignment{Vertical: "top", WrapText: true}})
	s.total["text"] = add(&excelize.Style{Font: &excelize.Font{Family: "Calibri", Bold: true}, Border: border})
	for _, k := range slices.Sorted(maps.Keys(numFmts)) { // sorted: the same style ids in every run
		s.addFormat(add, k, currency, l, border)
	}
	s.addFormat(add, "money", currency, l, border)
	s.quoted = map[int]int{}
	for _, id := range append(slices.Sorted(maps.Values(s.body)), s.text, s.textWrap, s.value, s.wrap, s.label) {
		if s.quoted[id], err = quotePrefixed(f, id); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// quotePrefixed adds a twin of style id with the quote prefix ("text, even when edited"),
// which excelize's Style cannot say: the cell format is copied in the workbook's style sheet.
func quotePrefixed(f *excelize.File, id int) (int, error) {
	if f.Styles == nil || f.Styles.CellXfs == nil || id < 0 || id >= len(f.Styles.CellXfs.Xf) {
		return 0, fmt.Errorf("style %d: not in the workbook's cell formats", id)
	}
	xf := f.Styles.CellXfs.Xf[id]
	xf.QuotePrefix = boolPtr(true)
	f.Styles.CellXfs.Xf = append(f.Styles.CellXfs.Xf, xf)
	f.Styles.CellXfs.Count = len(f.Styles.CellXfs.Xf)
	return len(f.Styles.CellXfs.Xf) - 1, nil
}

func (s *styles) addFormat(add func(*excelize.Style) int, format, currency string, l *lang, border []excelize.Border) {
	v, _ := numFmt(format, currency, l)
	top := &excelize.Alignment{Vertical: "top"}
	s.body[format] = add(&excelize.Style{CustomNumFmt: &v, Alignment: top})
	s.total[format] = add(&excelize.Style{CustomNumFmt: &v, Font: &excelize.Font{Family: "Calibri", Bold: true}, Border: border, Alignment: top})
	s.left[format] = add(&excelize.Style{CustomNumFmt: &v, Font: &excelize.Font{Family: "Calibri", Bold: true}, Alignment: &excelize.Alignment{Horizontal: "left", Vertical: "top"}})
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

// pageSetup prints a sheet on A4 at the scale its printed columns need, never below
// sheetfmt.MinScale, with a footer; it must come before the sheet is streamed.
func pageSetup(f *excelize.File, sheet, footer string, p sheetfmt.Page) error {
	return sheetfmt.PageSetup(f, sheet, footer, p)
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
	w := 0
	for _, word := range strings.Fields(title) {
		w = max(w, utf8.RuneCountInString(word))
	}
	if n := utf8.RuneCountInString(title); n <= 12 {
		w = n
	}
	return float64(w)*1.1 + 2 // bold
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
		if x.cells[i].StyleID == x.st.textWrap && x.row[i].Type == sheetxml.String {
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
			s = x.st.reason
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
		t = x.displayText(t, c)
		if cellsafe.StartsLikeFormula(t) {
			s = x.st.quoted[s] // the text as it is, kept text when edited
		}
		if len(t) > maxCellText-1 && utf8.RuneCountInString(t) > maxCellText-1 {
			t = string([]rune(t)[:maxCellText-1])
		}
		return sheetxml.Cell{Style: s, Type: sheetxml.String, Str: t}
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
		x.cells[i].StyleID = x.st.body[c.format]
		if c.format == "text" || c.format == "" {
			x.cells[i].StyleID = x.st.text
			if c.width > 0 {
				x.cells[i].StyleID = x.st.textWrap
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
	if _, err := x.f.NewSheet(x.name); err != nil {
		return err
	}
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
	if err := pageSetup(x.f, x.name, x.footer, x.page()); err != nil {
		return err
	}
	sw, err := x.f.NewStreamWriter(x.name)
	if err != nil {
		return err
	}
	x.sw = sw
	// Panes and widths must come before the first row of a stream sheet.
	if err := sw.SetPanes(&excelize.Panes{Freeze: true, YSplit: 1, TopLeftCell: "A2", ActivePane: "bottomLeft"}); err != nil {
		return err
	}
	for i, w := range x.widths {
		if err := sw.SetColWidth(i+1, i+1, w); err != nil {
			return err
		}
	}
	head := make([]any, len(x.cols))
	for i, c := range x.cols {
		head[i] = &excelize.Cell{StyleID: x.st.header, Value: c.title}
	}
	return sw.SetRow("A1", head, excelize.RowOpts{Height: float64(15*max(lines, 2)) + 2})
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
		if err := x.sw.SetRow(cellName(1, last), []any{excelize.Cell{StyleID: x.st.text, Value: x.l.w("none_rows")}}); err != nil {
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
		ref := "'" + strings.ReplaceAll(x.name, "'", "''") + "'!"
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
	ref := "'" + strings.ReplaceAll(x.name, "'", "''") + "'!"
	if err := sheetfmt.PrintTitles(x.f, x.name, x.page()); err != nil {
		return fmt.Errorf("print titles: %w", err)
	}
	printed := slices.IndexFunc(x.cols, func(c column) bool { return c.reference })
	if printed < 0 {
		printed = len(x.cols)
	}
	if printed == 0 {
		return nil
	}
	return x.f.SetDefinedName(&excelize.DefinedName{Name: "_xlnm.Print_Area", RefersTo: ref + absRange(1, 1, printed, max(last, 1)), Scope: x.name})
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
			cell.Value = chk.text(x.l)
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

func absRange(c1, r1, c2, r2 int) string {
	a, _ := excelize.CoordinatesToCellName(c1, r1, true)
	b, _ := excelize.CoordinatesToCellName(c2, r2, true)
	return a + ":" + b
}

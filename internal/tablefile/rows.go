package tablefile

import (
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/billsync/billsync/internal/cellsafe"
	"github.com/billsync/billsync/internal/report/sheetxml"
	"github.com/billsync/billsync/internal/sheetfmt"
	"github.com/xuri/excelize/v2"
)

// maxColWidth is the widest a table's column gets, in characters; longer text runs on into the
// empty cells.
const maxColWidth = 48

// wrapColWidth is the width of a printed text column of a table (a plan's target, change,
// note …), in characters: longer text wraps.
const wrapColWidth = 22

// headerHeight is the height of a table's header row, in points: two lines of its titles.
const headerHeight = 32

// uuidRe is a UUID, as the billing service's IDs are.
var uuidRe = regexp.MustCompile(`\b([0-9a-fA-F]{8})-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b`)

// emptyOutOfPrint is the table with its explaining columns that are empty in every row moved
// among the reference columns, out of print: five empty columns of a result that succeeded would
// otherwise print as wide as their headers and push the rest onto a second page across. The CSV
// keeps the order it has.
func emptyOutOfPrint(t *Table) *Table {
	empty := func(i int) bool {
		for _, r := range t.Rows {
			if i < len(r) && r[i] != "" {
				return false
			}
		}
		return true
	}
	var order, moved, refs []int
	for i, c := range t.Columns {
		switch {
		case c.Ref:
			refs = append(refs, i)
		case c.Explains && empty(i):
			moved = append(moved, i)
		default:
			order = append(order, i)
		}
	}
	if len(moved) == 0 {
		return t
	}
	order = append(append(order, moved...), refs...)
	out := *t
	out.Columns = make([]Column, len(order))
	for k, i := range order {
		out.Columns[k] = t.Columns[i]
		if slices.Contains(moved, i) {
			out.Columns[k].Ref = true
		}
	}
	out.Rows = make([][]string, len(t.Rows))
	for r, row := range t.Rows {
		out.Rows[r] = make([]string, len(order))
		for k, i := range order {
			if i < len(row) {
				out.Rows[r][k] = row[i]
			}
		}
	}
	return &out
}

// shown is a value as its workbook cell shows it, as the reports show text: invisible
// characters by their code (cellsafe.Visible); a UUID of a ShortIDs column by its start.
func shown(v string, c Column) string {
	v = cellsafe.Visible(v)
	if c.ShortIDs {
		return uuidRe.ReplaceAllString(v, "$1…")
	}
	return v
}

// wraps says whether a column's text wraps at wrapColWidth: a printed text column.
func wraps(c Column) bool { return c.Format == "" && !c.Ref }

// widths are the table's columns' widths, in characters: as wide as their header and contents,
// at most maxColWidth, a printed text column at most wrapColWidth (its text wraps: the page keeps
// every column at a readable size, sheetfmt.MinScale, instead of shrinking or cutting them).
func widths(t *Table, locale string) []float64 {
	w := make([]int, len(t.Columns))
	for i, c := range t.Columns {
		w[i] = min(maxColWidth, headerWidth(c.Title))
	}
	for _, row := range t.Rows {
		for i, v := range row {
			c := t.Columns[i]
			w[i] = max(w[i], min(maxColWidth, shownWidth(shown(v, c), c.Format, locale)+3))
			if wraps(c) {
				w[i] = min(w[i], max(wrapColWidth, headerWidth(c.Title)))
			}
		}
	}
	out := make([]float64, len(w))
	for i := range w {
		out[i] = float64(w[i])
	}
	return out
}

// HeaderChars is how many characters wide a header's column must be: a header wraps, so its
// longest word, or the whole title when it has at most short characters.
func HeaderChars(title string, short int) int {
	w := 0
	for _, word := range strings.Fields(title) {
		w = max(w, utf8.RuneCountInString(word))
	}
	if n := utf8.RuneCountInString(title); n <= short {
		w = n
	}
	return w
}

// headerWidth is the width a table's header needs, padded.
func headerWidth(title string) int { return HeaderChars(title, 8) + 3 }

// shownWidth is about how many characters a value takes as its cell shows it.
func shownWidth(v, format, locale string) int {
	if _, ok := cellValue(v, format); ok {
		n := utf8.RuneCountInString(sheetfmt.Number(v, locale))
		if format == "money" {
			n += 3 // "Rp "
		}
		return n
	}
	return utf8.RuneCountInString(v)
}

// cellValue is a table value as its cell holds it: a number for a number column, else text.
func cellValue(v, format string) (any, bool) {
	if format == "" || v == "" {
		return v, false
	}
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		return n, true
	}
	if f, err := strconv.ParseFloat(v, 64); err == nil && !math.IsInf(f, 0) && !math.IsNaN(f) {
		return f, true
	}
	return v, false
}

// writeRows adds the table's data sheet: the header, then the rows as sheetxml writes a report's
// (returned, spliced into the sheet when the workbook is saved), each row as tall as its longest
// wrapped text; an autofilter over them, and the print titles and area.
func writeRows(f *excelize.File, st *Styles, t *Table, footer, locale string) (*sheetxml.Rows, error) {
	w := widths(t, locale)
	printed := slices.IndexFunc(t.Columns, func(c Column) bool { return c.Ref })
	if printed < 0 {
		printed = len(t.Columns)
	}
	sheet := DataSheet{Name: t.Name, Footer: footer, Page: sheetfmt.Page{TitleFirst: 1, TitleLast: 1, Widths: w[:printed]},
		Widths: w, HeaderHeight: headerHeight,
		Filter: "A1:" + CellName(len(t.Columns), max(len(t.Rows)+1, 2))}
	for _, c := range t.Columns {
		sheet.Titles = append(sheet.Titles, c.Title)
	}
	sw, err := sheet.Start(f, st)
	if err != nil {
		return nil, err
	}
	rows, err := sheetxml.New(sheetxml.Spliced, len(t.Columns))
	if err != nil {
		return nil, err
	}
	cells := make([]sheetxml.Cell, len(t.Columns))
	for _, row := range t.Rows {
		lines := 1
		for i, v := range row {
			c := t.Columns[i]
			cells[i], lines = bodyCell(st, shown(v, c), c, lines)
		}
		height := 0.0
		if lines > 1 {
			height = float64(15 * lines)
		}
		if err := rows.PutTall(cells, height); err != nil {
			return nil, err
		}
	}
	if err := sheetfmt.PrintTitles(f, t.Name, sheet.Page); err != nil {
		return nil, err
	}
	if err := PrintArea(f, t.Name, printed, len(t.Rows)+1); err != nil {
		return nil, err
	}
	return rows, sw.Flush()
}

// bodyCell is a value as its body cell holds it: a number in its column's format, or text (a
// formula's start quote-prefixed), a printed text column's wrapped; lines is the row's most
// lines so far, and the cell's wrapped text may add to them.
func bodyCell(st *Styles, v string, c Column, lines int) (sheetxml.Cell, int) {
	val, _ := cellValue(v, c.Format)
	switch n := val.(type) {
	case int64:
		return sheetxml.Cell{Style: st.Body[c.Format], Type: sheetxml.Int, Int: n}, lines
	case float64:
		return sheetxml.Cell{Style: st.Body[c.Format], Type: sheetxml.Number, Num: n}, lines
	}
	if !wraps(c) {
		return st.TextCell(v, st.Text), lines
	}
	return st.TextCell(v, st.TextWrap), max(lines, sheetfmt.WrappedLines(v, wrapColWidth))
}

package jobs

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/billsync/billsync/internal/cellsafe"
	"github.com/billsync/billsync/internal/sheetfmt"
	"github.com/xuri/excelize/v2"
)

// uuidRe is a UUID, as the service's IDs are.
var uuidRe = regexp.MustCompile(`\b([0-9a-fA-F]{8})-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b`)

// shortIDs are the columns of people's text whose IDs a workbook shows by their start ("customer
// 00304804… (Made)"), as the reports do: the whole IDs are in the reference columns and the CSV.
var shortIDs = map[string]bool{"target": true, "change": true, "note": true, "reconciled": true, "read": true, "missing": true}

// WriteTableFile writes a plan or result table as .csv or .xlsx, by the path's extension.
func WriteTableFile(path string, t *Table, o FileOptions) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o777); err != nil { // less the umask: a group may share it
		return fmt.Errorf("write %s: %w", path, err)
	}
	var err error
	switch strings.ToLower(filepath.Ext(path)) {
	case ".csv":
		err = writeCSV(path, t)
	case ".xlsx":
		err = writeXLSX(path, t, o)
	default:
		return fmt.Errorf("write %s: unknown file type: want .csv or .xlsx", path)
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// writeCSV writes the table as the reports' CSVs are: UTF-8 with a byte-order mark (Excel in an Indonesian
// Windows reads names such as Ñoño right only with it), CRLF, numbers in plain digits.
func writeCSV(path string, t *Table) error {
	var b bytes.Buffer
	b.WriteString("\ufeff")
	w := csv.NewWriter(&b)
	w.UseCRLF = true
	head := make([]string, len(t.Columns))
	for i, c := range t.Columns {
		head[i] = c.Title
	}
	w.Write(defuse(head))
	for _, r := range t.Rows {
		w.Write(defuse(r))
	}
	w.Flush()
	if err := w.Error(); err != nil {
		return err
	}
	return writeAtomic(path, b.Bytes())
}

// writeAtomic writes a file under a temporary name and renames it into place: a reader never sees half.
func writeAtomic(path string, b []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(f.Name(), 0o644)
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
	}
	return err
}

// defuse keeps a spreadsheet from running text that came from customers (names, descriptions) as a
// formula, with the one rule report files use, so readCSV can take the mark off again.
func defuse(r []string) []string {
	out := make([]string, len(r))
	for i, v := range r {
		out[i] = cellsafe.Text(v)
	}
	return out
}

// maxColWidth is the widest a column gets, in characters; longer text runs on into the empty cells.
const maxColWidth = 48

// wrapColWidth is the width of a printed text column of a plan or result (target, change, note …), in
// characters: longer text wraps.
const wrapColWidth = 22

// writeXLSX writes a workbook a reviewer can use: a summary sheet (what the plan is, who planned and approved
// it for which service, the total per product) and the rows, numbers as numbers in the reports' formats,
// columns as wide as their contents, printed like the reports (A4 landscape, one page wide, the header row
// on every page, a footer).
func writeXLSX(path string, t *Table, o FileOptions) error {
	l := o.lang()
	t = emptyOutOfPrint(t)
	cur := o.Currency
	if cur == "" {
		cur = "IDR"
	}
	f := excelize.NewFile()
	defer f.Close()
	st, err := newSheetStyles(f, cur, l)
	if err != nil {
		return err
	}
	summary := l.w("sheet.summary")
	if err := f.SetSheetName("Sheet1", summary); err != nil {
		return err
	}
	footer := sheetfmt.Footer(t.Title+" · "+l.w("page_footer")+" "+clock(time.Now(), o.loc()), string(l))
	if err := writeSummarySheet(f, summary, t, st, l, footer); err != nil {
		return fmt.Errorf("sheet %s: %w", summary, err)
	}
	if _, err := f.NewSheet(t.Name); err != nil {
		return err
	}
	if err := writeRowsSheet(f, t, st, l, footer); err != nil {
		return fmt.Errorf("sheet %s: %w", t.Name, err)
	}
	var buf bytes.Buffer
	if err := f.Write(&buf); err != nil {
		return err
	}
	return writeAtomic(path, buf.Bytes())
}

// saysWhy are the columns that explain a row (an error, a reconciliation's evidence, a note): the workbook
// prints them only when a row of the file has something in them.
var saysWhy = map[string]bool{"error": true, "reconciled": true, "read": true, "missing": true, "settle": true, "note": true}

// emptyOutOfPrint is the table with its explaining columns that are empty in every row moved among the
// reference columns, out of print: five empty columns of a result that succeeded would otherwise print as
// wide as their headers and push the rest onto a second page across. The CSV keeps the order it has.
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
		case saysWhy[c.Key] && empty(i):
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

// sheetStyles are the workbook's cell styles: the reports' header, numbers per unit, bold totals.
type sheetStyles struct {
	header, text, wrap, title, label, totalText int
	number, total                               map[unit]int
}

func newSheetStyles(f *excelize.File, currency string, l lang) (*sheetStyles, error) {
	st := &sheetStyles{number: map[unit]int{}, total: map[unit]int{}}
	var err error
	if st.header, err = f.NewStyle(sheetfmt.HeaderStyle()); err != nil {
		return nil, err
	}
	top := &excelize.Alignment{Vertical: "top"}
	if st.text, err = f.NewStyle(&excelize.Style{Alignment: &excelize.Alignment{Horizontal: "left", Vertical: "top", Indent: 1}}); err != nil {
		return nil, err
	}
	if st.wrap, err = f.NewStyle(&excelize.Style{Alignment: &excelize.Alignment{Horizontal: "left", Vertical: "top", Indent: 1, WrapText: true}}); err != nil {
		return nil, err
	}
	if st.title, err = f.NewStyle(&excelize.Style{Font: &excelize.Font{Family: "Calibri", Bold: true, Size: 16, Color: "1F4E79"}}); err != nil {
		return nil, err
	}
	if st.label, err = f.NewStyle(&excelize.Style{Font: &excelize.Font{Family: "Calibri", Bold: true}, Alignment: top}); err != nil {
		return nil, err
	}
	border := []excelize.Border{{Type: "top", Color: "000000", Style: 1}, {Type: "bottom", Color: "000000", Style: 6}}
	bold := &excelize.Font{Family: "Calibri", Bold: true}
	if st.totalText, err = f.NewStyle(&excelize.Style{Font: bold, Border: border}); err != nil {
		return nil, err
	}
	for _, u := range []unit{unitRupiah, unitCredit, unitCount} {
		nf, ok := sheetfmt.NumberFormat(string(u), currency, string(l))
		if !ok {
			return nil, fmt.Errorf("no number format for %s", u)
		}
		if st.number[u], err = f.NewStyle(&excelize.Style{CustomNumFmt: &nf, Alignment: top}); err != nil {
			return nil, err
		}
		if st.total[u], err = f.NewStyle(&excelize.Style{CustomNumFmt: &nf, Font: bold, Border: border, Alignment: top}); err != nil {
			return nil, err
		}
	}
	return st, nil
}

// cellValue is a table value as its cell holds it: a number for a number column, else text.
func cellValue(v string, u unit) (any, bool) {
	if u == unitNone || v == "" {
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

// shownWidth is about how many characters a value takes as its cell shows it.
func shownWidth(v string, u unit, l lang) int {
	if _, ok := cellValue(v, u); ok {
		n := utf8.RuneCountInString(l.number(v))
		if u == unitRupiah {
			n += 3 // "Rp "
		}
		return n
	}
	return utf8.RuneCountInString(v)
}

func writeRowsSheet(f *excelize.File, t *Table, st *sheetStyles, l lang, footer string) error {
	sh := t.Name
	widths := make([]int, len(t.Columns))
	for i, c := range t.Columns {
		widths[i] = min(maxColWidth, headerWidth(c.Title))
		cell, _ := excelize.CoordinatesToCellName(i+1, 1)
		if err := f.SetCellValue(sh, cell, c.Title); err != nil {
			return err
		}
	}
	last, _ := excelize.CoordinatesToCellName(len(t.Columns), 1)
	if err := f.SetCellStyle(sh, "A1", last, st.header); err != nil {
		return err
	}
	// Printed text columns wrap at wrapColWidth, each row as tall as its longest text: the page keeps
	// every column at a readable size (sheetfmt.MinScale) instead of shrinking or cutting them.
	wraps := func(c Column) bool { return c.Unit == unitNone && !c.Ref }
	for r, row := range t.Rows {
		lines := 1
		for i, v := range row {
			c := t.Columns[i]
			cell, _ := excelize.CoordinatesToCellName(i+1, r+2)
			if shortIDs[c.Key] {
				v = uuidRe.ReplaceAllString(v, "$1…")
			}
			val, isNum := cellValue(v, c.Unit)
			if err := f.SetCellValue(sh, cell, val); err != nil {
				return err
			}
			style := st.text
			switch {
			case isNum:
				style = st.number[c.Unit]
			case wraps(c):
				style = st.wrap
				lines = max(lines, sheetfmt.WrappedLines(v, wrapColWidth))
			}
			if err := f.SetCellStyle(sh, cell, cell, style); err != nil {
				return err
			}
			widths[i] = max(widths[i], min(maxColWidth, shownWidth(v, c.Unit, l)+3))
			if wraps(c) {
				widths[i] = min(widths[i], max(wrapColWidth, headerWidth(c.Title)))
			}
		}
		if lines > 1 {
			if err := f.SetRowHeight(sh, r+2, float64(15*lines)); err != nil {
				return err
			}
		}
	}
	for i, w := range widths {
		col, _ := excelize.ColumnNumberToName(i + 1)
		if err := f.SetColWidth(sh, col, col, float64(w)); err != nil {
			return err
		}
	}
	if err := f.SetRowHeight(sh, 1, 32); err != nil {
		return err
	}
	if err := f.SetPanes(sh, &excelize.Panes{Freeze: true, YSplit: 1, TopLeftCell: "A2", ActivePane: "bottomLeft"}); err != nil {
		return err
	}
	end, _ := excelize.CoordinatesToCellName(len(t.Columns), max(len(t.Rows)+1, 2))
	if err := f.AutoFilter(sh, "A1:"+end, nil); err != nil {
		return err
	}
	printed := slices.IndexFunc(t.Columns, func(c Column) bool { return c.Ref })
	if printed < 0 {
		printed = len(t.Columns)
	}
	page := sheetfmt.Page{TitleFirst: 1, TitleLast: 1}
	for _, w := range widths[:printed] {
		page.Widths = append(page.Widths, float64(w))
	}
	if err := printSetup(f, sh, footer, page); err != nil {
		return err
	}
	if printed == 0 {
		return nil
	}
	lastCol, _ := excelize.ColumnNumberToName(printed)
	return f.SetDefinedName(&excelize.DefinedName{Name: "_xlnm.Print_Area",
		RefersTo: fmt.Sprintf("'%s'!$A$1:$%s$%d", strings.ReplaceAll(sh, "'", "''"), lastCol, len(t.Rows)+1), Scope: sh})
}

// headerWidth is the width a header needs: it wraps, so its longest word, or the whole title when short.
func headerWidth(title string) int {
	w := 0
	for _, word := range strings.Fields(title) {
		w = max(w, utf8.RuneCountInString(word))
	}
	if n := utf8.RuneCountInString(title); n <= 8 {
		w = n
	}
	return w + 3
}

// printSetup is the reports' page setup: the scale the printed columns need (never below
// sheetfmt.MinScale), the title rows repeated on every page.
func printSetup(f *excelize.File, sh, footer string, p sheetfmt.Page) error {
	if err := sheetfmt.PageSetup(f, sh, footer, p); err != nil {
		return err
	}
	return sheetfmt.PrintTitles(f, sh, p)
}

// writeSummarySheet writes the plan's facts and its total per product (or the kind's grouping).
func writeSummarySheet(f *excelize.File, sh string, t *Table, st *sheetStyles, l lang, footer string) error {
	set := func(cell string, v any, style int) error {
		if err := f.SetCellValue(sh, cell, v); err != nil {
			return err
		}
		return f.SetCellStyle(sh, cell, cell, style)
	}
	if err := set("A1", t.Title, st.title); err != nil {
		return err
	}
	row := 3
	labelW, valueW := 12, 20
	for _, fact := range t.Facts {
		if err := set(fmt.Sprintf("A%d", row), fact[0], st.label); err != nil {
			return err
		}
		if err := set(fmt.Sprintf("B%d", row), fact[1], st.text); err != nil {
			return err
		}
		labelW = max(labelW, utf8.RuneCountInString(fact[0])+2)
		valueW = max(valueW, min(utf8.RuneCountInString(fact[1])+2, 90))
		row++
	}
	row++
	s := t.Summary
	groupTitle := l.w("group")
	if s.GroupBy != "" {
		groupTitle = l.w("group." + s.GroupBy)
	}
	head := []string{groupTitle, l.w("rows"), l.w("to_send")}
	if s.Unit != unitNone {
		head = append(head, l.w("sum."+string(s.Unit)), l.w("sum_to_send."+string(s.Unit)))
	}
	headRow := row
	for i, h := range head {
		cell, _ := excelize.CoordinatesToCellName(i+1, row)
		if err := set(cell, h, st.header); err != nil {
			return err
		}
	}
	row++
	var rows, toSend int
	var total, totalToSend float64
	for _, g := range s.Groups {
		name := g.Name
		if name == "" {
			name = l.w("all")
		}
		vals := []any{name, g.Rows, g.ToSend}
		if s.Unit != unitNone {
			vals = append(vals, g.Total, g.TotalToSend)
		}
		if err := setRow(f, sh, row, vals, []int{st.text, st.number[unitCount], st.number[unitCount], st.number[s.Unit], st.number[s.Unit]}); err != nil {
			return err
		}
		labelW = max(labelW, utf8.RuneCountInString(name)+3)
		rows, toSend, total, totalToSend = rows+g.Rows, toSend+g.ToSend, total+g.Total, totalToSend+g.TotalToSend
		row++
	}
	vals := []any{l.w("total"), rows, toSend}
	if s.Unit != unitNone {
		vals = append(vals, total, totalToSend)
	}
	if err := setRow(f, sh, row, vals, []int{st.totalText, st.total[unitCount], st.total[unitCount], st.total[s.Unit], st.total[s.Unit]}); err != nil {
		return err
	}
	// The facts' values run on over the empty cells to their right; the totals' columns fit their titles.
	if err := f.SetColWidth(sh, "A", "A", float64(min(labelW, maxColWidth))); err != nil {
		return err
	}
	for i := 2; i <= len(head); i++ {
		col, _ := excelize.ColumnNumberToName(i)
		if err := f.SetColWidth(sh, col, col, float64(max(18, headerWidth(head[i-1])))); err != nil {
			return err
		}
	}
	if err := f.SetRowHeight(sh, headRow, 48); err != nil {
		return err
	}
	page := sheetfmt.Page{TitleFirst: 1, TitleLast: 1}
	for i := 1; i <= max(len(head), 2); i++ {
		col, _ := excelize.ColumnNumberToName(i)
		w, err := f.GetColWidth(sh, col)
		if err != nil {
			return err
		}
		page.Widths = append(page.Widths, w)
	}
	return printSetup(f, sh, footer, page)
}

func setRow(f *excelize.File, sh string, row int, vals []any, styles []int) error {
	for i, v := range vals {
		cell, _ := excelize.CoordinatesToCellName(i+1, row)
		if fv, ok := v.(float64); ok && fv == math.Trunc(fv) && math.Abs(fv) < 1e15 {
			v = int64(fv)
		}
		if err := f.SetCellValue(sh, cell, v); err != nil {
			return err
		}
		if err := f.SetCellStyle(sh, cell, cell, styles[i]); err != nil {
			return err
		}
	}
	return nil
}

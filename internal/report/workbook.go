package report

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/billsync/billsync/internal/cellsafe"
	"github.com/billsync/billsync/internal/report/sheetxml"
	"github.com/billsync/billsync/internal/report/value"
	"github.com/billsync/billsync/internal/sheetfmt"
	"github.com/billsync/billsync/internal/tablefile"
	"github.com/billsync/billsync/queries"
	"github.com/xuri/excelize/v2"
)

// workbook is one report's .xlsx: a normally written summary sheet first and
// a streamed sheet per query.
type workbook struct {
	f      *excelize.File
	st     *styles
	loc    *time.Location
	l      *lang
	cur    string
	footer string // printed on every page
	sheets []*xlsxSheet
	same   *sameNames // names several customers or products carry
	mode   sheetxml.Mode
}

func newWorkbook(s *settings) (*workbook, error) {
	f := excelize.NewFile()
	if err := f.SetSheetName("Sheet1", summarySheet); err != nil {
		return nil, err
	}
	st, err := newStyles(f, s.Currency, s.lang)
	if err != nil {
		return nil, err
	}
	return &workbook{f: f, st: st, loc: s.loc, l: s.lang, cur: s.Currency, mode: s.rowsMode}, nil
}

// dataSheet makes a data sheet of the workbook; its rows may be written
// beside other sheets', but sheets are assembled in the order they were made.
func (w *workbook) dataSheet(name string, cols []column) *xlsxSheet {
	x := newXLSXSheet(w.f, w.st, w.loc, w.l, name, cols, w.footer)
	x.mode = w.mode
	w.sheets = append(w.sheets, x)
	return x
}

func (w *workbook) close() {
	for _, x := range w.sheets {
		if x.rows != nil {
			x.rows.Close()
		}
	}
	w.f.Close()
}

// save writes the workbook to path, each data sheet's body rows spliced into its part.
func (w *workbook) save(path string) error {
	rows := map[string]*sheetxml.Rows{}
	for _, x := range w.sheets {
		rows[x.name] = x.rows
	}
	return tablefile.Save(w.f, path, rows)
}

// summary fills the first sheet: what the report is, what it is based on,
// the headline figures and checks, how to reproduce it, the notes and the chart.
func (w *workbook) summary(d *Definition, s *settings, vars map[string]string, srcs []source, outs []sheetOutput) error {
	p := &summaryWriter{w: w, f: w.f, sh: summarySheet, l: w.l}
	title, desc := p.heading(d, s)
	// What the report says comes first, for the reader who stops at the first screen: the
	// headline figures and the checks, the chart, the notes that say what the figures mean.
	// How it was made (sources, settings, queries, the command that makes it again) closes the
	// page, under a heading of its own.
	p.figures(vars, outs)
	chartRow := p.chartSpace(d)
	sheetsRow := p.row + 1 // subtitle leaves a row empty first
	p.notes(d, noteValues(d, s, vars, w.l))
	p.sheetList(outs)
	p.about(d, s, vars, srcs, outs)
	if err := p.pageSetup(sheetsRow); err != nil {
		return err
	}
	if d.Chart != nil {
		if err := w.chart(d.Chart, outs, chartRow); err != nil {
			return fmt.Errorf("chart: %w", err)
		}
	}
	return w.nameSummary(d, s, title, desc)
}

// summaryWriter writes the summary sheet line by line: row is the next row to write.
type summaryWriter struct {
	w   *workbook
	f   *excelize.File
	sh  string
	l   *lang
	row int
}

// put writes one cell: text as its sheet shows it, a text that starts like a formula kept text.
func (p *summaryWriter) put(cell string, v any, style int) {
	if t, ok := v.(string); ok {
		v = cellsafe.Visible(t) // a product's name in the headline, as its sheet shows it
	}
	p.f.SetCellValue(p.sh, cell, v)
	if style == 0 {
		style = p.w.st.Value
	}
	if t, ok := v.(string); ok && cellsafe.StartsLikeFormula(t) && p.w.st.Quoted[style] != 0 {
		style = p.w.st.Quoted[style] // a product named "-Promo": text as it is, kept text when edited
	}
	p.f.SetCellStyle(p.sh, cell, cell, style)
}

// line writes a label and its value on the next row.
func (p *summaryWriter) line(label string, v any, style int) {
	p.put(cellName(1, p.row), label, p.w.st.Label)
	p.put(cellName(2, p.row), v, style)
	// The value spans the columns a headline table's figures take.
	p.f.MergeCell(p.sh, cellName(2, p.row), cellName(1+summaryTableCols, p.row))
	text, _ := v.(string)
	fitHeight(p.f, p.row, label, text, summaryWidth)
	p.row++
}

// subtitle heads a part of the page, a row left empty above it.
func (p *summaryWriter) subtitle(text string) {
	p.row++
	p.put(cellName(1, p.row), text, p.w.st.Subtitle)
	p.row++
}

// heading writes the title, the description, the as-of date and the warnings; it returns the
// title and description for the document's properties.
func (p *summaryWriter) heading(d *Definition, s *settings) (title, desc string) {
	l := p.l
	title = d.Title.In(l.code)
	p.put("A1", title, p.w.st.Title)
	desc = strings.Join(strings.Fields(d.Description.In(l.code)), " ")
	p.put("A2", desc, p.w.st.Wrap)
	p.f.MergeCell(p.sh, "A2", cellName(2+summaryTableCols, 2)) // across the label, value and notes' columns
	p.f.SetRowHeight(p.sh, 2, 36)
	p.row = 4
	p.line(l.w("as_of"), l.date(s.AsOf), 0)
	if len(s.warnings) > 0 || s.Notice != "" {
		var texts []string
		if s.Notice != "" {
			texts = append(texts, s.Notice)
		}
		for _, a := range s.warnings {
			texts = append(texts, a.text(l))
		}
		p.line(l.w("warning"), strings.Join(texts, "\n"), p.w.st.SumCheckBad)
	}
	return title, desc
}

// figures writes the headline figures and tables, then the checks.
func (p *summaryWriter) figures(vars map[string]string, outs []sheetOutput) {
	w := p.w
	text := summaryLines{l: p.l, cur: w.cur, same: w.same, vars: vars}
	styled := func(label string, v any, ls lineStyle) { p.line(label, v, w.style(ls)) }
	text.headlines(outs, p.subtitle, styled, func(label string, v any, c column) {
		p.line(label, v, w.st.Left[c.format])
	}, p.table)
	text.checkLines(outs, p.subtitle, func(label, text string, ok bool, plain bool) {
		style := w.st.SumCheck
		switch {
		case plain:
			style = w.st.Wrap
		case !ok:
			style = w.st.SumCheckBad
		}
		p.line(label, text, style)
	})
}

// table writes a headline table: a cell per figure, typed, in the sheet's number format, under
// its title; the label in its own cell; the sheet's totals row last.
func (p *summaryWriter) table(t headTable) {
	st := p.w.st
	p.put(cellName(1, p.row), t.labelTitle, st.TableHeadLabel)
	lines := sheetfmt.WrappedLines(t.labelTitle, labelWidth-1)
	for k, c := range t.cols {
		p.put(cellName(2+k, p.row), c.title, st.TableHead)
		lines = max(lines, sheetfmt.WrappedLines(c.title, summaryTableWidth-1))
	}
	if lines > 1 {
		p.f.SetRowHeight(p.sh, p.row, float64(15*lines))
	}
	p.row++
	for _, r := range t.rows {
		p.tableRow(t, r.label, r.values, st.Label, st.Body, nil)
	}
	if t.total != nil {
		p.tableRow(t, t.total.label, t.total.values, st.TableTotal, st.Total, t.totalOf)
	}
	if more := t.moreText(p.l); more != "" {
		p.line("…", more, 0)
	}
}

// tableRow writes one row of a headline table; blank, for the totals row, says which columns
// have a total (the others stay empty).
func (p *summaryWriter) tableRow(t headTable, label string, values []any, style int, styles map[string]int, blank []bool) {
	p.put(cellName(1, p.row), label, style)
	for k, c := range t.cols {
		cell := cellName(2+k, p.row)
		switch v := values[k]; {
		case blank != nil && !blank[k]:
			p.put(cell, "", p.w.st.TableTotal)
		case v == nil:
			p.put(cell, c.empty, p.w.st.Reason) // why there is none, as the sheet says
		default:
			p.put(cell, cellNumber(v), styles[c.format])
		}
	}
	fitHeight(p.f, p.row, label, "", summaryWidth)
	p.row++
}

// chartSpace leaves the rows the chart floats over and returns the first (0: no chart). The
// rows are empty and of the default height, as tall as the chart, so the rows below it stay
// visible (excelize anchors a chart by default row heights).
func (p *summaryWriter) chartSpace(d *Definition) int {
	if d.Chart == nil {
		return 0
	}
	p.row++
	chartRow := p.row
	p.row += chartRows
	return chartRow
}

// noteValues are what the notes' {placeholders} read: the report variables, a choice among
// values also in words, dates as the locale writes them.
func noteValues(d *Definition, s *settings, vars map[string]string, l *lang) map[string]string {
	vals := map[string]string{"journal": s.journal.path, "currency": s.Currency}
	for k, v := range vars {
		vals[k] = v
		// A choice among values (aging_basis = due) in words: {aging_basis_name} = "tanggal jatuh tempo".
		if slices.ContainsFunc(d.Vars, func(x Var) bool { return x.Name == k && len(x.Values) > 0 }) {
			vals[k+"_name"] = l.codeName(k + "=" + v)
		}
		// Notes read dates as the locale writes them (1 Nov 2026), as the cells do;
		// the parameters line below keeps the values as typed.
		if k == "as_of" || slices.ContainsFunc(d.Vars, func(x Var) bool { return x.Name == k && x.Type == "DATE" }) {
			if t, err := time.Parse(time.DateOnly, v); err == nil {
				vals[k] = l.date(t)
			}
		}
	}
	return vals
}

// notes writes the report's notes, a bullet each, their placeholders filled from vals.
func (p *summaryWriter) notes(d *Definition, vals map[string]string) {
	p.subtitle(p.l.w("notes"))
	for _, n := range d.Notes {
		p.put(cellName(1, p.row), "•", p.w.st.Label)
		text := expand(n.In(p.l.code), vals)
		p.put(cellName(2, p.row), text, p.w.st.Wrap)
		p.f.MergeCell(p.sh, cellName(2, p.row), cellName(2+summaryTableCols, p.row)) // noteExtraWidth wider
		fitHeight(p.f, p.row, "", text, summaryWidth+noteExtraWidth)
		p.row++
	}
}

// sheetList names each data sheet with its row count and query.
func (p *summaryWriter) sheetList(outs []sheetOutput) {
	l := p.l
	p.subtitle(l.w("sheets"))
	for _, o := range outs {
		p.line(o.sheet.tab(l.code), fmt.Sprintf(l.w("rows_from"), l.count(o.rows), o.sheet.Query), 0)
	}
}

// about says how the report was made: the accounts and sync runs it read, its settings, the
// command that makes it again and the digests of its queries.
func (p *summaryWriter) about(d *Definition, s *settings, vars map[string]string, srcs []source, outs []sheetOutput) {
	l, st := p.l, p.w.st
	p.subtitle(l.w("about"))
	accounts := s.Account
	if accounts == "" {
		var names []string
		for _, src := range srcs {
			names = append(names, src.account)
		}
		accounts = fmt.Sprintf(l.w("all_accounts"), strings.Join(names, ", "))
	}
	p.line(l.w("account"), accounts, 0)
	var runs []string
	for _, src := range srcs {
		runs = append(runs, src.text(p.w.loc, l))
	}
	if len(runs) == 0 {
		runs = []string{l.w("no_run")}
	}
	p.line(l.w("runs"), strings.Join(runs, "\n"), st.Wrap)
	p.line(l.w("tz"), s.TZ.String(), 0)
	if slices.ContainsFunc(outs, func(o sheetOutput) bool {
		return slices.ContainsFunc(o.cols, func(c column) bool { return c.format == "money" })
	}) {
		p.line(l.w("currency"), fmt.Sprintf(l.w("currency_note"), s.Currency), 0)
	}
	p.line(l.w("warehouse"), s.DB, 0)
	if readsJournal(d) {
		p.line(l.w("journal"), s.journal.text(l), st.Wrap)
	}
	p.line(l.w("generated"), l.dateTime(time.Now(), p.w.loc), 0)
	p.line(l.w("params"), params(d, vars, l), st.Wrap)
	p.line(l.w("reproduce"), reproduce(d, s), st.Wrap)
	p.line(l.w("queries"), queryDigests(d), st.Wrap)
}

// pageSetup breaks the page before sheetsRow when the summary does not fit one, sets the
// columns' widths and the print settings.
func (p *summaryWriter) pageSetup(sheetsRow int) error {
	f, sh := p.f, p.sh
	if summaryHeight(f, p.row) > summaryPageHeight && summaryHeight(f, sheetsRow) <= summaryPageHeight {
		// Too long for one page: what the report says (headline, checks, chart) on the first,
		// what the figures mean and how they were made from the top of the next, not a few
		// lines cut off.
		// (When the headline alone is longer than a page, the summary just runs on.)
		if err := f.InsertPageBreak(sh, cellName(1, sheetsRow)); err != nil {
			return err
		}
	}
	f.SetColWidth(sh, "A", "A", labelWidth)
	valueCols, _ := excelize.ColumnNumberToName(1 + summaryTableCols)
	noteCol, _ := excelize.ColumnNumberToName(2 + summaryTableCols)
	f.SetColWidth(sh, "B", valueCols, summaryTableWidth)
	f.SetColWidth(sh, noteCol, noteCol, noteExtraWidth)
	return summaryPrint(f, sh, p.w.footer)
}

// nameSummary names the summary's tab in the report's language, once everything refers to
// it, and sets the document's properties.
func (w *workbook) nameSummary(d *Definition, s *settings, title, desc string) error {
	l := w.l
	if err := w.f.SetSheetName(summarySheet, l.w("summary")); err != nil {
		return err
	}
	return w.f.SetDocProps(&excelize.DocProperties{
		Title:       title + " " + l.w("as_of_footer") + " " + s.asOf,
		Subject:     title,
		Description: desc,
		Creator:     "billsync report",
		Keywords:    "billsync, " + d.Name + ", " + s.asOf,
		Category:    "Finance report",
		Created:     time.Now().UTC().Format(time.RFC3339),
		Modified:    time.Now().UTC().Format(time.RFC3339),
		Language:    l.code,
	})
}

// style is the style of a summary line.
func (w *workbook) style(ls lineStyle) int {
	switch ls {
	case labelLine:
		return w.st.Label
	case wrapLine:
		return w.st.Wrap
	}
	return 0
}

// params lists the effective values of the report's variables.
func params(d *Definition, vars map[string]string, l *lang) string {
	names := []string{"as_of", "tz", "account"}
	for _, v := range d.Vars {
		names = append(names, v.Name)
	}
	var parts []string
	for _, n := range names {
		v, ok := vars[n]
		if !ok || v == "" {
			v = l.w("all")
			if n != "account" {
				v = l.w("query_default")
			}
		}
		parts = append(parts, n+" = "+v)
	}
	return strings.Join(parts, "; ")
}

// reproduce is the command line that makes this report again from the same warehouse.
// Every setting that shows in the workbook is spelled out, defaults included: the
// reader's environment (BILLSYNC_LOCALE, BILLSYNC_CURRENCY, BILLSYNC_JOURNAL) may differ.
func reproduce(d *Definition, s *settings) string {
	args := []string{"report", "-db", s.DB, "-as-of", s.asOf, "-tz", s.TZ.String(), "-locale", s.Locale}
	if slices.ContainsFunc(d.Sheets, func(x Sheet) bool {
		return slices.ContainsFunc(x.Columns, func(c Column) bool { return c.Format == "money" })
	}) {
		args = append(args, "-currency", s.Currency)
	}
	if readsJournal(d) && s.Journal != "" {
		args = append(args, "-journal", s.Journal)
	}
	if s.Account != "" {
		args = append(args, "-account", s.Account)
	}
	var names []string
	for name := range s.Vars {
		if slices.ContainsFunc(d.Vars, func(v Var) bool { return v.Name == name }) {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	for _, n := range names {
		args = append(args, "-var", n+"="+s.Vars[n])
	}
	return strings.Join(append(args, d.Name), " ")
}

// readsJournal says whether a report reads the write-job journal (the credit
// queries' reported balances).
func readsJournal(d *Definition) bool {
	return slices.ContainsFunc(d.Sheets, func(x Sheet) bool { return strings.HasPrefix(x.Query, "credit_") })
}

// queryDigests names each query file with the start of its SHA-256, so a
// reader can tell which SQL produced the numbers.
func queryDigests(d *Definition) string {
	var parts []string
	for _, sh := range d.Sheets {
		b, err := fs.ReadFile(queries.FS, sh.Query)
		if err != nil {
			continue
		}
		sum := sha256.Sum256(b)
		parts = append(parts, "queries/"+sh.Query+" sha256:"+hex.EncodeToString(sum[:6]))
	}
	return strings.Join(parts, "\n")
}

// chart adds the definition's chart to the summary sheet, pointing at the
// cells of a data sheet (charts cannot go on streamed sheets).
func (w *workbook) chart(c *Chart, outs []sheetOutput, row int) error {
	i := slices.IndexFunc(outs, func(o sheetOutput) bool { return strings.EqualFold(o.sheet.Name, c.Sheet) })
	if i < 0 {
		return fmt.Errorf("sheet %q not written", c.Sheet)
	}
	o := outs[i]
	if o.rows == 0 {
		w.f.SetCellValue(summarySheet, cellName(1, row), w.l.w("no_chart"))
		w.f.SetCellStyle(summarySheet, cellName(1, row), cellName(1, row), w.st.Value)
		return nil
	}
	ref := tablefile.SheetRef(o.sheet.tab(w.l.code))
	colOf := func(name string) (int, error) {
		j := slices.IndexFunc(o.cols, func(col column) bool { return col.name == name })
		if j < 0 {
			return 0, fmt.Errorf("column %s not in the query result", name)
		}
		return j + 1, nil
	}
	var series []excelize.ChartSeries
	switch c.From {
	case "totals":
		first, err := colOf(c.Columns[0])
		if err != nil {
			return err
		}
		last := first + len(c.Columns) - 1
		for k, name := range c.Columns {
			if j, err := colOf(name); err != nil || j != first+k {
				return fmt.Errorf("columns %v must be adjacent in the query result", c.Columns)
			}
		}
		series = append(series, excelize.ChartSeries{
			Name:       ref + "$A$" + fmt.Sprint(o.total),
			Categories: ref + absRange(first, 1, last, 1),
			Values:     ref + absRange(first, o.total, last, o.total),
		})
	case "rows":
		cat, err := colOf(c.Category)
		if err != nil {
			return err
		}
		for _, name := range c.Columns {
			j, err := colOf(name)
			if err != nil {
				return err
			}
			series = append(series, excelize.ChartSeries{
				Name:       ref + absRange(j, 1, j, 1),
				Categories: ref + absRange(cat, 2, cat, o.rows+1),
				Values:     ref + absRange(j, 2, j, o.rows+1),
			})
		}
	}
	legend := excelize.ChartLegend{Position: "bottom"}
	if len(series) == 1 {
		legend.Position = "none"
	}
	// 10 pt: the summary prints at 85 %, and the chart's text with it (8.5 pt, not below sheetfmt.MinBodyPt)
	dark := excelize.Font{Color: "262626", Size: 10}
	axis := excelize.ChartAxis{MajorGridLines: true, NumFmt: excelize.ChartNumFmt{CustomNumFmt: w.l.lcid + "#,##0"}, Font: dark}
	if col := o.cols[slices.IndexFunc(o.cols, func(col column) bool { return col.name == c.Columns[0] })]; col.format == "money" {
		// Amounts run to billions of rupiah: the axis counts millions, in
		// words the locale reads as millions ("M" is miliar in Indonesian).
		axis.NumFmt.CustomNumFmt = w.l.lcid + w.l.millionsAx
		axis.Title = excelize.ChartTitle{Paragraph: []excelize.RichTextRun{{Text: moneySymbol(w.cur) + " " + w.l.millions, Font: &dark}}}
	}
	xAxis := excelize.ChartAxis{Font: dark}
	if c.From == "rows" {
		cat := o.cols[slices.IndexFunc(o.cols, func(col column) bool { return col.name == c.Category })]
		if cat.kind == value.KindDate || cat.kind == value.KindTime || cat.kind == value.KindWall {
			// Date categories have no cached text in the file; the axis
			// formats them, short enough for a year of months side by side,
			// the year marked as one ("Des 25" reads as the 25th of December).
			xAxis.NumFmt.CustomNumFmt = w.l.lcid + `mmm "'"yy`
		}
	}
	types := map[string]excelize.ChartType{"col": excelize.Col, "bar": excelize.Bar, "line": excelize.Line, "pie": excelize.Pie}
	return w.f.AddChart(summarySheet, cellName(1, row), &excelize.Chart{
		Type:      types[c.Type],
		Series:    series,
		Title:     excelize.ChartTitle{Paragraph: []excelize.RichTextRun{{Text: c.Title.In(w.l.code)}}},
		Dimension: excelize.ChartDimension{Width: 720, Height: 360},
		Legend:    legend,
		YAxis:     axis,
		XAxis:     xAxis,
		PlotArea:  excelize.ChartPlotArea{ShowVal: false},
		Format:    excelize.GraphicOptions{OffsetX: 4, OffsetY: 4},
	})
}

// summaryPrint prints the summary portrait, its used columns at the scale they need (never below
// sheetfmt.MinScale), its title on every page. The print area is the used columns: a value
// longer than its cell wraps (fitHeight) rather than running off the page.
func summaryPrint(f *excelize.File, sh, footer string) error {
	p, err := summaryPage(f, sh)
	if err != nil {
		return err
	}
	if err := sheetfmt.PageSetup(f, sh, footer, p); err != nil {
		return err
	}
	if err := sheetfmt.PrintTitles(f, sh, p); err != nil {
		return err
	}
	rows, err := f.GetRows(sh)
	if err != nil {
		return err
	}
	ref := tablefile.SheetRef(sh)
	return f.SetDefinedName(&excelize.DefinedName{Name: "_xlnm.Print_Area", RefersTo: ref + absRange(1, 1, len(p.Widths), max(len(rows), 1)+chartRows), Scope: sh})
}

// summaryPage is the summary's printed page: portrait, the widths of the columns it uses (at
// least the label, value and notes' columns), the title row repeated.
func summaryPage(f *excelize.File, sh string) (sheetfmt.Page, error) {
	cols, err := f.GetCols(sh)
	if err != nil {
		return sheetfmt.Page{}, err
	}
	p := sheetfmt.Page{Portrait: true, TitleFirst: 1, TitleLast: 1}
	for i := 1; i <= max(len(cols), 2+summaryTableCols); i++ {
		name, _ := excelize.ColumnNumberToName(i)
		w, err := f.GetColWidth(sh, name)
		if err != nil {
			return p, err
		}
		p.Widths = append(p.Widths, w)
	}
	return p, nil
}

// summaryPageHeight is how many points of summary rows print on one A4 page at the scale the
// summary's three columns print at, less a tenth for the title repeated on the next page and for
// readers whose fonts run taller.
var summaryPageHeight = sheetfmt.PrintableHeight(true) * 100 / float64(sheetfmt.Scale([]float64{labelWidth, summaryWidth, noteExtraWidth}, true)) * 0.9

// chartRows is how many summary rows of the default 15 points the chart floats over: its
// 360 pixels (270 points) and a margin below it, as LibreOffice prints it a little taller.
const chartRows = 21

// summaryHeight is the height of the summary's rows before row (the chart's row included), in points.
func summaryHeight(f *excelize.File, row int) float64 {
	h := 0.0
	for r := 1; r < row; r++ {
		rh, err := f.GetRowHeight(summarySheet, r)
		if err != nil {
			rh = 15
		}
		h += rh
	}
	return h
}

// cellNumber is a figure as a typed cell value: a DECIMAL as the float the sheets write.
func cellNumber(v any) any {
	if d, ok := v.(value.Decimal); ok {
		return d.Float64()
	}
	return v
}

// fitHeight makes a summary row tall enough for its wrapped label and text
// (text is width characters wide); readers do not grow rows of files they did
// not write themselves.
func fitHeight(f *excelize.File, row int, label, text string, width int) {
	// As rendered, a bold label of labelWidth-1 characters fits its column and
	// plain text about a fifth more than its width; counting plain text at its
	// width leaves room for a wider font.
	if n := max(sheetfmt.WrappedLines(label, labelWidth-1), sheetfmt.WrappedLines(text, width)); n > 1 {
		f.SetRowHeight(summarySheet, row, float64(15*n))
	}
}

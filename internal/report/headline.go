package report

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"
)

// sheetOutput is what one data sheet produced, for the summary.
type sheetOutput struct {
	sheet *Sheet
	cols  []column
	rows  int
	check *checkResult
	total int // row number of the totals row in the workbook, 0 = none
	tot   *totals
	// headRows are the first rows of a headline sheet, for the summary.
	headRows [][]any
	// counted is the rows the sheet's count says (Count): every row, or those CountWhere picks.
	counted int
}

// source is the newest sync run of an account in the warehouse.
type source struct {
	account                      string
	lastRun                      int64
	lastStatus                   string
	lastFinished                 time.Time
	lastSucceeded                int64
	lastSucceededAt              time.Time
	hasLastFinished, hasSucceded bool
}

func sources(ctx context.Context, conn *sql.Conn) ([]source, error) {
	var out []source
	err := stream(ctx, conn, "report_sources.sql", func(result) error { return nil }, func(v []any) error {
		src := source{}
		src.account, _ = v[0].(string)
		src.lastRun, _ = v[1].(int64)
		src.lastStatus, _ = v[2].(string)
		src.lastFinished, src.hasLastFinished = v[3].(time.Time)
		src.lastSucceeded, src.hasSucceded = v[4].(int64)
		src.lastSucceededAt, _ = v[5].(time.Time)
		out = append(out, src)
		return nil
	})
	return out, err
}

func (src source) text(loc *time.Location, l *lang) string {
	s := src.account + ": " + fmt.Sprintf(l.w("run"), src.lastRun, l.codeName(src.lastStatus))
	if src.hasLastFinished {
		s += fmt.Sprintf(l.w("finished"), l.dateTime(src.lastFinished, loc))
	}
	s += ")"
	if src.hasSucceded && src.lastSucceeded != src.lastRun {
		s += fmt.Sprintf(l.w("last_ok"), src.lastSucceeded, l.dateTime(src.lastSucceededAt, loc))
	}
	return s
}

// summaryLines is what a report's summary says, in its language: the workbook's summary sheet
// and the digest say it alike.
type summaryLines struct {
	l    *lang
	cur  string            // currency
	same *sameNames        // names several customers or products carry
	vars map[string]string // the report's variables, for a count's label ({window_days})
}

// lineStyle is how a line of the summary looks.
type lineStyle int

const (
	plainLine lineStyle = iota
	labelLine           // a heading of lines
	wrapLine            // text that wraps
)

// checkLines says each sheet's check and exceptions count, under the subtitle Checks (said
// before the first): ok false is a failed check or exceptions found; plain is a count of 0
// that proves nothing, nothing having been checked.
func (w *summaryLines) checkLines(outs []sheetOutput, subtitle func(string), say func(label, text string, ok, plain bool)) {
	l := w.l
	checks := false
	for _, o := range outs {
		if o.check == nil && o.sheet.Exceptions == nil {
			continue
		}
		if !checks {
			subtitle(l.w("checks"))
			checks = true
		}
		if o.check != nil {
			say(o.sheet.tab(l.code), o.check.text(l), o.check.ok, false)
		}
		if e := o.sheet.Exceptions; e != nil && o.tot != nil {
			// Green says "checked, and none failed"; with nothing checked a count of 0
			// proves nothing, so it is said in the plain style.
			text := fmt.Sprintf(l.w("exceptions"), e.Label.In(l.code), l.count(o.tot.excCount), l.count(o.tot.excRows), l.count(o.tot.rows))
			ok, plain := o.tot.excCount == 0, false
			if ok && o.tot.excRows == 0 {
				label := e.Label.In(l.code)
				if none := e.None.In(l.code); none != "" {
					label = none
				}
				text, plain = fmt.Sprintf(l.w("exceptions_none"), label, l.count(o.tot.rows)), true
			}
			say(o.sheet.tab(l.code), text, ok, plain)
		}
	}
}

// headRow is one row of a headline sheet as the summary shows it: its label and its figures,
// both taken from the same query row, so a label cannot stand beside another row's figures.
type headRow struct {
	label  string
	values []any // by headTable.cols; nil is the column's empty text (the totals row: blank)
}

// headTable is a headline sheet as the summary shows it: a row per subtotal, a column per
// figure, and the sheet's totals row when it has one.
type headTable struct {
	tab        string   // the sheet's tab name
	labelTitle string   // the label column's heading: its text columns' titles ("Produk · Dompet")
	cols       []column // the figures' columns
	rows       []headRow
	total      *headRow // the sheet's totals row; nil without
	more       int      // rows of the sheet the summary leaves to it (beyond headlineRows)
	// totalOf says which figures the totals row has (a count of customers per product does
	// not add up across products: blank there).
	totalOf []bool
}

// headTableOf is a headline sheet's first rows, each label made from the same row as its figures.
func (w *summaryLines) headTableOf(o sheetOutput) headTable {
	l := w.l
	t := headTable{tab: o.sheet.tab(l.code)}
	var labelCols, figs []int
	ref := -1
	for i, c := range o.cols {
		switch {
		case c.reference:
			if ref < 0 {
				ref = i // the first reference column (an ID) tells rows of the same name apart
			}
		case c.format == "text" || c.format == "":
			labelCols = append(labelCols, i)
		case !c.offHeadline:
			figs = append(figs, i)
		}
	}
	var titles []string
	for _, i := range labelCols {
		titles = append(titles, o.cols[i].title)
	}
	t.labelTitle = strings.Join(titles, " · ")
	for _, i := range figs {
		t.cols = append(t.cols, o.cols[i])
	}
	shown := o.headRows[:min(len(o.headRows), headlineRows)]
	t.more = o.rows - len(shown)
	ids := make([]string, len(shown))
	for _, r := range shown {
		var label []string
		for _, i := range labelCols {
			c := o.cols[i]
			if v, ok := r[i].(string); ok {
				if c.codes {
					v = l.codeName(v)
				}
				if c.apartKind != "" {
					// a name another product carries too, as the sheet prints it
					id, _ := r[c.apartID].(string)
					v, _ = w.same.label(c.apartKind, v, id)
				}
				label = append(label, v)
			} else if r[i] == nil && c.empty != "" {
				label = append(label, c.empty) // why there is none, as the sheet says
			}
		}
		hr := headRow{label: strings.Join(label, " · ")}
		for _, i := range figs {
			hr.values = append(hr.values, r[i])
		}
		if ref >= 0 {
			ids[len(t.rows)], _ = r[ref].(string)
		}
		t.rows = append(t.rows, hr)
	}
	for k := range t.rows {
		same := 0
		for _, r := range t.rows {
			if r.label == t.rows[k].label {
				same++
			}
		}
		if id := ids[k]; id != "" && same > 1 {
			// Two products of one name (the service allows it): the start of the ID, as the
			// sheet's ID column has it (or the account, for one state in two accounts).
			if len([]rune(id)) > 8 {
				id = string([]rune(id)[:8]) + "…"
			}
			t.rows[k].label += " (" + id + ")"
		}
	}
	if len(o.sheet.Totals) > 0 && o.tot != nil {
		total := headRow{label: o.sheet.Totals.In(l.code)}
		for _, c := range t.cols {
			v, ok := o.tot.value(c)
			if !ok || !c.total.any() {
				v = nil
			}
			total.values = append(total.values, v)
			t.totalOf = append(t.totalOf, ok && c.total.any())
		}
		t.total = &total
	}
	return t
}

// text is each of a table's cells as the workbook shows it: the heading (the label column's,
// then the figures'), the rows and the totals row (nil without), each label first.
func (t headTable) text(l *lang, cur string) (head []string, rows [][]string, total []string) {
	head = []string{t.labelTitle}
	for _, c := range t.cols {
		head = append(head, c.title)
	}
	for _, r := range t.rows {
		cells := []string{r.label}
		for k, c := range t.cols {
			cells = append(cells, l.format(r.values[k], c, cur))
		}
		rows = append(rows, cells)
	}
	if t.total != nil {
		total = []string{t.total.label}
		for k, c := range t.cols {
			if !t.totalOf[k] {
				total = append(total, "")
				continue
			}
			total = append(total, l.format(t.total.values[k], c, cur))
		}
	}
	return head, rows, total
}

// moreText says where a cut table's other rows are; empty when it shows them all.
func (t headTable) moreText(l *lang) string {
	if t.more <= 0 {
		return ""
	}
	return fmt.Sprintf(l.w("more_rows"), l.count(t.more), t.tab)
}

// headlines puts each totals row's figures on the summary (fig), the rows of a headline sheet
// (subtotals) as lines, or as a table (table) when the sheet says so, and each count a sheet
// names (count, count_where).
func (w *summaryLines) headlines(outs []sheetOutput, subtitle func(string), line func(string, any, lineStyle),
	fig func(label string, v any, c column), table func(headTable)) {
	l := w.l
	first := true
	head := func() {
		if first {
			subtitle(l.w("headline"))
			first = false
		}
	}
	// A figure is named by its own words ("Total terutang"); the sheet's name goes before it
	// only where two sheets have a figure of that name (Per produk: Ulasan, Tren bulanan: Ulasan).
	label := func(c column) string {
		if c.summary != "" {
			return c.summary
		}
		return c.title
	}
	names := map[string]int{}
	for _, o := range outs {
		if o.sheet.Headline || len(o.sheet.Totals) == 0 || o.tot == nil {
			continue
		}
		for _, c := range o.cols {
			if headlineFigure(c) {
				names[label(c)]++
			}
		}
	}
	for _, o := range outs {
		if o.sheet.Headline {
			head()
			t := w.headTableOf(o)
			if o.sheet.HeadlineTable {
				if len(t.rows) == 0 {
					line(t.tab, l.w("none_rows"), plainLine)
				} else {
					table(t)
				}
			} else {
				w.headlineLines(t, line)
			}
			continue
		}
		if n := expand(o.sheet.Count.In(l.code), w.vars); n != "" {
			head()
			fig(n, int64(o.counted), column{format: "int"})
		}
		if len(o.sheet.Totals) == 0 || o.tot == nil {
			continue
		}
		for _, c := range o.cols {
			if !headlineFigure(c) {
				continue
			}
			v, ok := o.tot.value(c)
			if !ok {
				continue
			}
			head()
			text := label(c)
			if names[text] > 1 {
				text = o.sheet.tab(l.code) + ": " + text
			}
			fig(text, v, c)
		}
	}
}

// headlineFigure says whether a column's total is one of the summary's headline figures: a
// number, not left off by the definition (a count the sheet states twice, as a number and a share).
func headlineFigure(c column) bool {
	switch c.format {
	case "text", "", "date", "datetime", "month":
		return false
	}
	return !c.offHeadline
}

// headlineLines puts each row of a small sheet (subtotals) on the summary: its label, and its
// figures as a line of text.
func (w *summaryLines) headlineLines(t headTable, line func(string, any, lineStyle)) {
	l := w.l
	// The sheet's name heads its lines once, saying what a code alone ("OK") is the state of.
	line(t.tab, "", labelLine)
	for _, r := range t.rows {
		var figures []string
		for k, c := range t.cols {
			if len(t.cols) == 1 { // the heading says what the one figure is
				figures = append(figures, l.format(r.values[k], c, w.cur))
			} else {
				figures = append(figures, c.title+" "+l.format(r.values[k], c, w.cur))
			}
		}
		line(r.label, strings.Join(figures, "; "), wrapLine)
	}
	if more := t.moreText(l); more != "" {
		line("…", more, plainLine)
	}
	if len(t.rows) == 0 {
		line("", l.w("none_rows"), plainLine)
	}
}

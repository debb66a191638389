package report

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
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
	cur  string     // currency
	same *sameNames // names several customers or products carry
}

// lineStyle is how a line of the summary looks.
type lineStyle int

const (
	plainLine     lineStyle = iota
	labelLine               // a heading of lines
	wrapLine                // text that wraps
	tableLine               // a row of a headline table, in a fixed-width font
	tableHeadLine           // a headline table's header
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

// headlines puts each totals row's figures on the summary (fig), and the rows of
// a headline sheet (subtotals) as a small table.
func (w *summaryLines) headlines(row *int, outs []sheetOutput, subtitle func(string), line func(string, any, lineStyle),
	fig func(label string, v any, c column)) {
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
			if o.sheet.HeadlineTable {
				w.headlineTable(o, line)
			} else {
				w.headlineLines(o, line)
			}
			continue
		}
		if len(o.sheet.Totals) == 0 || o.tot == nil {
			continue
		}
		if n := o.sheet.Count.In(l.code); n != "" {
			head()
			fig(n, int64(o.rows), column{format: "int"})
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

// headlineTable puts the rows of a small sheet (subtotals) on the summary as a table: a header
// line of the figures' titles, then each row's label and its figures under them, aligned.
func (w *summaryLines) headlineTable(o sheetOutput, line func(string, any, lineStyle)) {
	l := w.l
	var labelTitles []string
	var figs []int
	for i, c := range o.cols {
		switch {
		case c.reference:
		case c.format == "text" || c.format == "":
			labelTitles = append(labelTitles, c.title)
		case !c.offHeadline:
			figs = append(figs, i)
		}
	}
	rows := o.headRows[:min(len(o.headRows), headlineRows)]
	cells := make([][]string, len(rows))
	widths := make([]int, len(figs))
	for k, i := range figs {
		widths[k] = utf8.RuneCountInString(o.cols[i].title)
	}
	for r, row := range rows {
		for k, i := range figs {
			v := l.format(row[i], o.cols[i], w.cur)
			cells[r] = append(cells[r], v)
			widths[k] = max(widths[k], utf8.RuneCountInString(v))
		}
	}
	pad := func(vals []string) string {
		var b strings.Builder
		for k, v := range vals {
			if k > 0 {
				b.WriteString("  ")
			}
			b.WriteString(strings.Repeat(" ", widths[k]-utf8.RuneCountInString(v)) + v)
		}
		return b.String()
	}
	titles := make([]string, len(figs))
	for k, i := range figs {
		titles[k] = o.cols[i].title
	}
	if len(rows) == 0 {
		line(o.sheet.tab(l.code), l.w("none_rows"), plainLine)
		return
	}
	labels := w.headlineLabels(o)
	head := strings.Join(labelTitles, " · ")
	line(head, pad(titles), tableHeadLine)
	for r := range rows {
		// the label's title is the table's header: the code alone ("OK")
		line(strings.TrimPrefix(labels[r], head+": "), pad(cells[r]), tableLine)
	}
	if o.rows > headlineRows {
		line("…", fmt.Sprintf(l.w("more_rows"), l.count(o.rows-headlineRows), o.sheet.tab(l.code)), plainLine)
	}
}

// headlineLabels is each headline row's label, as headlineLines prints it.
func (w *summaryLines) headlineLabels(o sheetOutput) []string {
	var labels []string
	w.headlineLines(o, func(label string, _ any, _ lineStyle) { labels = append(labels, label) })
	return labels
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

// headlineLines puts each row of a small sheet (subtotals) on the summary:
// its text columns as the label, its figures as a line of text.
func (w *summaryLines) headlineLines(o sheetOutput, line func(string, any, lineStyle)) {
	l := w.l
	figCols := 0
	for _, c := range o.cols {
		if !c.reference && c.format != "text" && c.format != "" && !c.offHeadline {
			figCols++
		}
	}
	// The sheet's name heads its lines once, saying what a code alone ("OK") is the state of.
	line(o.sheet.tab(l.code), "", labelLine)
	texts := make([]string, len(o.headRows))
	ids := make([]string, len(o.headRows))
	figs := make([]string, len(o.headRows))
	for k, r := range o.headRows {
		var label, figures []string
		for i, c := range o.cols {
			if c.reference {
				continue
			}
			if c.format == "text" || c.format == "" {
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
				continue
			}
			switch {
			case c.offHeadline:
			case figCols == 1: // the heading says what the one figure is
				figures = append(figures, l.format(r[i], c, w.cur))
			default:
				figures = append(figures, c.title+" "+l.format(r[i], c, w.cur))
			}
		}
		text := strings.Join(label, " · ")
		texts[k], figs[k] = text, strings.Join(figures, "; ")
		// The first reference column (an ID) tells rows of the same name apart.
		if i := slices.IndexFunc(o.cols, func(c column) bool { return c.reference }); i >= 0 {
			ids[k], _ = r[i].(string)
		}
	}
	for k := range o.headRows {
		if k == headlineRows {
			line("…", fmt.Sprintf(l.w("more_rows"), l.count(o.rows-headlineRows), o.sheet.tab(l.code)), plainLine)
			break
		}
		text := texts[k]
		same := 0
		for _, t := range texts {
			if t == text {
				same++
			}
		}
		if ids[k] != "" && same > 1 {
			// Two products of one name (the service allows it): the start of the ID, as the
			// sheet's ID column has it (or the account, for one state in two accounts).
			id := ids[k]
			if len([]rune(id)) > 8 {
				id = string([]rune(id)[:8]) + "…"
			}
			text += " (" + id + ")"
		}
		line(text, figs[k], wrapLine)
	}
	if len(o.headRows) == 0 {
		line("", l.w("none_rows"), plainLine)
	}
}

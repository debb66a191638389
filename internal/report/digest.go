package report

import (
	"fmt"
	"time"
)

// Digest is what a completed report's summary sheet says first, as text in the report's
// language: its headline figures and its checks, the sync runs it is based on. A message
// carries it so a reader sees the numbers without opening the workbook; it is made by the same
// code as the summary sheet, so the two never disagree.
type Digest struct {
	Report   string   // the report's name (report -list)
	Title    string   // in the report's language
	AsOf     string   // YYYY-MM-DD
	Files    []string // the report's files, as Generate returns them
	Runs     []string // the sync runs it is based on, as the summary says them
	Warnings []string // the as-of warnings and Options.Notice, as the summary says them
	Headline []Line
	Checks   []Line
	Sheets   []Line // each data sheet's rows, as the summary's Sheets section says them
}

// Line is one line of a digest: a label and its value, as the summary sheet prints them.
type Line struct {
	Label, Value string
	// Bad is a failed check or exceptions found; Plain a count of 0 that proves nothing
	// (nothing was checked).
	Bad, Plain bool
	// Table is a headline table in the line's place (Label is its sheet's name): the
	// summary's table, cell by cell.
	Table *Table
}

// Table is a headline table as the summary sheet prints it, each cell formatted as there.
type Table struct {
	Head  []string   // the label column's heading, then each figure's title
	Rows  [][]string // each row: its label, then its figures
	Total []string   // the sheet's totals row, likewise (a blank where figures do not add up); nil without
	More  string     // where the rows the table leaves out are; empty when it shows them all
}

// digestOf is the digest of a complete report, from what its summary sheet is made of.
func digestOf(d *Definition, s *settings, vars map[string]string, srcs []source, outs []sheetOutput, same *sameNames, files []string) *Digest {
	l := s.lang
	dg := &Digest{Report: d.Name, Title: d.Title.In(l.code), AsOf: s.asOf, Files: files}
	for _, src := range srcs {
		dg.Runs = append(dg.Runs, src.text(s.loc, l))
	}
	if s.Notice != "" {
		dg.Warnings = append(dg.Warnings, s.Notice)
	}
	for _, a := range s.warnings {
		dg.Warnings = append(dg.Warnings, a.text(l))
	}
	w := summaryLines{l: l, cur: s.Currency, same: same, vars: vars}
	subtitle := func(string) {} // the message has its own headings
	w.headlines(outs, subtitle, func(label string, v any, _ lineStyle) {
		text, _ := v.(string)
		dg.Headline = append(dg.Headline, Line{Label: label, Value: text})
	}, func(label string, v any, c column) {
		dg.Headline = append(dg.Headline, Line{Label: label, Value: l.format(v, c, s.Currency)})
	}, func(t headTable) {
		tb := &Table{More: t.moreText(l)}
		tb.Head, tb.Rows, tb.Total = t.text(l, s.Currency)
		dg.Headline = append(dg.Headline, Line{Label: t.tab, Table: tb})
	})
	w.checkLines(outs, subtitle, func(label, text string, ok, plain bool) {
		dg.Checks = append(dg.Checks, Line{Label: label, Value: text, Bad: !ok, Plain: plain})
	})
	for _, o := range outs {
		dg.Sheets = append(dg.Sheets, Line{Label: o.sheet.tab(l.code), Value: fmt.Sprintf(l.w("rows_from"), l.count(o.rows), o.sheet.Query)})
	}
	return dg
}

// DateTime is t as the reports print a time in the locale (id or en) and zone, for a message
// that speaks of the same times as the workbooks.
func DateTime(t time.Time, locale string, loc *time.Location) string {
	l, err := langOf(locale)
	if err != nil {
		l, _ = langOf("")
	}
	return l.dateTime(t, loc)
}

// Date is a calendar date as the reports print it in the locale ("30 Nov 2026").
func Date(t time.Time, locale string) string {
	l, err := langOf(locale)
	if err != nil {
		l, _ = langOf("")
	}
	return l.date(t)
}

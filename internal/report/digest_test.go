package report

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/billsync/billsync/internal/config"
	"github.com/xuri/excelize/v2"
)

// TestDigestIsTheSummary: a digest says what the workbook's summary sheet says: every
// headline line's label, every check's text and every sheet's row count, in its order, for
// a report with a headline sheet (credit), one with totals and a check (aging), and one with
// neither (data-quality).
func TestDigestIsTheSummary(t *testing.T) {
	w := testWorld(t)
	out := t.TempDir()
	files, digests, err := GenerateDigests(context.Background(), Options{Report: config.Report{ReportsOut: out}, DB: w.db, Formats: []string{"xlsx"},
		AsOf: time.Date(2026, 6, 5, 0, 0, 0, 0, time.UTC), Names: []string{"aging", "credit", "data-quality"},
		Notice: "figures may be stale: a test", Log: quiet})
	if err != nil {
		t.Fatal(err)
	}
	if len(digests) != 3 || len(files) != 3 {
		t.Fatalf("%d digests, %d files", len(digests), len(files))
	}
	for i, dg := range digests {
		if dg.Files[0] != files[i] || dg.AsOf != "2026-06-05" || len(dg.Runs) == 0 || dg.Warnings[0] != "figures may be stale: a test" {
			t.Errorf("%s: %+v", dg.Report, dg)
		}
		x, err := excelize.OpenFile(files[i])
		if err != nil {
			t.Fatal(err)
		}
		rows, err := x.GetRows(x.GetSheetName(0))
		x.Close()
		if err != nil {
			t.Fatal(err)
		}
		var labels, values []string
		var cells [][]string // each row's cells after its label (a headline table's figures)
		for _, r := range rows {
			switch {
			case len(r) >= 2:
				labels, values, cells = append(labels, r[0]), append(values, r[1]), append(cells, r[1:])
			case len(r) == 1: // a heading, or a table's row of blank figures
				labels, values, cells = append(labels, r[0]), append(values, ""), append(cells, nil)
			}
		}
		if !slices.ContainsFunc(values, func(v string) bool { return strings.Contains(v, "figures may be stale: a test") }) {
			t.Errorf("%s: the summary lacks the notice", dg.Report)
		}
		lines := append(append(append([]Line{}, dg.Headline...), dg.Checks...), dg.Sheets...)
		if dg.Report != "data-quality" && (len(dg.Headline) == 0 || len(dg.Checks) == 0) {
			t.Errorf("%s: no headline or no checks: %+v", dg.Report, dg)
		}
		at := 0
		for _, l := range lines {
			if tb := l.Table; tb != nil {
				// the table's heading, rows and totals row on the summary, cell by cell
				all := append(append([][]string{tb.Head}, tb.Rows...), tb.Total)
				if tb.Total == nil {
					all = all[:len(all)-1]
				}
				for _, r := range all {
					k := slices.Index(labels[at:], r[0])
					if k < 0 {
						t.Errorf("%s: table row %q is not on the summary after row %d", dg.Report, r[0], at)
						continue
					}
					at += k
					for j, c := range r[1:] {
						got := ""
						if j < len(cells[at]) {
							got = cells[at][j]
						}
						if !sameFigure(c, got) {
							t.Errorf("%s: %s, cell %d: the digest says %q, the summary %q", dg.Report, r[0], j+1, c, got)
						}
					}
					at++
				}
				continue
			}
			k := slices.Index(labels[at:], l.Label)
			if k < 0 {
				t.Errorf("%s: %q is not on the summary after row %d", dg.Report, l.Label, at)
				continue
			}
			at += k
			// A figure is a number in its cell, formatted by the cell: its digits are the same.
			if values[at] != l.Value && digits(values[at]) != digits(l.Value) {
				t.Errorf("%s: %q says %q, the summary %q", dg.Report, l.Label, l.Value, values[at])
			}
			at++
		}
		for _, c := range dg.Checks {
			if !slices.Contains(values, c.Value) {
				t.Errorf("%s: check %q not on the summary", dg.Report, c.Value)
			}
		}
	}
}

// sameFigure: a figure as text ("1.234", "-" for none) and as a summary cell shows it.
func sameFigure(text, cell string) bool {
	if text == cell || digits(text) == digits(cell) && digits(text) != "" {
		return true
	}
	return text == "-" && strings.Trim(digits(cell), "0") == "" && cell != ""
}

func digits(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= '0' && r <= '9' {
			return r
		}
		return -1
	}, s)
}

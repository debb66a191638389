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
		for _, r := range rows {
			switch {
			case len(r) >= 2:
				labels, values = append(labels, r[0]), append(values, r[1])
			case len(r) == 1: // a headline table's heading
				labels, values = append(labels, r[0]), append(values, "")
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

func digits(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= '0' && r <= '9' {
			return r
		}
		return -1
	}, s)
}

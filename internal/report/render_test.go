package report

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/billsync/billsync/internal/api"
	"github.com/billsync/billsync/internal/config"
	"github.com/billsync/billsync/internal/fetch"
	"github.com/billsync/billsync/internal/report/value"
	"github.com/billsync/billsync/internal/sandbox"
	"github.com/billsync/billsync/internal/sheetfmt"
	"github.com/billsync/billsync/internal/sheetfmt/sheetpdf"
	"github.com/billsync/billsync/internal/syncrun"
)

// demoNow is when the rendering test's demo sync runs: the demo's simulator
// (seed 42, scale 1, as `make demo`) at a fixed clock.
var demoNow = time.Date(2026, 11, 23, 2, 0, 0, 0, time.UTC)

// minRowsPerPage is the fewest data rows a printed page of a data sheet may
// hold (but the last): fewer means the sheet is printed too small to fill
// the page or split in strips.
const minRowsPerPage = 22

// maxPages bounds a sheet's printed pages where the issue states one.
var maxPages = map[string]int{"aging/By customer": 25}

// TestRenderedAsPrinted writes every report of the demo warehouse, converts
// the workbooks to PDF with LibreOffice (with Carlito, Calibri's metrics, as
// Excel lays them out) as a finance team would print them, and reads the pages
// back: A4, one sheet-width per page (every page of a data sheet has its first
// and last printed column's header), pages per sheet within bounds, every
// page's text at least sheetfmt.MinBodyPt and its footer sheetfmt.MinFooterPt
// as printed, the header repeated on every sheet printing on more than one page,
// no ### anywhere, and the summary's headline figures equal to the totals of
// the queries. About 40 s on two shared cores: the demo sync ~10 s, one
// LibreOffice run for all six workbooks ~20 s.
func TestRenderedAsPrinted(t *testing.T) {
	sheetpdf.Require(t)
	dir := t.TempDir()
	if keep := os.Getenv("BILLSYNC_RENDER_KEEP"); keep != "" {
		dir = keep // look at the PDFs afterwards
	}
	db := buildDemo(t, filepath.Join(dir, "demo.duckdb"))
	out := filepath.Join(dir, "out")
	asOf := demoNow.In(jakarta(t))
	files, err := Generate(context.Background(), Options{Report: config.Report{ReportsOut: out}, DB: db, AsOf: asOf, Formats: []string{"xlsx"}, Log: quiet})
	if err != nil {
		t.Fatal(err)
	}
	docs := sheetpdf.Convert(t, dir, files...)
	defs, err := Definitions()
	if err != nil {
		t.Fatal(err)
	}
	l := langs[config.DefaultLocale]
	vars := map[string]string{"as_of": asOf.Format(time.DateOnly)}
	for _, d := range defs {
		t.Run(d.Name, func(t *testing.T) {
			base := fileBase(d, &settings{asOf: vars["as_of"]})
			xlsx := filepath.Join(out, base+".xlsx")
			doc := docs[xlsx]
			if doc == nil {
				t.Fatalf("no workbook %s", xlsx)
			}
			pages := make([]string, len(doc.Pages))
			for i, p := range doc.Pages {
				pages[i] = p.Text
			}
			bySheet := map[string][]int{} // tab -> page indexes
			summary := l.w("summary")
			tabs := []string{summary}
			for _, s := range d.Sheets {
				tabs = append(tabs, s.tab(l.code))
			}
			for i, p := range doc.Pages {
				if strings.Contains(p.Text, "###") {
					t.Errorf("page %d shows ###: a column is too narrow for its figures", i+1)
				}
				tab := p.Sheet(tabs)
				if tab == "" {
					t.Errorf("page %d: no footer naming the sheet", i+1)
					continue
				}
				bySheet[tab] = append(bySheet[tab], i)
				landscape := tab != summary
				if !p.A4() || p.Landscape() != landscape {
					t.Errorf("page %d (%s): %.0f x %.0f pt, want A4 %s", i+1, tab, p.Width, p.Height, map[bool]string{true: "landscape", false: "portrait"}[landscape])
				}
				checkPrintedSize(t, fmt.Sprintf("page %d (%s)", i+1, tab), p)
			}
			for _, tab := range tabs {
				if n := len(bySheet[tab]); n > 1 && !sheetpdf.PrintTitles(t, xlsx, tab) {
					t.Errorf("sheet %q prints on %d pages without print titles: its header is on the first only", tab, n)
				}
			}
			logSizes(t, doc, bySheet, tabs)
			// A summary prints on one page, or on two with the break before its notes
			// (TestLongSummaryBreaksBeforeSheets): the headline figures and checks together
			// on the first.
			switch sum := bySheet[summary]; {
			case len(sum) == 1:
			case len(sum) == 2 && strings.Contains(pages[sum[1]], l.w("notes")) && !strings.Contains(pages[sum[0]], l.w("notes")):
			default:
				t.Errorf("summary prints on %d pages, want 1, or 2 breaking before %q", len(sum), l.w("notes"))
			}
			for _, s := range d.Sheets {
				names, rows := queryRows(t, db, s.Query, vars, "")
				cols := resolveColumns(&s, result{names: names, kinds: kindsOf(rows, len(names))}, map[string]string{}, l.code, "account")
				got := bySheet[s.tab(l.code)]
				if p := s.PrintOnly; p != nil {
					// The workbook prints only these rows (the CSV has them all).
					i := slices.Index(names, p.Column)
					rows = slices.DeleteFunc(slices.Clone(rows), func(r []any) bool {
						v, _ := r[i].(string)
						return !slices.Contains(p.Values, v)
					})
				}
				if !s.prints(len(rows)) {
					// Nothing to look at, or on the summary whole: no page.
					if len(got) != 0 {
						t.Errorf("sheet %q (%d rows) should not print, but prints on %d pages", s.Name, len(rows), len(got))
					}
					continue
				}
				lines := len(rows) + 1
				if len(s.Totals) > 0 {
					lines++
				}
				if s.Check != nil {
					lines++
				}
				most := (lines + minRowsPerPage - 1) / minRowsPerPage
				if m, ok := maxPages[d.Name+"/"+s.Name]; ok {
					most = min(most, m)
				}
				if len(got) < 1 || len(got) > most {
					t.Errorf("sheet %q (%d rows) prints on %d pages, want 1 to %d", s.Name, len(rows), len(got), most)
				}
				// One sheet-width per page: the header is repeated, and its
				// first and last printed columns are on every page.
				first, last := cols[0], cols[0]
				for _, c := range cols {
					if !c.reference {
						last = c
					}
				}
				for _, i := range got {
					for _, c := range []column{first, last} {
						if !hasWords(pages[i], c.title) {
							t.Errorf("sheet %q page %d: no header %q (the page is not the sheet's full width)", s.Name, i+1, c.title)
						}
					}
				}
				checkHeadlines(t, s, cols, names, rows, summaryText(pages, bySheet[summary]), l)
			}
		})
	}
}

// checkHeadlines: every summed figure of a totals row, and every row of a
// headline sheet, is on the summary as the query's own total, formatted.
func checkHeadlines(t *testing.T, s Sheet, cols []column, names []string, rows [][]any, summary string, l *lang) {
	t.Helper()
	index := map[string]int{}
	for i, n := range names {
		index[n] = i
	}
	for _, c := range cols {
		if c.format != "money" && c.format != "int" && c.format != "credit" || c.offHeadline || c.reference {
			continue
		}
		switch {
		case len(s.Totals) > 0 && c.total.Sum:
			var sum float64
			for _, r := range rows {
				sum += value.Number(r[index[c.name]])
			}
			if want := l.format(sum, c, "IDR"); !strings.Contains(summary, want) {
				t.Errorf("sheet %q: the summary does not show %s = %s (the query's total)", s.Name, c.title, want)
			}
		case s.Headline:
			for _, r := range rows {
				// Labels and figures wrap side by side: the figure itself.
				if want := l.format(r[index[c.name]], c, "IDR"); !strings.Contains(summary, want) {
					t.Errorf("sheet %q: the summary does not show %q", s.Name, want)
				}
			}
		}
	}
}

// buildDemo syncs the demo's simulator into path once.
func buildDemo(t *testing.T, path string) string {
	t.Helper()
	sb, err := sandbox.New(sandbox.Options{Seed: 42, Scale: 1, Now: demoNow, Key: testKey})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(sb)
	defer srv.Close()
	client, err := api.New(api.Config{BaseURL: srv.URL, APIKey: testKey, Unlimited: true,
		MinBackoff: time.Millisecond, MaxBackoff: 20 * time.Millisecond, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := syncrun.Run(context.Background(), path, []syncrun.Account{{Name: "demo", Client: client}},
		syncrun.Options{Options: fetch.Options{Fetch: config.Fetch{PageSize: 100, Concurrency: 4, Details: true, MaxClockSkew: fetch.TrustServiceClock}, Account: "demo", Log: quiet}}); err != nil {
		t.Fatal(err)
	}
	return path
}

// hasWords says whether every word of title is on the page (headers wrap).
func hasWords(page, title string) bool {
	for _, w := range strings.Fields(title) {
		if !strings.Contains(page, w) {
			return false
		}
	}
	return true
}

func summaryText(pages []string, idx []int) string {
	var b bytes.Buffer
	for _, i := range idx {
		b.WriteString(pages[i])
	}
	// Layout spacing varies; compare with single spaces.
	return strings.Join(strings.Fields(b.String()), " ")
}

// kindsOf guesses result kinds from values, for resolveColumns in tests.
func kindsOf(rows [][]any, n int) []value.Kind {
	k := make([]value.Kind, n)
	for _, r := range rows {
		for i, v := range r {
			if v != nil && k[i] == value.KindText {
				k[i] = kindOfValue(v)
			}
		}
	}
	return k
}

// checkPrintedSize fails a page whose text prints smaller than a person reads:
// body text below sheetfmt.MinBodyPt, the footer below sheetfmt.MinFooterPt.
func checkPrintedSize(t *testing.T, what string, p sheetpdf.Page) {
	t.Helper()
	const slack = 0.05 // a tenth of a point of rounding in the PDF's boxes
	if p.Body < sheetfmt.MinBodyPt-slack {
		t.Errorf("%s: text prints at %.1f pt, want at least %d pt", what, p.Body, sheetfmt.MinBodyPt)
	}
	if p.Footer < sheetfmt.MinFooterPt-slack {
		t.Errorf("%s: footer prints at %.1f pt, want at least %d pt", what, p.Footer, sheetfmt.MinFooterPt)
	}
}

// logSizes logs per sheet its pages and smallest body and footer text, the
// figures docs/performance.md keeps.
func logSizes(t *testing.T, doc *sheetpdf.Doc, bySheet map[string][]int, tabs []string) {
	t.Helper()
	t.Logf("%s: %d pages", filepath.Base(doc.Path), len(doc.Pages))
	for _, tab := range tabs {
		body, foot := math.Inf(1), math.Inf(1)
		for _, i := range bySheet[tab] {
			body, foot = min(body, doc.Pages[i].Body), min(foot, doc.Pages[i].Footer)
		}
		if n := len(bySheet[tab]); n > 0 {
			t.Logf("  %-28s %3d pages, body %.1f pt, footer %.1f pt", tab, n, body, foot)
		}
	}
}

package report

import (
	"bytes"
	"context"
	"math"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/billsync/billsync/internal/api"
	"github.com/billsync/billsync/internal/config"
	"github.com/billsync/billsync/internal/fetch"
	"github.com/billsync/billsync/internal/report/value"
	"github.com/billsync/billsync/internal/sandbox"
	"github.com/billsync/billsync/internal/syncrun"
	"github.com/xuri/excelize/v2"
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

// maxReportPages bounds a whole workbook's printed pages at the demo: one a
// controller sends.
var maxReportPages = map[string]int{"credit": 25}

// minFontPt is the smallest printed text size every data sheet of a report
// must keep: fit-to-width shrinks a wide sheet's 11 pt text below what reads
// on paper. Measured for every report (logged), enforced for these.
var minFontPt = map[string]float64{"credit": 8}

// TestRenderedAsPrinted writes every report of the demo warehouse, converts
// the workbooks to PDF with LibreOffice as a finance team would print them,
// and reads the pages back: A4, one sheet-width per page (every page of a
// data sheet has its first and last printed column's header), pages per
// sheet within bounds, no ### anywhere, and the summary's headline figures
// equal to the totals of the queries. About 40 s on two shared cores: the
// demo sync ~10 s, one LibreOffice run for all six workbooks ~20 s.
func TestRenderedAsPrinted(t *testing.T) {
	for _, tool := range []string{"soffice", "pdftotext", "pdfinfo"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is missing: install Debian's libreoffice-calc and poppler-utils (.ci/run does): %v", tool, err)
		}
	}
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
	pdfDir := filepath.Join(dir, "pdf")
	ruler := writeRuler(t, dir)
	// One LibreOffice for every workbook; a private profile so parallel runs
	// (or a desktop session of the same user) do not collide.
	args := append([]string{"-env:UserInstallation=file://" + filepath.Join(dir, "lo-profile"),
		"--headless", "--convert-to", "pdf", "--outdir", pdfDir, ruler}, files...)
	if b, err := exec.Command("soffice", args...).CombinedOutput(); err != nil {
		t.Fatalf("soffice: %v\n%s", err, b)
	}
	perPt := rulerHeight(t, filepath.Join(pdfDir, "ruler.pdf"))
	defs, err := Definitions()
	if err != nil {
		t.Fatal(err)
	}
	l := langs[config.DefaultLocale]
	vars := map[string]string{"as_of": asOf.Format(time.DateOnly)}
	for _, d := range defs {
		t.Run(d.Name, func(t *testing.T) {
			base := fileBase(d, &settings{asOf: vars["as_of"]})
			pdf := filepath.Join(pdfDir, base+".pdf")
			pages := pdfPages(t, pdf)
			sizes := pageSizes(t, pdf, len(pages))
			if most, ok := maxReportPages[d.Name]; ok && len(pages) > most {
				t.Errorf("the workbook prints on %d pages, want at most %d", len(pages), most)
			}
			smallest := smallestText(t, pdf, perPt)
			bySheet := map[string][]int{} // tab -> page indexes
			summary := l.w("summary")
			tabs := []string{summary}
			for _, s := range d.Sheets {
				tabs = append(tabs, s.tab(l.code))
			}
			for i, p := range pages {
				if strings.Contains(p, "###") {
					t.Errorf("page %d shows ###: a column is too narrow for its figures", i+1)
				}
				tab := footerTab(p, tabs)
				if tab == "" {
					t.Errorf("page %d: no footer naming the sheet", i+1)
					continue
				}
				bySheet[tab] = append(bySheet[tab], i)
				landscape := tab != summary
				if w, h := sizes[i][0], sizes[i][1]; math.Abs(math.Max(w, h)-842) > 2 || math.Abs(math.Min(w, h)-595) > 2 || (w > h) != landscape {
					t.Errorf("page %d (%s): %.0f x %.0f pt, want A4 %s", i+1, tab, w, h, map[bool]string{true: "landscape", false: "portrait"}[landscape])
				}
			}
			// At the demo's size every summary fits one page (a longer one breaks before its
			// Sheets section: TestLongSummaryBreaksBeforeSheets).
			if n := len(bySheet[summary]); n != 1 {
				t.Errorf("summary prints on %d pages, want 1", n)
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
				pt := math.Inf(1)
				for _, i := range got {
					pt = min(pt, smallest[i])
				}
				t.Logf("sheet %q: %d pages, smallest text %.1f pt", s.Name, len(got), pt)
				if want, ok := minFontPt[d.Name]; ok && pt < want {
					t.Errorf("sheet %q prints text at %.1f pt, want at least %.0f pt", s.Name, pt, want)
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

// pdfPages is the text of each page, as pdftotext lays it out.
func pdfPages(t *testing.T, pdf string) []string {
	t.Helper()
	b, err := exec.Command("pdftotext", "-layout", pdf, "-").Output()
	if err != nil {
		t.Fatalf("pdftotext %s: %v", pdf, err)
	}
	pages := strings.Split(string(b), "\f")
	if len(pages) > 0 && strings.TrimSpace(pages[len(pages)-1]) == "" {
		pages = pages[:len(pages)-1]
	}
	return pages
}

var sizeRe = regexp.MustCompile(`(?m)^Page\s+(\d+) size:\s+([\d.]+) x ([\d.]+) pts`)

// pageSizes is each page's width and height in points.
func pageSizes(t *testing.T, pdf string, n int) [][2]float64 {
	t.Helper()
	b, err := exec.Command("pdfinfo", "-f", "1", "-l", strconv.Itoa(n), pdf).Output()
	if err != nil {
		t.Fatalf("pdfinfo %s: %v", pdf, err)
	}
	out := make([][2]float64, n)
	for _, m := range sizeRe.FindAllStringSubmatch(string(b), -1) {
		i, _ := strconv.Atoi(m[1])
		w, _ := strconv.ParseFloat(m[2], 64)
		h, _ := strconv.ParseFloat(m[3], 64)
		if i >= 1 && i <= n {
			out[i-1] = [2]float64{w, h}
		}
	}
	return out
}

// footerTab is the sheet a page belongs to, from the footer's centre (the
// page's last line): the longest tab name it holds.
func footerTab(page string, tabs []string) string {
	lines := strings.Split(strings.TrimRight(page, "\n "), "\n")
	footer := lines[len(lines)-1]
	best := ""
	for _, tab := range tabs {
		if regexp.MustCompile(`\s`+regexp.QuoteMeta(tab)+`\s`).MatchString(footer) && len(tab) > len(best) {
			best = tab
		}
	}
	return best
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

// writeRuler is a workbook of one short line of 11 pt text, which prints at
// full size: its height in the PDF is how high one point of text is there,
// whichever font LibreOffice put in Calibri's place.
func writeRuler(t *testing.T, dir string) string {
	t.Helper()
	f := excelize.NewFile()
	defer f.Close()
	f.SetCellValue("Sheet1", "A1", "Hgyj 0123")
	style, err := f.NewStyle(&excelize.Style{Font: &excelize.Font{Family: "Calibri", Size: 11}})
	if err != nil {
		t.Fatal(err)
	}
	f.SetCellStyle("Sheet1", "A1", "A1", style)
	path := filepath.Join(dir, "ruler.xlsx")
	if err := f.SaveAs(path); err != nil {
		t.Fatal(err)
	}
	return path
}

// wordRe is a word of pdftotext -bbox.
var wordRe = regexp.MustCompile(`<word xMin="[\d.]+" yMin="([\d.]+)" xMax="[\d.]+" yMax="([\d.]+)">`)

var pageRe = regexp.MustCompile(`<page width="[\d.]+" height="([\d.]+)">`)

// wordHeights is, per page, the heights of the words above the footer (the
// footer prints at 8 pt by design).
func wordHeights(t *testing.T, pdf string) [][]float64 {
	t.Helper()
	b, err := exec.Command("pdftotext", "-bbox", pdf, "-").Output()
	if err != nil {
		t.Fatalf("pdftotext -bbox %s: %v", pdf, err)
	}
	var out [][]float64
	for _, page := range strings.Split(string(b), "</page>") {
		m := pageRe.FindStringSubmatch(page)
		if m == nil {
			continue
		}
		height, _ := strconv.ParseFloat(m[1], 64)
		var hs []float64
		for _, w := range wordRe.FindAllStringSubmatch(page, -1) {
			y0, _ := strconv.ParseFloat(w[1], 64)
			y1, _ := strconv.ParseFloat(w[2], 64)
			if y0 < height-40 { // the footer sits in the bottom margin's last 40 pt
				hs = append(hs, y1-y0)
			}
		}
		out = append(out, hs)
	}
	return out
}

// rulerHeight is the printed height of one point of text.
func rulerHeight(t *testing.T, pdf string) float64 {
	t.Helper()
	pages := wordHeights(t, pdf)
	if len(pages) != 1 || len(pages[0]) == 0 {
		t.Fatalf("%s: want one page of text, got %v", pdf, pages)
	}
	return slices.Max(pages[0]) / 11
}

// smallestText is each page's smallest text, in points as printed.
func smallestText(t *testing.T, pdf string, perPt float64) []float64 {
	t.Helper()
	var out []float64
	for _, hs := range wordHeights(t, pdf) {
		if len(hs) == 0 {
			out = append(out, math.Inf(1))
			continue
		}
		out = append(out, slices.Min(hs)/perPt)
	}
	return out
}

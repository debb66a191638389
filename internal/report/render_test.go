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
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/billsync/billsync/internal/api"
	"github.com/billsync/billsync/internal/fetch"
	"github.com/billsync/billsync/internal/sandbox"
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
	files, err := Generate(context.Background(), Options{DB: db, OutDir: out, AsOf: asOf, Formats: []string{"xlsx"}, Log: quiet})
	if err != nil {
		t.Fatal(err)
	}
	pdfDir := filepath.Join(dir, "pdf")
	// One LibreOffice for every workbook; a private profile so parallel runs
	// (or a desktop session of the same user) do not collide.
	args := append([]string{"-env:UserInstallation=file://" + filepath.Join(dir, "lo-profile"),
		"--headless", "--convert-to", "pdf", "--outdir", pdfDir}, files...)
	if b, err := exec.Command("soffice", args...).CombinedOutput(); err != nil {
		t.Fatalf("soffice: %v\n%s", err, b)
	}
	defs, err := Definitions()
	if err != nil {
		t.Fatal(err)
	}
	l := langs[defaultLocale]
	vars := map[string]string{"as_of": asOf.Format(time.DateOnly)}
	for _, d := range defs {
		t.Run(d.Name, func(t *testing.T) {
			base := fileBase(d, &settings{asOf: vars["as_of"]})
			pdf := filepath.Join(pdfDir, base+".pdf")
			pages := pdfPages(t, pdf)
			sizes := pageSizes(t, pdf, len(pages))
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
		if c.format != "money" && c.format != "int" && c.format != "credit" || c.offHeadline {
			continue
		}
		switch {
		case len(s.Totals) > 0 && c.total.Sum:
			var sum float64
			for _, r := range rows {
				sum += number(r[index[c.name]])
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
	if _, err := fetch.Run(context.Background(), path, []fetch.Account{{Name: "demo", Client: client}},
		fetch.Options{Account: "demo", PageSize: 100, Concurrency: 4, Details: true, Log: quiet, MaxClockSkew: fetch.TrustServiceClock}); err != nil {
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
func kindsOf(rows [][]any, n int) []kind {
	k := make([]kind, n)
	for _, r := range rows {
		for i, v := range r {
			if v != nil && k[i] == kindText {
				k[i] = kindOfValue(v)
			}
		}
	}
	return k
}

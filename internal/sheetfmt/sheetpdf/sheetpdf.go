// Package sheetpdf prints workbooks as a finance team does, through LibreOffice to PDF, and
// reads the pages back: each page's text, size, the sheet its footer names, and its smallest
// body and footer text in points. The render tests of the reports and the job files measure
// with it; nothing outside tests imports it.
//
// Carlito has Calibri's metrics, so LibreOffice lays a page out as Excel does only with it:
// without it a substitute font changes every column's width and the page count. Require fails
// (in CI, BILLSYNC_CI=1) or skips the test when LibreOffice, poppler or Carlito is missing.
package sheetpdf

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/xuri/excelize/v2"
)

// Require checks the tools a rendering needs: soffice (libreoffice-calc), pdftotext and pdfinfo
// (poppler-utils), fc-list and the Carlito font (fonts-crosextra-carlito). A missing one fails the
// test in CI and skips it elsewhere.
func Require(t testing.TB) {
	t.Helper()
	var missing []string
	for _, tool := range []string{"soffice", "pdftotext", "pdfinfo", "fc-list"} {
		if _, err := exec.LookPath(tool); err != nil {
			missing = append(missing, tool)
		}
	}
	if !slices.Contains(missing, "fc-list") {
		out, err := exec.Command("fc-list", ":family=Carlito", "family").Output()
		if err != nil || !strings.Contains(string(out), "Carlito") {
			missing = append(missing, "the Carlito font")
		}
	}
	if len(missing) == 0 {
		return
	}
	msg := fmt.Sprintf("%s missing: install Debian's libreoffice-calc, poppler-utils and fonts-crosextra-carlito (.ci/run does)",
		strings.Join(missing, ", "))
	if os.Getenv("BILLSYNC_CI") == "1" {
		t.Fatal(msg)
	}
	t.Skip(msg)
}

// Convert prints every workbook to a PDF of the same base name in dir/pdf with one LibreOffice,
// under a private profile so parallel runs (or a desktop session of the same user) do not collide.
// A ruler workbook is printed with them: Doc.PerPt is from it.
func Convert(t testing.TB, dir string, files ...string) map[string]*Doc {
	t.Helper()
	ruler := writeRuler(t, dir)
	pdfDir := filepath.Join(dir, "pdf")
	args := append([]string{"-env:UserInstallation=file://" + filepath.Join(dir, "lo-profile"),
		"--headless", "--convert-to", "pdf", "--outdir", pdfDir, ruler}, files...)
	if b, err := exec.Command("soffice", args...).CombinedOutput(); err != nil {
		t.Fatalf("soffice: %v\n%s", err, b)
	}
	perPt := rulerHeight(t, filepath.Join(pdfDir, "ruler.pdf"))
	docs := map[string]*Doc{}
	for _, f := range files {
		base := strings.TrimSuffix(filepath.Base(f), filepath.Ext(f))
		docs[f] = Read(t, filepath.Join(pdfDir, base+".pdf"), perPt)
	}
	return docs
}

// Doc is a printed workbook.
type Doc struct {
	Path  string
	Pages []Page
}

// Page is one printed page.
type Page struct {
	Text          string  // as pdftotext -layout lays it out
	Width, Height float64 // points
	// Body and Footer are the smallest text above the footer and in it, in points as printed
	// (+Inf when there is none).
	Body, Footer float64
	// FooterWords are the footer's words, left to right.
	FooterWords []string
}

// footerBand is how far above the page's bottom edge the footer's text sits, in points: the
// bottom margin (0.6 in) less a little.
const footerBand = 40

// Read reads a PDF's pages; perPt is the printed height of one point of text (rulerHeight).
func Read(t testing.TB, pdf string, perPt float64) *Doc {
	t.Helper()
	b, err := exec.Command("pdftotext", "-layout", pdf, "-").Output()
	if err != nil {
		t.Fatalf("pdftotext %s: %v", pdf, err)
	}
	texts := strings.Split(string(b), "\f")
	if len(texts) > 0 && strings.TrimSpace(texts[len(texts)-1]) == "" {
		texts = texts[:len(texts)-1]
	}
	boxes, err := exec.Command("pdftotext", "-bbox", pdf, "-").Output()
	if err != nil {
		t.Fatalf("pdftotext -bbox %s: %v", pdf, err)
	}
	d := &Doc{Path: pdf}
	for _, page := range strings.Split(string(boxes), "</page>") {
		m := pageRe.FindStringSubmatch(page)
		if m == nil {
			continue
		}
		p := Page{Body: math.Inf(1), Footer: math.Inf(1)}
		p.Width, _ = strconv.ParseFloat(m[1], 64)
		p.Height, _ = strconv.ParseFloat(m[2], 64)
		type word struct {
			x    float64
			text string
		}
		var foot []word
		for _, w := range wordRe.FindAllStringSubmatch(page, -1) {
			x0, _ := strconv.ParseFloat(w[1], 64)
			y0, _ := strconv.ParseFloat(w[2], 64)
			y1, _ := strconv.ParseFloat(w[4], 64)
			pt := (y1 - y0) / perPt
			if y0 > p.Height-footerBand {
				p.Footer = min(p.Footer, pt)
				foot = append(foot, word{x0, w[5]})
			} else {
				p.Body = min(p.Body, pt)
			}
		}
		slices.SortStableFunc(foot, func(a, b word) int { return int(math.Round(a.x - b.x)) })
		for _, w := range foot {
			p.FooterWords = append(p.FooterWords, w.text)
		}
		if i := len(d.Pages); i < len(texts) {
			p.Text = texts[i]
		}
		d.Pages = append(d.Pages, p)
	}
	if len(d.Pages) != len(texts) {
		t.Fatalf("%s: %d pages of boxes, %d of text", pdf, len(d.Pages), len(texts))
	}
	return d
}

// Sheet is the sheet a page belongs to, from its footer's centre: the longest of names it holds
// as whole words.
func (p Page) Sheet(names []string) string {
	footer := " " + strings.Join(p.FooterWords, " ") + " "
	best := ""
	for _, n := range names {
		if strings.Contains(footer, " "+strings.Join(strings.Fields(n), " ")+" ") && len(n) > len(best) {
			best = n
		}
	}
	return best
}

// Landscape says whether the page is wider than tall.
func (p Page) Landscape() bool { return p.Width > p.Height }

// A4 says whether the page is A4, either way round.
func (p Page) A4() bool {
	return math.Abs(math.Max(p.Width, p.Height)-842) <= 2 && math.Abs(math.Min(p.Width, p.Height)-595) <= 2
}

// PrintTitles says whether a workbook's sheet repeats rows on every printed page.
func PrintTitles(t testing.TB, xlsx, sheet string) bool {
	t.Helper()
	f, err := excelize.OpenFile(xlsx)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, d := range f.GetDefinedName() {
		if d.Name == "_xlnm.Print_Titles" && d.Scope == sheet && regexp.MustCompile(`\$\d+:\$\d+$`).MatchString(d.RefersTo) {
			return true
		}
	}
	return false
}

var (
	pageRe = regexp.MustCompile(`<page width="([\d.]+)" height="([\d.]+)">`)
	wordRe = regexp.MustCompile(`<word xMin="([\d.]+)" yMin="([\d.]+)" xMax="([\d.]+)" yMax="([\d.]+)">([^<]*)</word>`)
)

// writeRuler is a workbook of one short line of 11 pt text, which prints at full size: its height
// in the PDF is how high one point of text is there (about 1.30 pt for Carlito).
func writeRuler(t testing.TB, dir string) string {
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

// rulerHeight is the printed height of one point of text.
func rulerHeight(t testing.TB, pdf string) float64 {
	t.Helper()
	b, err := exec.Command("pdftotext", "-bbox", pdf, "-").Output()
	if err != nil {
		t.Fatalf("pdftotext -bbox %s: %v", pdf, err)
	}
	var hs []float64
	for _, w := range wordRe.FindAllStringSubmatch(string(b), -1) {
		y0, _ := strconv.ParseFloat(w[2], 64)
		y1, _ := strconv.ParseFloat(w[4], 64)
		hs = append(hs, y1-y0)
	}
	if len(hs) == 0 || bytes.Count(b, []byte("<page ")) != 1 {
		t.Fatalf("%s: want one page of text", pdf)
	}
	return slices.Max(hs) / 11
}

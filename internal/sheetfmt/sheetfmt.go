// Package sheetfmt is what every workbook billsync writes shares, so a write job's plan reads like a report:
// the header row's look, number formats tagged with the locale (LibreOffice and Excel then use its
// separators whatever the reader's own settings), digits grouped the locale's way, and the print setup
// (A4 at a scale that keeps text readable, the header on every page, a footer with page x of y).
package sheetfmt

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/xuri/excelize/v2"
)

// LCID is the number-format tag of a locale: id (Indonesian, the default) or en.
func LCID(locale string) string {
	if locale == "en" {
		return "[$-409]"
	}
	return "[$-421]"
}

// NumFmts are the number formats per column format; "money" is per currency (MoneyFormat). Zero amounts
// show a dash, so an empty bucket does not read "Rp 0".
var NumFmts = map[string]string{
	"int":      "#,##0",
	"credit":   `#,##0;-#,##0;"-"`, // credit units: whole units, never a currency
	"decimal1": "#,##0.0",
	"decimal2": "#,##0.00",
	"rating":   "0.00",
	"percent":  "0.0%",
	"date":     "d mmm yyyy",
	"month":    "mmm yyyy",
	"datetime": "d mmm yyyy hh:mm",
}

// MoneyFormat is a whole-unit amount with the currency's symbol or code.
func MoneyFormat(currency string) string {
	symbols := map[string]string{"IDR": "Rp", "USD": "$", "EUR": "€", "SGD": "S$", "MYR": "RM", "GBP": "£", "JPY": "¥"}
	if s, ok := symbols[currency]; ok {
		return `"` + s + ` "#,##0;-"` + s + ` "#,##0;"-"`
	}
	return `#,##0" ` + currency + `";-#,##0" ` + currency + `";"-"`
}

// NumberFormat is a column format's number format in a locale, money in currency.
func NumberFormat(format, currency, locale string) (string, bool) {
	f, ok := NumFmts[format]
	if format == "money" {
		f, ok = MoneyFormat(currency), true
	}
	if !ok {
		return "", false
	}
	return LCID(locale) + f, true
}

// HeaderStyle is the header row: white bold on dark blue, wrapped.
func HeaderStyle() *excelize.Style {
	return &excelize.Style{
		Font:      &excelize.Font{Family: "Calibri", Bold: true, Color: "FFFFFF"},
		Fill:      excelize.Fill{Type: "pattern", Pattern: 1, Color: []string{"1F4E79"}},
		Alignment: &excelize.Alignment{Vertical: "center", WrapText: true},
	}
}

// What a printed page must keep readable: body text (11 pt, the workbooks' default) at least
// MinBodyPt, footers at least MinFooterPt. A sheet is printed at a scale, never below MinScale; a
// sheet too wide for its page at that scale prints across pages (its first column repeated), rather
// than shrunk: fit-to-width made 11 pt text 4 pt on a wide sheet.
const (
	BodyPt      = 11
	FooterPt    = 10
	MinBodyPt   = 8
	MinFooterPt = 7
	// MinScale is the smallest scale, in percent, at which body text prints at MinBodyPt:
	// 11 pt × 73 % = 8.03 pt, and a FooterPt footer 7.3 pt.
	MinScale = 73
	// ListScale is the largest scale of a report's data sheet: 9 pt text, as a printed listing
	// reads, rather than 11 pt on a third more paper.
	ListScale = 82
)

// Page is how a sheet prints: its orientation and the widths of its printed columns, in
// characters as excelize's SetColWidth takes them.
type Page struct {
	Portrait bool
	Widths   []float64
	// MaxScale is the largest scale, in percent; 0 = 100.
	MaxScale int
	// Titles repeats these rows (1-based, first and last) on every printed page; 0 = none.
	TitleFirst, TitleLast int
}

// margins of every printed page, in inches: left, right, top, bottom, header, footer.
var margins = [6]float64{0.4, 0.4, 0.5, 0.6, 0.2, 0.25}

// PrintableWidth is the width the cells get on an A4 page, in points.
func PrintableWidth(portrait bool) float64 {
	w := 841.89
	if portrait {
		w = 595.28
	}
	return w - (margins[0]+margins[1])*72
}

// PrintableHeight is the height the cells get on an A4 page, in points, at 100 %.
func PrintableHeight(portrait bool) float64 {
	h := 595.28
	if portrait {
		h = 841.89
	}
	return h - (margins[2]+margins[3])*72
}

// ColumnPoints is a column of width characters as printed at 100 %, in points: LibreOffice
// prints a character of width as 7.4 pixels at 96 dpi (measured with Carlito), a little wider
// than Excel's seven-pixel digit and five of padding, so a page that fits one fits the other.
func ColumnPoints(width float64) float64 {
	if width <= 0 {
		return 0
	}
	return width * 7.4 * 0.75
}

// Scale is the print scale, in percent, at which columns of these widths fill the page's width:
// at most 100, at least MinScale (a wider sheet splits across pages). A few percent are kept
// in hand for a reader whose fonts run a little wider.
func Scale(widths []float64, portrait bool) int {
	var w float64
	for _, c := range widths {
		w += ColumnPoints(c)
	}
	if w <= 0 {
		return 100
	}
	s := int(math.Floor(PrintableWidth(portrait) / w * 97))
	return max(MinScale, min(100, s))
}

// Fits says whether columns of these widths fit the page's width at MinScale.
func Fits(widths []float64, portrait bool) bool {
	var w float64
	for _, c := range widths {
		w += ColumnPoints(c)
	}
	return w*MinScale/97 <= PrintableWidth(portrait)
}

// PageSetup prints a sheet on A4 at the scale its printed columns need (Scale), never smaller than
// MinScale, with footer (Footer) and the title rows repeated on every page. A sheet that does not fit
// one page wide at MinScale prints its columns across pages, over then down, its first column
// repeated on each. On a stream-written sheet it must come before the sheet is streamed; the print
// titles go in after (PrintTitles).
func PageSetup(f *excelize.File, sheet, footer string, p Page) error {
	no, a4, orientation := false, 9, "landscape"
	if p.Portrait {
		orientation = "portrait"
	}
	// No fit-to-page: the scale below is the page's, whatever the reader's program would fit.
	if err := f.SetSheetProps(sheet, &excelize.SheetPropsOptions{FitToPage: &no}); err != nil {
		return err
	}
	scale, order := uint(Scale(p.Widths, p.Portrait)), "overThenDown"
	if p.MaxScale >= MinScale {
		scale = min(scale, uint(p.MaxScale))
	}
	if err := f.SetPageLayout(sheet, &excelize.PageLayoutOptions{Size: &a4, Orientation: &orientation,
		AdjustTo: &scale, PageOrder: &order}); err != nil {
		return err
	}
	m := func(v float64) *float64 { return &v }
	if err := f.SetPageMargins(sheet, &excelize.PageLayoutMarginsOptions{Left: m(margins[0]), Right: m(margins[1]),
		Top: m(margins[2]), Bottom: m(margins[3]), Header: m(margins[4]), Footer: m(margins[5])}); err != nil {
		return err
	}
	return f.SetHeaderFooter(sheet, &excelize.HeaderFooterOptions{OddFooter: footer})
}

// PrintTitles repeats rows first to last of a sheet on every printed page, and its first column too
// when the sheet is too wide for one page (Fits): each page then says whose row it continues.
func PrintTitles(f *excelize.File, sheet string, p Page) error {
	if p.TitleFirst <= 0 {
		return nil
	}
	ref := "'" + strings.ReplaceAll(sheet, "'", "''") + "'!"
	titles := fmt.Sprintf("%s$%d:$%d", ref, p.TitleFirst, max(p.TitleLast, p.TitleFirst))
	if !Fits(p.Widths, p.Portrait) {
		titles = ref + "$A:$A," + titles
	}
	return f.SetDefinedName(&excelize.DefinedName{Name: "_xlnm.Print_Titles", RefersTo: titles, Scope: sheet})
}

// Footer is the printed footer: left (what the file is and as of when) on the left, the sheet's name in the
// centre, page x of y in the locale on the right, at FooterPt.
func Footer(left, locale string) string {
	page := "Halaman &P dari &N"
	if locale == "en" {
		page = "Page &P of &N"
	}
	size := "&" + strconv.Itoa(FooterPt)
	return "&L" + size + strings.ReplaceAll(left, "&", "&&") + "&C" + size + "&A&R" + size + page
}

// Group is n with the locale's thousands separator: 1.234.567 (id), 1,234,567 (en).
func Group(n int64, locale string) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	sep := "."
	if locale == "en" {
		sep = ","
	}
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteString(sep)
		}
		b.WriteRune(r)
	}
	return b.String()
}

// Decimal is f with d decimals and the locale's separators: 1.234,5 (id), 1,234.5 (en).
func Decimal(f float64, d int, locale string) string {
	neg := f < 0
	if neg {
		f = -f
	}
	s := strconv.FormatFloat(f, 'f', d, 64)
	whole, frac, _ := strings.Cut(s, ".")
	n, _ := strconv.ParseInt(whole, 10, 64)
	out := Group(n, locale)
	if frac != "" {
		if locale == "en" {
			out += "." + frac
		} else {
			out += "," + frac
		}
	}
	if neg && strings.Trim(s, "0.") != "" {
		out = "-" + out
	}
	return out
}

// Number is a number's text (digits, maybe a decimal point) as the locale writes it, its digits
// grouped: 1.234.567,5 (id), 1,234,567.5 (en); other text as it is.
func Number(s, locale string) string {
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return Group(n, locale)
	}
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		_, frac, _ := strings.Cut(s, ".")
		return Decimal(f, len(frac), locale)
	}
	return s
}

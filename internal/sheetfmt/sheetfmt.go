// Package sheetfmt is what every workbook billsync writes shares, so a write job's plan reads like a report:
// the header row's look, number formats tagged with the locale (LibreOffice and Excel then use its
// separators whatever the reader's own settings), digits grouped the locale's way, and the print setup
// (A4 landscape, one page wide, a footer with page x of y).
package sheetfmt

import (
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

// PageSetup prints a sheet on A4 landscape, one page wide, with footer (Footer); on a stream-written sheet
// it must come before the sheet is streamed.
func PageSetup(f *excelize.File, sheet, footer string) error {
	yes, a4, landscape, one, any := true, 9, "landscape", 1, 0
	if err := f.SetSheetProps(sheet, &excelize.SheetPropsOptions{FitToPage: &yes}); err != nil {
		return err
	}
	if err := f.SetPageLayout(sheet, &excelize.PageLayoutOptions{Size: &a4, Orientation: &landscape,
		FitToWidth: &one, FitToHeight: &any}); err != nil {
		return err
	}
	m := func(v float64) *float64 { return &v }
	if err := f.SetPageMargins(sheet, &excelize.PageLayoutMarginsOptions{Left: m(0.4), Right: m(0.4), Top: m(0.5),
		Bottom: m(0.6), Header: m(0.2), Footer: m(0.25)}); err != nil {
		return err
	}
	return f.SetHeaderFooter(sheet, &excelize.HeaderFooterOptions{OddFooter: footer})
}

// Footer is the printed footer: left (what the file is and as of when) on the left, the sheet's name in the
// centre, page x of y in the locale on the right.
func Footer(left, locale string) string {
	page := "Halaman &P dari &N"
	if locale == "en" {
		page = "Page &P of &N"
	}
	return "&L&8" + strings.ReplaceAll(left, "&", "&&") + "&C&8&A&R&8" + page
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

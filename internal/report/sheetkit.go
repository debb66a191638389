package report

import (
	"fmt"
	"time"

	"github.com/xuri/excelize/v2"
)

// What other packages' workbooks (the write jobs' plan and result files) share with the reports, so
// a reviewer's file reads like a report: the header look, number formats with the locale's
// separators, print setup and footer, digits and times as the locale writes them.

// HeaderStyle is the reports' header row: white bold on dark blue, wrapped.
func HeaderStyle() *excelize.Style {
	return &excelize.Style{
		Font:      &excelize.Font{Family: "Calibri", Bold: true, Color: "FFFFFF"},
		Fill:      excelize.Fill{Type: "pattern", Pattern: 1, Color: []string{"1F4E79"}},
		Alignment: &excelize.Alignment{Vertical: "center", WrapText: true},
	}
}

// NumberFormat is a column format's number format ("money", "credit", "int", "datetime", ...) as the
// reports write it in locale, money in currency.
func NumberFormat(format, currency, locale string) (string, error) {
	l, err := langOf(locale)
	if err != nil {
		return "", err
	}
	f, ok := numFmt(format, currency, l)
	if !ok {
		return "", fmt.Errorf("no number format %q", format)
	}
	return f, nil
}

// PageSetup prints sheet as the reports do: A4 landscape, one page wide, with footer (Footer).
func PageSetup(f *excelize.File, sheet, footer string) error { return pageSetup(f, sheet, footer) }

// Footer is the reports' printed footer: title and as-of left, sheet centre, page x of y right.
func Footer(title, asOf, locale string) string {
	l, err := langOf(locale)
	if err != nil {
		l = langs[defaultLocale]
	}
	return footerText(title, asOf, l)
}

// Group is n with the locale's thousands separator: 1.234.567 (id), 1,234,567 (en).
func Group(n int64, locale string) string {
	l, err := langOf(locale)
	if err != nil {
		l = langs[defaultLocale]
	}
	return l.number(n)
}

// Figure is f with the locale's separators and only the decimals it has: 1.234.567 or 1.234,5 (id).
func Figure(f float64, locale string) string {
	l, err := langOf(locale)
	if err != nil {
		l = langs[defaultLocale]
	}
	return l.figure(f)
}

// DateTime is an instant in loc as the locale writes it, its zone named: 23 Nov 2026 14:05 WIB.
func DateTime(t time.Time, loc *time.Location, locale string) string {
	l, err := langOf(locale)
	if err != nil {
		l = langs[defaultLocale]
	}
	return l.dateTime(t, loc)
}

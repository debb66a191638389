package sheetfmt

import (
	"strings"
	"testing"

	"github.com/xuri/excelize/v2"
)

func TestGroupAndDecimal(t *testing.T) {
	for _, tc := range []struct {
		n        int64
		id, en   string
		f        float64
		d        int
		fid, fen string
	}{
		{0, "0", "0", 0, 0, "0", "0"},
		{645341, "645.341", "645,341", 1500.5, 1, "1.500,5", "1,500.5"},
		{-1234567, "-1.234.567", "-1,234,567", -0.04, 1, "0,0", "0.0"},
		{999, "999", "999", -12345.25, 2, "-12.345,25", "-12,345.25"},
	} {
		if got := Group(tc.n, "id"); got != tc.id {
			t.Errorf("Group(%d, id) = %q, want %q", tc.n, got, tc.id)
		}
		if got := Group(tc.n, "en"); got != tc.en {
			t.Errorf("Group(%d, en) = %q, want %q", tc.n, got, tc.en)
		}
		if got := Decimal(tc.f, tc.d, "id"); got != tc.fid {
			t.Errorf("Decimal(%g, %d, id) = %q, want %q", tc.f, tc.d, got, tc.fid)
		}
		if got := Decimal(tc.f, tc.d, "en"); got != tc.fen {
			t.Errorf("Decimal(%g, %d, en) = %q, want %q", tc.f, tc.d, got, tc.fen)
		}
	}
}

func TestNumberFormatsCarryTheLocale(t *testing.T) {
	if f, ok := NumberFormat("money", "IDR", "id"); !ok || f != `[$-421]"Rp "#,##0;-"Rp "#,##0;"-"` {
		t.Errorf("money: %q %v", f, ok)
	}
	if f, ok := NumberFormat("credit", "IDR", "en"); !ok || f != `[$-409]#,##0;-#,##0;"-"` {
		t.Errorf("credit: %q %v", f, ok)
	}
	if _, ok := NumberFormat("nonsense", "IDR", "id"); ok {
		t.Error("an unknown format has a number format")
	}
	if got := Footer("Plan A&B", "en"); got != "&L&10Plan A&&B&C&10&A&R&10Page &P of &N" {
		t.Errorf("footer %q", got)
	}
}

// TestScaleKeepsTextReadable: a sheet prints at the scale its columns need to fill the page's
// width, at most 100 % (or its MaxScale), never below MinScale: 11 pt text never under 8 pt, a
// 10 pt footer never under 7 pt, however wide the sheet. Fit-to-width, which had no floor, is
// never set.
func TestScaleKeepsTextReadable(t *testing.T) {
	if BodyPt*MinScale/100.0 < MinBodyPt || FooterPt*MinScale/100.0 < MinFooterPt {
		t.Fatalf("at %d %%: body %.2f pt, footer %.2f pt", MinScale, BodyPt*MinScale/100.0, FooterPt*MinScale/100.0)
	}
	narrow := []float64{10, 20, 12}
	wide := make([]float64, 40)
	for i := range wide {
		wide[i] = 14
	}
	for _, tc := range []struct {
		name     string
		widths   []float64
		portrait bool
		want     int
		fits     bool
	}{
		{"narrow", narrow, false, 100, true},
		{"a little wide", []float64{36, 36, 36, 36, 36}, false, 76, true},
		{"too wide", wide, false, MinScale, false},
		{"summary", []float64{26, 80, 8}, true, 82, true},
	} {
		if got := Scale(tc.widths, tc.portrait); got != tc.want {
			t.Errorf("%s: scale %d, want %d", tc.name, got, tc.want)
		}
		if got := Fits(tc.widths, tc.portrait); got != tc.fits {
			t.Errorf("%s: fits %v, want %v", tc.name, got, tc.fits)
		}
		f := excelize.NewFile()
		p := Page{Portrait: tc.portrait, Widths: tc.widths, TitleFirst: 1, TitleLast: 1, MaxScale: 90}
		if err := PageSetup(f, "Sheet1", Footer("x", "id"), p); err != nil {
			t.Fatal(err)
		}
		if err := PrintTitles(f, "Sheet1", p); err != nil {
			t.Fatal(err)
		}
		layout, _ := f.GetPageLayout("Sheet1")
		props, _ := f.GetSheetProps("Sheet1")
		if props.FitToPage != nil && *props.FitToPage || layout.AdjustTo == nil ||
			int(*layout.AdjustTo) != min(Scale(tc.widths, tc.portrait), 90) {
			t.Errorf("%s: fit to page %v, scale %v", tc.name, props.FitToPage, layout.AdjustTo)
		}
		var titles string
		for _, d := range f.GetDefinedName() {
			if d.Name == "_xlnm.Print_Titles" {
				titles = d.RefersTo
			}
		}
		// A sheet too wide for one page repeats its first column on each page across.
		if want := map[bool]string{true: "'Sheet1'!$1:$1", false: "'Sheet1'!$A:$A,'Sheet1'!$1:$1"}[tc.fits]; titles != want {
			t.Errorf("%s: print titles %q, want %q", tc.name, titles, want)
		}
		if !strings.Contains(Footer("x", "id"), "&10") {
			t.Error("footer not at FooterPt")
		}
		f.Close()
	}
}

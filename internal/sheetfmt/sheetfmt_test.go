package sheetfmt

import "testing"

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
	if got := Footer("Plan A&B", "en"); got != "&L&8Plan A&&B&C&8&A&R&8Page &P of &N" {
		t.Errorf("footer %q", got)
	}
}

package csvout

import (
	"bytes"
	"encoding/csv"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/billsync/billsync/internal/report/value"
)

// TestCSVFieldsAsEncodingCSV: the rows Writer builds itself are the bytes encoding/csv's
// Writer (UseCRLF) writes for the same fields: quoting, doubled quotes, CR and LF in quotes,
// leading spaces (Unicode ones too), the \. line and empty fields.
func TestCSVFieldsAsEncodingCSV(t *testing.T) {
	rows := [][]string{
		{"plain", "", "with,comma", `say "hi"`, "line\nbreak", "cr\rhere", "crlf\r\nend"},
		{" leading space", "\u00a0nbsp first", "\u3000ideographic", "trailing ", `\.`, `\.x`, "tab\tinside"},
		{"\ttab first", "Ñoño", "'=1+2", "", ""},
		{""},
		{"12345", "-1.5", "2026-06-30", "2026-06-30T23:59:59.5+07:00"},
	}
	for _, r := range rows {
		var want bytes.Buffer
		w := csv.NewWriter(&want)
		w.UseCRLF = true
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
		w.Flush()
		var got []byte
		for i, f := range r {
			got = AppendField(got, i, f)
		}
		got = append(got, "\r\n"...)
		if !bytes.Equal(got, want.Bytes()) {
			t.Errorf("row %q:\n got %q\nwant %q", r, got, want.Bytes())
		}
	}
}

// awkwardFloats are numbers around the whole-number shortcuts' edges: zero of both signs, the
// 2^53 bound and beyond, fractions, halves that round, the extremes, NaN and infinities.
var awkwardFloats = []float64{0, math.Copysign(0, -1), 1, -1, 46203, 150000, -5, 0.5, -0.5, 1.5, 2.5, 12.345, -12.345,
	1<<53 - 1, 1 << 53, 1<<53 + 2, -(1 << 53), -(1<<53 + 2), 1e15, 1e16, 1e20, 1e21, 1e300, -1e300, 123456789.125,
	math.MaxInt64, math.MinInt64, math.SmallestNonzeroFloat64, math.MaxFloat64, 0.1 + 0.2, 99.95, 46203.999988425923,
	math.NaN(), math.Inf(1), math.Inf(-1)}

// TestAppendDisplayAsStrconv: the CSV's rounded numbers are strconv's for every value and
// number of decimals, percentages included.
func TestAppendDisplayAsStrconv(t *testing.T) {
	for _, f := range awkwardFloats {
		for _, d := range []int{0, 1, 2} {
			for _, pct := range []bool{false, true} {
				want := f
				if pct {
					want *= 100
				}
				w := strconv.FormatFloat(want, 'f', d, 64)
				if math.IsNaN(want) || math.IsInf(want, 0) {
					w = ""
				}
				if got := string(appendDisplay(nil, f, d, pct, value.KindFloat, time.UTC)); got != w {
					t.Errorf("appendDisplay(%v, %d decimals, percent %v) = %q, want %q", f, d, pct, got, w)
				}
			}
		}
	}
}

// TestAppendDateAsFormat: dates are time.DateOnly's text, in and outside four-digit years.
func TestAppendDateAsFormat(t *testing.T) {
	days := []time.Time{time.Date(2026, 6, 30, 0, 0, 0, 0, time.UTC), time.Date(1000, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC), time.Date(999, 12, 31, 0, 0, 0, 0, time.UTC),
		time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(-5, 3, 4, 0, 0, 0, 0, time.UTC),
		time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC)}
	for d := time.Date(1899, 12, 1, 0, 0, 0, 0, time.UTC); d.Year() < 2101; d = d.AddDate(0, 0, 17) {
		days = append(days, d)
	}
	for _, d := range days {
		if got, want := string(appendDate(nil, d)), d.Format(time.DateOnly); got != want {
			t.Errorf("appendDate(%v) = %q, want %q", d, got, want)
		}
	}
}

// TestCSVQuotingEveryRune: a field of each ASCII byte and of many other runes, alone, leading and
// inside, is quoted exactly when encoding/csv quotes it.
func TestCSVQuotingEveryRune(t *testing.T) {
	var runes []rune
	for r := rune(0); r < 0x3100; r++ {
		runes = append(runes, r)
	}
	runes = append(runes, 0xfeff, 0x1680, 0x2028, 0x205f, utf8.RuneError)
	for _, r := range runes {
		for _, f := range []string{string(r), string(r) + "x", "x" + string(r) + "y", "\xff" + string(r)} {
			var want strings.Builder
			w := csv.NewWriter(&want)
			w.UseCRLF = true
			if err := w.Write([]string{f}); err != nil {
				t.Fatal(err)
			}
			w.Flush()
			if got := string(AppendField(nil, 0, f)) + "\r\n"; got != want.String() {
				t.Errorf("field %q (space %v): got %q, want %q", f, unicode.IsSpace(r), got, want.String())
			}
		}
	}
}

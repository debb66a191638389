package report

import (
	"bytes"
	"encoding/csv"
	"testing"
)

// TestCSVFieldsAsEncodingCSV: the rows csvSheet builds itself are the bytes encoding/csv's
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
			got = appendCSVField(got, i, f)
		}
		got = append(got, "\r\n"...)
		if !bytes.Equal(got, want.Bytes()) {
			t.Errorf("row %q:\n got %q\nwant %q", r, got, want.Bytes())
		}
	}
}

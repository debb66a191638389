package cellsafe

import "testing"

func TestText(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`=HYPERLINK("http://evil.example","x")`, `'=HYPERLINK("http://evil.example","x")`},
		{`+cmd|' /C calc'!A0`, `'+cmd|' /C calc'!A0`},
		{"-2+3", "-2+3"},
		{"+62 812-3456-7890", "+62 812-3456-7890"},
		{"+6281234567890", "+6281234567890"},
		{"-", "'-"},
		{"+1 (A1)", "'+1 (A1)"},
		{"-2+3*A1", "'-2+3*A1"},
		{"@SUM(A1)", "'@SUM(A1)"},
		{"\t=1", "'\t=1"},
		{"\r=1", "'\r=1"},
		{"Ñoño", "Ñoño"},
		{"a=b", "a=b"},
		{"", ""},
		{"'already", "'already"},
	} {
		if got := Text(tc.in); got != tc.want {
			t.Errorf("Text(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestUndo(t *testing.T) {
	for _, s := range []string{`=HYPERLINK("http://evil.example","x")`, "+cmd", "-", "@x", "\t=1", "'plain", "+62 812", "Ñoño", "", "'"} {
		if got := Undo(Text(s)); got != s {
			t.Errorf("Undo(Text(%q)) = %q", s, got)
		}
	}
}

// TestStartsLikeFormula: a workbook marks every text a spreadsheet would read as a formula when
// edited, phone numbers included; Text marks the same text but phone numbers.
func TestStartsLikeFormula(t *testing.T) {
	for _, tc := range []struct {
		in         string
		starts, cs bool
	}{
		{"=1", true, true}, {"-Budi", true, true}, {"+62 812-3456-7890", true, false}, {"@x", true, true},
		{"\t=1", true, true}, {"Budi", false, false}, {"", false, false}, {"'=1", false, false},
	} {
		if got := StartsLikeFormula(tc.in); got != tc.starts {
			t.Errorf("StartsLikeFormula(%q) = %v", tc.in, got)
		}
		if got := NeedsMark(tc.in); got != tc.cs || (Text(tc.in) != tc.in) != tc.cs {
			t.Errorf("NeedsMark(%q) = %v, Text %q", tc.in, got, Text(tc.in))
		}
	}
}

package cellsafe

import "testing"

func TestText(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`=HYPERLINK("http://evil.example","x")`, `'=HYPERLINK("http://evil.example","x")`},
		{`+cmd|' /C calc'!A0`, `'+cmd|' /C calc'!A0`},
		{"-2+3", "'-2+3"},
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

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

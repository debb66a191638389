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

// TestVisible: every character a reader cannot see, or that reorders what they see, is written
// by its code, so "\u202eosotnaS iduB" cannot display as "Budi Santoso"; other text (accents,
// other scripts, emoji with their variation selector) is unchanged, and Undo gives the text back.
func TestVisible(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"Budi\u200b Santoso", "Budi⟦U+200B⟧ Santoso"},
		{"\u202eosotnaS iduB", "⟦U+202E⟧osotnaS iduB"},
		{"a\u2066b\u2069\u00adc\ufeff", "a⟦U+2066⟧b⟦U+2069⟧⟦U+00AD⟧c⟦U+FEFF⟧"},
		{"x\x00y\x1bz\u0085", "x⟦U+0000⟧y⟦U+001B⟧z⟦U+0085⟧"},
		{"tag\U000E0041", "tag⟦U+E0041⟧"},
		{"\u3164", "⟦U+3164⟧"},
		{"Вudi Ñoño 山田 ❤\ufe0f", "Вudi Ñoño 山田 ❤\ufe0f"},
		{"tab\tand\r\nlines", "tab\tand\r\nlines"},
		{"", ""},
	} {
		got := Visible(tc.in)
		if got != tc.want {
			t.Errorf("Visible(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if back := Undo(Text(got)); back != tc.in {
			t.Errorf("Undo(Text(Visible(%q))) = %q", tc.in, back)
		}
	}
	// Text that merely looks like a mark is not changed back into a character.
	for _, s := range []string{"⟦U+0041⟧", "⟦U+200b⟧", "⟦U+00200B⟧", "⟦U+ZZZZ⟧", "⟦U+200B", "a⟦U+⟧b"} {
		if got := Undo(s); got != s {
			t.Errorf("Undo(%q) = %q", s, got)
		}
	}
}

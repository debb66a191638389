package cellsafe

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Text from outside may carry characters a spreadsheet draws as nothing or that reorder what is
// drawn: a zero-width space inside a name, a right-to-left override that makes
// "\u202eosotnaS iduB" display as "Budi Santoso". A reader cannot tell such a name from the
// real one, so cells show each of them as its code point between white square brackets,
// ⟦U+202E⟧: visible, searchable, and not a character a name or e-mail carries, so Undo can
// turn it back.

const (
	markOpen  = "⟦U+"
	markClose = "⟧"
)

// Invisible says r is drawn as nothing or changes how the text around it is drawn: format
// characters (Cf: zero-width space and joiners, bidirectional controls, the byte-order mark,
// soft hyphen, tags), control characters other than tab and line breaks, the line and
// paragraph separators, and the other default-ignorable characters that are letters or marks
// drawn blank (Hangul fillers, the combining grapheme joiner). Variation selectors are left
// alone: they only pick a glyph (an emoji's colour form) and are drawn with their character.
func Invisible(r rune) bool {
	switch {
	case r < 0x80:
		return r < 0x20 && r != '\t' && r != '\n' && r != '\r' || r == 0x7f
	case r < 0xa0:
		return true // C1 controls
	case r == 0x034f, r == 0x115f, r == 0x1160, r == 0x3164, r == 0xffa0, r == 0x17b4, r == 0x17b5,
		r == 0x2028, r == 0x2029:
		return true
	}
	return unicode.Is(unicode.Cf, r)
}

// Visible returns s with every Invisible character written as ⟦U+XXXX⟧; text without one
// (nearly all) is returned as it is, without a copy.
func Visible(s string) string {
	i := firstInvisible(s)
	if i < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	b.WriteString(s[:i])
	for _, r := range s[i:] {
		if Invisible(r) {
			b.WriteString(markOpen)
			b.WriteString(hex4(r))
			b.WriteString(markClose)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// firstInvisible is the byte index of s's first Invisible character, or -1; printable ASCII is
// passed over a byte at a time, as most text is nothing else.
func firstInvisible(s string) int {
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c < 0x7f {
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if Invisible(r) {
			return i
		}
		i += n
	}
	return -1
}

func hex4(r rune) string {
	h := strings.ToUpper(strconv.FormatInt(int64(r), 16))
	if len(h) < 4 {
		h = strings.Repeat("0", 4-len(h)) + h
	}
	return h
}

// undoVisible turns each ⟦U+XXXX⟧ of an Invisible character back into the character.
func undoVisible(s string) string {
	if !strings.Contains(s, markOpen) {
		return s
	}
	var b strings.Builder
	for {
		i := strings.Index(s, markOpen)
		if i < 0 {
			break
		}
		rest := s[i+len(markOpen):]
		j := strings.Index(rest, markClose)
		if j < 4 || j > 6 {
			b.WriteString(s[:i+len(markOpen)])
			s = rest
			continue
		}
		code := rest[:j]
		v, err := strconv.ParseUint(code, 16, 32)
		if err != nil || strings.ToUpper(code) != code || !Invisible(rune(v)) || hex4(rune(v)) != code {
			b.WriteString(s[:i+len(markOpen)])
			s = rest
			continue
		}
		b.WriteString(s[:i])
		b.WriteRune(rune(v))
		s = rest[j+len(markClose):]
	}
	b.WriteString(s)
	return b.String()
}

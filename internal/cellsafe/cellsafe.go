// Package cellsafe keeps text that came from outside (customer names, e-mails,
// descriptions) from being run as a formula by the spreadsheet that opens a
// CSV or workbook billsync wrote: a CSV with an apostrophe in front (Text), a
// workbook with the cell format's quote prefix where StartsLikeFormula; and from
// passing for other text: characters drawn as nothing shown by their code (Visible).
package cellsafe

// Text returns s with an apostrophe in front when it starts with a character
// a spreadsheet reads as the start of a formula (= + - @) or that some readers
// strip before doing so (tab, carriage return); any other text is unchanged.
// The apostrophe is the spreadsheet's own "this is text" mark, and is what the
// job plan and result files use. Text made only of digits, spaces and + - ( ) .
// (a phone number such as +62 812-3456-7890) is left alone: read as a formula
// it can only be arithmetic, never a call or a link.
func Text(s string) string {
	if NeedsMark(s) {
		return "'" + s
	}
	return s
}

// StartsLikeFormula says s starts with a character a spreadsheet reads as the start of a
// formula, phone numbers included: a workbook cell can mark all of them as text at no cost
// to how they read.
func StartsLikeFormula(s string) bool {
	return s != "" && isTrigger(s[0])
}

// NeedsMark says Text marks s: a spreadsheet would read it as a formula. A workbook marks
// such text with its cell style's quote prefix instead (the text shown as it is, and kept
// text when a reader edits the cell), which only a CSV cannot carry.
func NeedsMark(s string) bool {
	return StartsLikeFormula(s) && !numberLike(s)
}

func numberLike(s string) bool {
	digits := false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= '0' && c <= '9':
			digits = true
		case c == ' ' || c == '+' || c == '-' || c == '(' || c == ')' || c == '.':
		default:
			return false
		}
	}
	return digits
}

func isTrigger(b byte) bool {
	switch b {
	case '=', '+', '-', '@', '\t', '\r':
		return true
	}
	return false
}

// Undo is the inverse of Text and Visible, for files billsync reads back (a report sheet used
// as a job's input): the apostrophe Text put in front of formula-like text is
// taken off and each ⟦U+XXXX⟧ Visible wrote is the character again; anything else is
// unchanged. (Text that itself began with an apostrophe and a formula character loses the
// apostrophe: Text cannot mark it.)
func Undo(s string) string {
	if len(s) > 1 && s[0] == '\'' && isTrigger(s[1]) && !numberLike(s[1:]) {
		s = s[1:]
	}
	return undoVisible(s)
}

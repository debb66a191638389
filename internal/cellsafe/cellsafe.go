// Package cellsafe keeps text that came from outside (customer names, e-mails,
// descriptions) from being run as a formula by the spreadsheet that opens a
// CSV or workbook billsync wrote.
package cellsafe

// Text returns s with an apostrophe in front when it starts with a character
// a spreadsheet reads as the start of a formula (= + - @) or that some readers
// strip before doing so (tab, carriage return); any other text is unchanged.
// The apostrophe is the spreadsheet's own "this is text" mark, and is what the
// job plan and result files use.
func Text(s string) string {
	if s != "" && isTrigger(s[0]) {
		return "'" + s
	}
	return s
}

func isTrigger(b byte) bool {
	switch b {
	case '=', '+', '-', '@', '\t', '\r':
		return true
	}
	return false
}

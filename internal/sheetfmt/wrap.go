package sheetfmt

import (
	"strings"
	"unicode/utf8"
)

// WrappedLines is how many lines s takes wrapped at word boundaries to lines of at most width
// characters (a longer word is broken): how tall a wrapped cell must be, since readers do not grow
// the rows of a file they did not write. The reports and the job files size their rows with it.
func WrappedLines(s string, width int) int {
	n := 0
	for _, para := range strings.Split(s, "\n") {
		n++
		used := 0
		for _, word := range strings.Fields(para) {
			w := utf8.RuneCountInString(word)
			switch {
			case used == 0:
			case used+1+w <= width:
				used++
			default:
				n++
				used = 0
			}
			for w > width {
				n++
				w -= width
			}
			used += w
		}
	}
	return n
}

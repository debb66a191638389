package report

import (
	"strings"
	"unicode/utf8"
)

// wrappedLines is how many lines s takes wrapped at word boundaries to lines
// of at most width characters (a longer word is broken).
func wrappedLines(s string, width int) int {
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

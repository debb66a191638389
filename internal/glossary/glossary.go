// Package glossary reads the word list of docs/reports.md: each Indonesian term the reports,
// job files and e-mails use, with its accounting meaning, its English equivalent and the words
// it replaces. Tests of those packages hold their Indonesian strings to it, so a word a native
// reader flagged ("Buku besar" for a customer's credit history) cannot come back unnoticed.
package glossary

import (
	"bufio"
	"fmt"
	"os"
	"regexp"
	"strings"
)

// Term is one row of the glossary table.
type Term struct {
	Indonesian, Meaning, English string
	Avoid                        []string // words not to use for it, lower case
}

// heading is the glossary table's header row, as docs/reports.md writes it.
const heading = "| Indonesian | Accounting meaning | English | Not |"

var codeSpan = regexp.MustCompile("`([^`]+)`")

// Load reads the glossary table of the markdown file at path.
func Load(path string) ([]Term, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("glossary: %w", err)
	}
	defer f.Close()
	var terms []Term
	in, n := false, 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == heading:
			in = true
			continue
		case !in:
			continue
		case strings.HasPrefix(line, "|---") || strings.HasPrefix(line, "| ---"):
			continue
		case !strings.HasPrefix(line, "|"):
			in = false
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		if len(cells) != 4 {
			return nil, fmt.Errorf("glossary: %s:%d: want 4 cells, have %d", path, n, len(cells))
		}
		t := Term{Indonesian: strings.TrimSpace(cells[0]), Meaning: strings.TrimSpace(cells[1]), English: strings.TrimSpace(cells[2])}
		for _, m := range codeSpan.FindAllStringSubmatch(cells[3], -1) {
			t.Avoid = append(t.Avoid, strings.ToLower(m[1]))
		}
		if t.Indonesian == "" || t.English == "" {
			return nil, fmt.Errorf("glossary: %s:%d: a term without its Indonesian or English word", path, n)
		}
		terms = append(terms, t)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("glossary: %s: %w", path, err)
	}
	if len(terms) == 0 {
		return nil, fmt.Errorf("glossary: %s has no table headed %q", path, heading)
	}
	return terms, nil
}

// Avoided lists the avoided words found in text (case-insensitive, whole words), each with
// the term to use instead.
func Avoided(terms []Term, text string) []string {
	low := strings.ToLower(text)
	var out []string
	for _, t := range terms {
		for _, a := range t.Avoid {
			if regexp.MustCompile(`(^|[^\pL])` + regexp.QuoteMeta(a) + `($|[^\pL])`).MatchString(low) {
				out = append(out, fmt.Sprintf("%q (use %q)", a, t.Indonesian))
			}
		}
	}
	return out
}

package report

import (
	"errors"
	"fmt"
	"io/fs"
	"regexp"
	"slices"
	"strings"
)

// A report's sheets may compute the same thing: credit's By product and Balances sheets read the
// same balances (credit_balances). Sharing pays only when storing the rows costs less than
// computing them again: where a sheet filters or aggregates them, its own call may read less than
// the stored table holds (docs/reports.md). Each query file
// calls the warehouse's table macro itself, so it runs alone in any DuckDB client, but in a
// report the call is made once: the report's definition names the macro (shared:), loading checks
// that each sheet calling it does so with the same text after the same variables, and the
// report's setup stores the call's rows in a table of an in-memory scratch database every
// connection sees; each sheet's query then reads that table in the call's place. The sheets
// still run at once on connections of their own.

// sharedCall is a table macro call the sheets of a report share.
type sharedCall struct {
	macro    string
	call     string   // the call's text, as in every sheet's query file
	preamble []string // the SET VARIABLE statements the files run before it
	sheets   []string // the query files that call it
}

var (
	setLineRe  = regexp.MustCompile(`^SET VARIABLE \w+ = .*;$`)
	macroRe    = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)
	identRunRe = regexp.MustCompile(`[A-Za-z0-9_.]$`)
)

// sharedCalls checks a definition's shared: macros against its sheets' query files (in order) and
// returns what each sheet shares. A query file may share a call when it is comment lines, SET VARIABLE
// lines and one statement that calls the macro once; every file calling it must do so with the
// same text after the same SET VARIABLE lines, so the call gives each of them the same rows.
func sharedCalls(macros, files []string, sqls fs.FS) ([]*sharedCall, error) {
	var out []*sharedCall
	var errs []error
	for _, m := range macros {
		if !macroRe.MatchString(m) {
			errs = append(errs, fmt.Errorf("shared %q: not a macro name", m))
			continue
		}
		sc := &sharedCall{macro: m}
		for _, file := range files {
			b, err := fs.ReadFile(sqls, file)
			if err != nil {
				errs = append(errs, fmt.Errorf("shared %s: %w", m, err))
				continue
			}
			pre, call, n, err := macroCall(string(b), m)
			switch {
			case err != nil:
				errs = append(errs, fmt.Errorf("shared %s: %s: %w", m, file, err))
				continue
			case n == 0:
				continue
			case n > 1:
				errs = append(errs, fmt.Errorf("shared %s: %s calls it %d times: a shared call is made once per file", m, file, n))
				continue
			}
			if len(sc.sheets) == 0 {
				sc.call, sc.preamble = call, pre
			} else if call != sc.call {
				errs = append(errs, fmt.Errorf("shared %s: %s calls %s, %s calls %s: shared calls must be the same", m, file, call, sc.sheets[0], sc.call))
			} else if !slices.Equal(pre, sc.preamble) {
				errs = append(errs, fmt.Errorf("shared %s: %s sets other variables before the call than %s (%s against %s)", m, file, sc.sheets[0],
					strings.Join(pre, " "), strings.Join(sc.preamble, " ")))
			}
			sc.sheets = append(sc.sheets, file)
		}
		if len(sc.sheets) < 2 {
			errs = append(errs, fmt.Errorf("shared %s: called by %d of the report's sheets; sharing needs two", m, len(sc.sheets)))
			continue
		}
		out = append(out, sc)
	}
	return out, errors.Join(errs...)
}

// macroCall finds the calls of macro in a query file's text: the SET VARIABLE lines before the
// statement, the text of the call (from the name to its closing parenthesis) and how many calls
// there are. It refuses a file with anything but comments and SET VARIABLE lines before the
// statement that calls it, or with more than one statement after them.
func macroCall(text, macro string) (preamble []string, call string, n int, err error) {
	lines := strings.Split(text, "\n")
	body := -1
	for i, l := range lines {
		t := strings.TrimSpace(l)
		switch {
		case t == "" || strings.HasPrefix(t, "--"):
		case setLineRe.MatchString(t):
			preamble = append(preamble, t)
		default:
			body = i
		}
		if body >= 0 {
			break
		}
	}
	if body < 0 {
		return nil, "", 0, nil
	}
	stmt := strings.Join(lines[body:], "\n")
	code := stripComments(stmt)
	if i := statementEnd(code); i >= 0 && strings.TrimSpace(code[i+1:]) != "" {
		if strings.Contains(code, macro+"(") {
			return nil, "", 0, errors.New("more than one statement after the SET VARIABLE lines")
		}
		return nil, "", 0, nil
	}
	for rest := code; ; {
		i := strings.Index(rest, macro+"(")
		if i < 0 {
			break
		}
		if i > 0 && identRunRe.MatchString(rest[:i]) {
			rest = rest[i+len(macro):] // part of another name
			continue
		}
		end := closingParen(rest, i+len(macro))
		if end < 0 {
			return nil, "", 0, fmt.Errorf("%s( without its closing parenthesis", macro)
		}
		if n == 0 {
			call = rest[i : end+1]
		}
		n++
		rest = rest[end+1:]
	}
	if n > 0 && strings.Count(code, call) != n {
		return nil, "", 0, fmt.Errorf("the calls of %s differ", macro)
	}
	return preamble, call, n, nil
}

// closingParen is the index of the parenthesis closing the one at open, outside string literals,
// or -1.
func closingParen(s string, open int) int {
	depth, quoted := 0, false
	for i := open; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\'':
			quoted = !quoted
		case quoted:
		case c == '(':
			depth++
		case c == ')':
			depth--
			if depth == 0 {
				return i
			}
		}
	}
	return -1
}

// statementEnd is the index of the first semicolon outside string literals, or -1.
func statementEnd(s string) int {
	quoted := false
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\'':
			quoted = !quoted
		case ';':
			if !quoted {
				return i
			}
		}
	}
	return -1
}

// stripComments removes -- comments outside string literals, keeping the line breaks.
func stripComments(s string) string {
	var b strings.Builder
	quoted := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '\'' {
			quoted = !quoted
		}
		if !quoted && c == '-' && i+1 < len(s) && s[i+1] == '-' {
			j := strings.IndexByte(s[i:], '\n')
			if j < 0 {
				break
			}
			i += j - 1
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

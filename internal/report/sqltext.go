package report

import (
	"fmt"
	"strings"
)

// tokenKind is what a token of SQL text is; comments and spaces make none.
type tokenKind int

const (
	tokWord   tokenKind = iota // a keyword or bare name
	tokIdent                   // a "quoted" name
	tokString                  // a 'string', E'string' or $$string$$: text is its value
	tokOther                   // a number, operator or punctuation
)

type token struct {
	kind tokenKind
	text string
}

// statement is one statement of SQL text: its text and its tokens.
type statement struct {
	text string
	toks []token
}

// splitSQL cuts SQL text into statements at the semicolons outside strings, quoted names and
// comments, as DuckDB's parser does; statements of only comments or spaces are dropped. It needs
// to be right only for telling statements apart: each statement is prepared alone, and DuckDB
// refuses one that holds two (statementKind), so a wrong cut fails instead of passing unseen.
func splitSQL(text string) ([]statement, error) {
	var out []statement
	var toks []token
	start := 0
	flush := func(end int) {
		if len(toks) > 0 {
			out = append(out, statement{text: strings.TrimSpace(text[start:end]), toks: toks})
		}
		toks = nil
		start = end + 1
	}
	for i := 0; i < len(text); {
		c := text[i]
		switch {
		case c == ';':
			flush(i)
			i++
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v':
			i++
		case c == '-' && i+1 < len(text) && text[i+1] == '-':
			for i < len(text) && text[i] != '\n' {
				i++
			}
		case c == '/' && i+1 < len(text) && text[i+1] == '*':
			depth := 0
			for i < len(text) {
				if strings.HasPrefix(text[i:], "/*") {
					depth++
					i += 2
				} else if strings.HasPrefix(text[i:], "*/") {
					depth--
					i += 2
					if depth == 0 {
						break
					}
				} else {
					i++
				}
			}
			if depth != 0 {
				return nil, fmt.Errorf("a /* comment is not closed")
			}
		case c == '\'' || ((c == 'e' || c == 'E') && i+1 < len(text) && text[i+1] == '\''):
			escapes := c != '\''
			if escapes {
				i++
			}
			v, n, err := quoted(text[i:], '\'', escapes)
			if err != nil {
				return nil, err
			}
			toks = append(toks, token{tokString, v})
			i += n
		case c == '"':
			v, n, err := quoted(text[i:], '"', false)
			if err != nil {
				return nil, err
			}
			toks = append(toks, token{tokIdent, v})
			i += n
		case c == '$' && dollarTag(text[i:]) != "":
			tag := dollarTag(text[i:])
			end := strings.Index(text[i+len(tag):], tag)
			if end < 0 {
				return nil, fmt.Errorf("a %s string is not closed", tag)
			}
			toks = append(toks, token{tokString, text[i+len(tag) : i+len(tag)+end]})
			i += len(tag) + end + len(tag)
		case isWordByte(c):
			j := i
			for j < len(text) && (isWordByte(text[j]) || text[j] >= '0' && text[j] <= '9' || text[j] == '$') {
				j++
			}
			toks = append(toks, token{tokWord, text[i:j]})
			i = j
		default:
			toks = append(toks, token{tokOther, string(c)})
			i++
		}
	}
	flush(len(text))
	return out, nil
}

// quoted reads a string or name quoted by q at the start of s (doubled q inside is one q; with
// escapes, a backslash escapes the next byte), returning its value and length.
func quoted(s string, q byte, escapes bool) (string, int, error) {
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		switch {
		case escapes && s[i] == '\\' && i+1 < len(s):
			b.WriteByte(s[i+1])
			i++
		case s[i] == q && i+1 < len(s) && s[i+1] == q:
			b.WriteByte(q)
			i++
		case s[i] == q:
			return b.String(), i + 1, nil
		default:
			b.WriteByte(s[i])
		}
	}
	return "", 0, fmt.Errorf("a %c quote is not closed", q)
}

// dollarTag is the $tag$ opening a dollar-quoted string at the start of s, or "".
func dollarTag(s string) string {
	for i := 1; i < len(s); i++ {
		switch c := s[i]; {
		case c == '$':
			return s[:i+1]
		case isWordByte(c), i > 1 && c >= '0' && c <= '9':
		default:
			return ""
		}
	}
	return ""
}

func isWordByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}

package report

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"regexp"
	"slices"
	"strings"

	"github.com/billsync/billsync/queries"
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

// scratchDB is the in-memory database Generate attaches for shared results. The warehouse is
// opened read-only, which refuses an in-memory database unless it is attached READ_WRITE.
const scratchDB = "report_scratch"

func attachScratch(ctx context.Context, db *sql.DB) error {
	if _, err := db.ExecContext(ctx, "ATTACH ':memory:' AS "+scratchDB+" (READ_WRITE)"); err != nil {
		return fmt.Errorf("attach the scratch database for shared results: %w", err)
	}
	return nil
}

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

// sharedCalls checks the definition's shared: macros against the sheets' query files and returns
// what each sheet shares. A query file may share a call when it is comment lines, SET VARIABLE
// lines and one statement that calls the macro once; every file calling it must do so with the
// same text after the same SET VARIABLE lines, so the call gives each of them the same rows.
func (d *Definition) sharedCalls(sqls fs.FS) ([]*sharedCall, error) {
	var out []*sharedCall
	var errs []error
	for _, m := range d.Shared {
		if !macroRe.MatchString(m) {
			errs = append(errs, fmt.Errorf("shared %q: not a macro name", m))
			continue
		}
		sc := &sharedCall{macro: m}
		for _, sh := range d.Sheets {
			b, err := fs.ReadFile(sqls, sh.Query)
			if err != nil {
				errs = append(errs, fmt.Errorf("shared %s: %w", m, err))
				continue
			}
			pre, call, n, err := macroCall(string(b), m)
			switch {
			case err != nil:
				errs = append(errs, fmt.Errorf("shared %s: %s: %w", m, sh.Query, err))
				continue
			case n == 0:
				continue
			case n > 1:
				errs = append(errs, fmt.Errorf("shared %s: %s calls it %d times: a shared call is made once per file", m, sh.Query, n))
				continue
			}
			if len(sc.sheets) == 0 {
				sc.call, sc.preamble = call, pre
			} else if call != sc.call {
				errs = append(errs, fmt.Errorf("shared %s: %s calls %s, %s calls %s: shared calls must be the same", m, sh.Query, call, sc.sheets[0], sc.call))
			} else if !slices.Equal(pre, sc.preamble) {
				errs = append(errs, fmt.Errorf("shared %s: %s sets other variables before the call than %s (%s against %s)", m, sh.Query, sc.sheets[0],
					strings.Join(pre, " "), strings.Join(sc.preamble, " ")))
			}
			sc.sheets = append(sc.sheets, sh.Query)
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

// sharedTable is a shared call's rows for one report run.
type sharedTable struct {
	sc    *sharedCall
	table string // qualified name in the scratch database
	left  int    // sheets whose query has not yet read it
}

// makeShared stores the report's shared calls' rows in the scratch database, on a connection with
// the report's variables and the query files' SET VARIABLE lines, as each sheet's would have.
func (r *reportRun) makeShared(ctx context.Context, db *sql.DB, s *settings) error {
	if len(r.d.shared) == 0 {
		return nil
	}
	conn, _, err := reportConn(ctx, db, s, r.d)
	if err != nil {
		return err
	}
	defer conn.Close()
	for _, sc := range r.d.shared {
		for _, p := range sc.preamble {
			if _, err := conn.ExecContext(ctx, p); err != nil {
				return fmt.Errorf("shared %s: %s: %w", sc.macro, p, err)
			}
		}
		t := &sharedTable{sc: sc, left: len(sc.sheets),
			table: scratchDB + ".main." + strings.ReplaceAll(r.d.Name, "-", "_") + "__" + sc.macro}
		// Stored before it is made: a failure drops what may exist of it.
		r.shared = append(r.shared, t)
		if _, err := conn.ExecContext(ctx, "CREATE OR REPLACE TABLE "+t.table+" AS SELECT * FROM "+sc.call); err != nil {
			return fmt.Errorf("shared %s: %w", sc.macro, err)
		}
	}
	return nil
}

// sheetSQL is the text the sheet runs: its query file with each shared call replaced by the
// table holding its rows (and, when it shares one, without its comments, where the call was
// found; the lines stay where they were, for DuckDB's messages).
func (r *reportRun) sheetSQL(file string) (string, error) {
	b, err := fs.ReadFile(queries.FS, file)
	if err != nil {
		return "", fmt.Errorf("query %s: %w", file, err)
	}
	text := string(b)
	for _, t := range r.shared {
		if !slices.Contains(t.sc.sheets, file) {
			continue
		}
		code := stripComments(text)
		if strings.Count(code, t.sc.call) != 1 {
			return "", fmt.Errorf("query %s: the shared call of %s is not in it once", file, t.sc.macro)
		}
		text = strings.Replace(code, t.sc.call, t.table, 1)
	}
	return text, nil
}

// readShared says the sheet's query has its whole result: the shared tables no other sheet
// still needs are dropped.
func (r *reportRun) readShared(ctx context.Context, db *sql.DB, s *settings, file string) {
	r.mu.Lock()
	var drop []*sharedTable
	for _, t := range r.shared {
		if slices.Contains(t.sc.sheets, file) {
			if t.left--; t.left == 0 {
				drop = append(drop, t)
			}
		}
	}
	r.mu.Unlock()
	for _, t := range drop {
		dropShared(ctx, db, s, t)
	}
}

// dropShared frees a shared table. A failure only costs memory until Generate closes the
// database, so it is logged, not returned.
func dropShared(ctx context.Context, db *sql.DB, s *settings, t *sharedTable) {
	if _, err := db.ExecContext(ctx, "DROP TABLE IF EXISTS "+t.table); err != nil {
		s.Log.Warn("could not drop a shared result", "table", t.table, "err", err)
	}
}

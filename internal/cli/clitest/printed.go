// Package clitest checks, for the commands' tests, that every command line billsync prints (in
// an alert, an e-mail, a hint, a usage text or a log line) parses with that command's real
// flag sets: a message that names a flag or a form the command does not have sends a person to
// a dead end.
package clitest

import (
	"errors"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// Printed is a command line found in a string literal of the source: the words after the
// command's name, up to the end of the line.
type Printed struct {
	Pos   string // file:line
	Text  string // the literal's line from the command's name on
	Words []string
}

// PrintedCommands are the lines starting with name ("syncer", "report") in the string literals
// of every Go file but the tests under root's cmd and internal directories.
func PrintedCommands(root, name string) ([]Printed, error) {
	var out []Printed
	start := regexp.MustCompile(`(^|[\s("'\x60:])` + regexp.QuoteMeta(name) + ` `)
	fset := token.NewFileSet()
	for _, dir := range []string{"cmd", "internal"} {
		err := filepath.WalkDir(filepath.Join(root, dir), func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return err
			}
			f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
			if err != nil {
				return err
			}
			ast.Inspect(f, func(n ast.Node) bool {
				lit, ok := n.(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					return true
				}
				s, err := strconv.Unquote(lit.Value)
				if err != nil {
					return true
				}
				for _, line := range strings.Split(s, "\n") {
					for _, m := range start.FindAllStringSubmatchIndex(line, -1) {
						rest := line[m[1]:]
						rel, _ := filepath.Rel(root, path)
						out = append(out, Printed{Pos: fmt.Sprintf("%s:%d", rel, fset.Position(lit.Pos()).Line),
							Text: name + " " + rest, Words: Words(rest)})
					}
				}
				return true
			})
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Words splits a line as a shell would, roughly: spaces separate, quotes ('...', "...") hold
// spaces.
func Words(s string) []string {
	var out []string
	var cur strings.Builder
	quote := rune(0)
	for _, r := range s {
		switch {
		case quote != 0:
			cur.WriteRune(r)
			if r == quote {
				quote = 0
			}
		case r == '"' || r == '\'':
			quote = r
			cur.WriteRune(r)
		case r == ' ' || r == '\t':
			if cur.Len() > 0 {
				out = append(out, cur.String())
				cur.Reset()
			}
		default:
			cur.WriteRune(r)
		}
	}
	if cur.Len() > 0 {
		out = append(out, cur.String())
	}
	return out
}

// Command is a command's grammar: its subcommands, its real flag set, how many positional
// arguments it takes and which literal ones (besides placeholders such as NAME or %s).
type Command struct {
	Sub      map[string]*Command
	Flags    func() *flag.FlagSet // a new flag set each call, as the command builds it
	Min, Max int                  // positional arguments; Max -1: any number
	Literal  func(string) bool    // a literal positional argument it accepts; nil: none
}

// placeholder is a word standing for a value: NAME, PLAN_ID, REPORT..., %s, "...", a|b.
var placeholder = regexp.MustCompile(`^([A-Z][A-Z0-9_]*(\.\.\.)?|%[a-z]|".*"|'.*'|[a-z-]+(\|[a-z-]+)+|<[a-z-]+>)$`)

// Check parses a printed line with the command's grammar. The line ends at the first word that
// is neither a subcommand, a flag, a flag's value nor a positional argument (the sentence goes
// on), or after a word ending in punctuation. A bare command (no argument at all: "then run
// syncer job resolve") names the command and is not checked further.
func (c *Command) Check(p Printed) error {
	g := c
	ws := p.Words
	i := 0
	for i < len(ws) && g.Sub != nil {
		w, _ := trim(ws[i])
		s, ok := g.Sub[w]
		if !ok && placeholder.MatchString(w) {
			return nil // "syncer job %s: ...": a subcommand named by a placeholder
		}
		if !ok {
			break
		}
		g = s
		i++
		if _, end := trim(ws[i-1]); end {
			return nil
		}
	}
	fs := g.Flags()
	fs.SetOutput(io.Discard)
	var args []string
	pos := 0
	help := false
	for ; i < len(ws); i++ {
		w, end := trim(ws[i])
		w = strings.Trim(w, "[]")
		switch {
		case len(w) > 1 && w[0] == '-' && (w[1] >= 'a' && w[1] <= 'z' || w[1] == '-'):
			name, val, hasVal := strings.Cut(strings.TrimLeft(w, "-"), "=")
			if name == "h" || name == "help" {
				help = true
			}
			fl := fs.Lookup(name)
			if fl == nil {
				if help {
					break
				}
				return fmt.Errorf("%s: %q: flag -%s is not defined", p.Pos, p.Text, name)
			}
			if b, ok := fl.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() || hasVal {
				if hasVal && placeholder.MatchString(val) {
					val = sample(fl)
					w = "-" + name + "=" + val
				}
				args = append(args, w)
				break
			}
			if end || i+1 >= len(ws) {
				return fmt.Errorf("%s: %q: flag -%s has no value", p.Pos, p.Text, name)
			}
			i++
			v, vend := trim(ws[i])
			v = strings.Trim(v, "[]")
			if placeholder.MatchString(v) {
				v = sample(fl)
			}
			args = append(args, "-"+name, v)
			end = vend
		case placeholder.MatchString(w), g.Literal != nil && g.Literal(w):
			pos++
			args = append(args, "positional")
		default:
			end = true
			i-- // not part of the command
		}
		if end {
			break
		}
	}
	if len(args) == 0 || help {
		return nil
	}
	// Flags may follow positional arguments, as every billsync command accepts them.
	for a := args; ; {
		if err := fs.Parse(a); err != nil {
			return fmt.Errorf("%s: %q: %v", p.Pos, p.Text, err)
		}
		if fs.NArg() == 0 {
			break
		}
		a = fs.Args()[1:]
	}
	if pos < g.Min || g.Max >= 0 && pos > g.Max {
		want := fmt.Sprintf("%d to %d", g.Min, g.Max)
		if g.Min == g.Max {
			want = strconv.Itoa(g.Min)
		}
		return fmt.Errorf("%s: %q: %d argument(s), the command takes %s", p.Pos, p.Text, pos, want)
	}
	return nil
}

// trim takes the punctuation that ends a sentence or a parenthesis off a word, and says whether
// the command ends with it.
func trim(w string) (string, bool) {
	t := strings.TrimRight(w, ",;:).")
	if t == "" {
		return w, true
	}
	return t, t != w
}

// sample is a value the flag accepts, for a placeholder.
func sample(fl *flag.Flag) string {
	for _, v := range []string{"2026-10-31", "1", "x", "topup", "xlsx", "id", "Asia/Jakarta"} {
		if fl.Value.Set(v) == nil {
			return v
		}
	}
	return "x"
}

// Root finds the repository's root from a test's directory (the directory holding go.mod).
func Root() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the test's directory")
		}
		dir = parent
	}
}

// Case is a line and whether the grammar must take it: the check's own test.
type Case struct {
	Line string
	OK   bool
}

// CheckPrinted parses every command line the source prints for the command name (at least min of
// them, or the scan is broken) with g, then checks g itself against cases: lines that cannot run
// fail it, lines that can pass.
func CheckPrinted(t testing.TB, name string, g *Command, min int, cases []Case) {
	t.Helper()
	root, err := Root()
	if err != nil {
		t.Fatal(err)
	}
	printed, err := PrintedCommands(root, name)
	if err != nil {
		t.Fatal(err)
	}
	if len(printed) < min {
		t.Fatalf("found %d printed %s commands: the scan is broken", len(printed), name)
	}
	for _, p := range printed {
		if err := g.Check(p); err != nil {
			t.Error(err)
		}
	}
	for _, tc := range cases {
		p := Printed{Pos: "case", Text: tc.Line, Words: Words(tc.Line)[1:]}
		if err := g.Check(p); (err == nil) != tc.OK {
			t.Errorf("%q: %v, want ok=%v", tc.Line, err, tc.OK)
		}
	}
}

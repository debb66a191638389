package config

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// TestDefaultsDeclaredOnce: an option's default is its tag, and nowhere else. A package that
// names a default of its own after an option (DefaultSettle for JobSettle, defaultCurrency for
// Currency) must take its value from this package (Defaults, or a value derived from the tags
// such as DefaultTZ), not write it again: two copies drift apart, and a run then
// behaves by the one nobody reads.
func TestDefaultsDeclaredOnce(t *testing.T) {
	var every struct {
		Files
		Scope
		Service
		Sync
		Report
		Delivery
		Jobs
		Approvals
	}
	var fields []string
	for _, o := range Options(&every) {
		if o.Default != "" {
			fields = append(fields, o.field[strings.LastIndex(o.field, " ")+1:])
		}
	}
	// names an option's field: the whole of it, or, for a name long enough to mean something,
	// its end (Settle for JobSettle)
	namesOption := func(name string) string {
		rest, ok := strings.CutPrefix(name, "Default")
		if !ok {
			if rest, ok = strings.CutPrefix(name, "default"); !ok {
				return ""
			}
		}
		for _, f := range fields {
			if rest == f || len(rest) >= 5 && strings.HasSuffix(f, rest) {
				return f
			}
		}
		return ""
	}
	checked, found := 0, 0
	for _, root := range []string{"../../internal", "../../cmd", "../../bench"} {
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && (path == "../../internal/config" || d.Name() == "testdata") {
				return filepath.SkipDir
			}
			if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return nil
			}
			f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
			if err != nil {
				return err
			}
			checked++
			for _, decl := range f.Decls {
				g, ok := decl.(*ast.GenDecl)
				if !ok || g.Tok != token.CONST && g.Tok != token.VAR {
					continue
				}
				for _, spec := range g.Specs {
					v := spec.(*ast.ValueSpec)
					for i, n := range v.Names {
						field := namesOption(n.Name)
						if field == "" {
							continue
						}
						found++
						if i >= len(v.Values) || !readsConfig(v.Values[i]) {
							t.Errorf("%s: %s repeats the default of the option %s: take it from internal/config", path, n.Name, field)
						}
					}
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if checked < 100 || found < 4 {
		t.Errorf("%d files checked, %d defaults named after an option found: has the layout changed?", checked, found)
	}
}

// readsConfig says whether an expression takes something of package config (imported as config
// or conf).
func readsConfig(e ast.Expr) bool {
	reads := false
	ast.Inspect(e, func(n ast.Node) bool {
		if s, ok := n.(*ast.SelectorExpr); ok {
			if id, ok := s.X.(*ast.Ident); ok && (id.Name == "config" || id.Name == "conf") {
				reads = true
			}
		}
		return !reads
	})
	return reads
}

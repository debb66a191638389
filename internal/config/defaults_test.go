package config

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestDefaultsDeclaredOnce: an option's default is its tag, and nowhere else. A package that
// names a default of its own after an option (DefaultSettle for JobSettle, defaultCurrency for
// Currency) must take its value from this package (Defaults, or a value derived from the tags
// such as DefaultTZ), not write it again: two copies drift apart, and a run then
// behaves by the one nobody reads. Nor may code give a field named after an option that
// option's default as a literal (d.Locale = "id", PageSize: 100): the same copy, unnamed. A
// default written as an expression (30 * time.Second) or a boolean is not recognised.
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
	defaultOf := map[string][]string{} // field name: the defaults of the options so named
	for _, o := range Options(&every) {
		if o.Default != "" {
			name := o.field[strings.LastIndex(o.field, " ")+1:]
			fields = append(fields, name)
			defaultOf[name] = append(defaultOf[name], o.Default)
		}
	}
	// copiesDefault says which option's default a literal given to a field named name is
	copiesDefault := func(name string, value ast.Expr) bool {
		lit, ok := value.(*ast.BasicLit)
		if !ok {
			return false
		}
		v := lit.Value
		if lit.Kind == token.STRING {
			if v, ok = unquote(v); !ok {
				return false
			}
		}
		return slices.Contains(defaultOf[name], v)
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
	fset := token.NewFileSet()
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
			f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
			if err != nil {
				return err
			}
			checked++
			ast.Inspect(f, func(n ast.Node) bool {
				var name string
				var value ast.Expr
				switch n := n.(type) {
				case *ast.AssignStmt:
					for i, l := range n.Lhs {
						if s, ok := l.(*ast.SelectorExpr); ok && i < len(n.Rhs) && copiesDefault(s.Sel.Name, n.Rhs[i]) {
							name, value = s.Sel.Name, n.Rhs[i]
						}
					}
				case *ast.KeyValueExpr:
					if k, ok := n.Key.(*ast.Ident); ok && copiesDefault(k.Name, n.Value) {
						name, value = k.Name, n.Value
					}
				}
				if name != "" {
					t.Errorf("%s: %s is given its option's default as the literal %s: take it from internal/config",
						fset.Position(value.Pos()), name, value.(*ast.BasicLit).Value)
				}
				return true
			})
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
	if checked < 100 || found < 3 {
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

func unquote(s string) (string, bool) {
	v, err := strconv.Unquote(s)
	return v, err == nil
}

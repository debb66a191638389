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

// TestZoneLoadedOnce: a time zone is loaded in one place, LoadZone (a Zone when the setting is
// read): every package takes the *time.Location of its settings and none parses BILLSYNC_TZ
// again, with its own rules and its own fallback (one fell back to UTC without a word).
func TestZoneLoadedOnce(t *testing.T) {
	fset := token.NewFileSet()
	checked := 0
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
				if s, ok := n.(*ast.SelectorExpr); ok && s.Sel.Name == "LoadLocation" {
					if id, ok := s.X.(*ast.Ident); ok && id.Name == "time" {
						t.Errorf("%s: time.LoadLocation: take the zone of the settings (config.Zone, config.LoadZone)", fset.Position(s.Pos()))
					}
				}
				return true
			})
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if checked < 100 {
		t.Errorf("%d files checked: has the layout changed?", checked)
	}
}

// TestWithDefaults: an option left unset by Go code gets its declared default whatever its type
// (a number's 0 too, where 0 means nothing); a 0 the option declares (0 = off) and a boolean stay.
func TestWithDefaults(t *testing.T) {
	d := Defaults[Sync]()
	got := WithDefaults(Sync{Fetch: Fetch{PageSize: 7}})
	if got.PageSize != 7 || got.Concurrency != d.Concurrency || got.CreditRefresh != d.CreditRefresh ||
		got.MaxClockSkew != d.MaxClockSkew || got.Schedule != d.Schedule || got.StopGrace != 0 || got.RatePerMin != 0 ||
		got.MaxRequests != 0 || got.Details || got.MemoryLimit != d.MemoryLimit {
		t.Errorf("WithDefaults: %+v", got)
	}
	r := WithDefaults(Report{Locale: "en"})
	if r.TZ.Location() == nil || r.TZ.String() != DefaultTZ || r.Locale != "en" || r.Currency == "" || r.CSVDialect == "" {
		t.Errorf("WithDefaults of a report: %+v", r)
	}
	j := WithDefaults(Jobs{})
	if j != Defaults[Jobs]() || j.JobSettle <= 0 {
		t.Errorf("WithDefaults of jobs: %+v", j)
	}
}

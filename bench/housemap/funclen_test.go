package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// maxFuncLines is the longest function a person can hold in mind (issue 37, target 4): a
// workflow longer than this is split by step, each step a function whose name says the step.
const maxFuncLines = 120

// longFuncsAllowed are the functions of internal/jobs still over maxFuncLines, with their
// length today: two other branches are splitting that wing (issue 37, targets 3 and 4), so they
// are listed here instead of split twice. The list can only shrink: an entry fails the test
// when its function grows, and when it is gone or back under the limit (remove the entry then,
// on merge). Keyed by the package directory and the function's name (Type.Method for methods).
var longFuncsAllowed = map[string]int{}

// longFuncsExempt are directories whose functions are not measured: the simulator plays a
// whole billing service and keeps its handlers whole on purpose (issue 37 says "outside the
// simulator").
var longFuncsExempt = []string{"internal/sandbox"}

// TestNoLongFunctions parses every non-test Go file of the module (testdata and the simulator
// left out) and names each function over maxFuncLines lines, counted from "func" to its closing
// brace.
func TestNoLongFunctions(t *testing.T) {
	funcs, err := funcLengths("../..")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, f := range funcs {
		allowed, listed := longFuncsAllowed[f.key]
		switch {
		case listed:
			seen[f.key] = true
			if f.lines > allowed {
				t.Errorf("%s: %s is %d lines, grown past the %d it is allowed (split it, don't grow it)", f.pos, f.name, f.lines, allowed)
			} else if f.lines <= maxFuncLines {
				t.Errorf("%s: %s is %d lines, under %d now: remove %q from longFuncsAllowed", f.pos, f.name, f.lines, maxFuncLines, f.key)
			}
		case f.lines > maxFuncLines:
			t.Errorf("%s: %s is %d lines, over %d: split it by step, each step a named function", f.pos, f.name, f.lines, maxFuncLines)
		}
	}
	for key := range longFuncsAllowed {
		if !strings.HasPrefix(key, "internal/jobs") {
			t.Errorf("longFuncsAllowed lists %q: only internal/jobs, split by other branches now, may wait; split it instead", key)
		}
		if !seen[key] {
			t.Errorf("longFuncsAllowed lists %q, which no longer exists: remove the entry", key)
		}
	}
}

// funcLength is one function declaration: key is its package directory (slash-separated,
// relative to the module) and name.
type funcLength struct {
	key, name, pos string
	file           string
	line, lines    int
}

// funcLengths measures every function declared in the non-test Go files under root, leaving out
// testdata, hidden directories and longFuncsExempt.
func funcLengths(root string) ([]funcLength, error) {
	fset := token.NewFileSet()
	var funcs []funcLength
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel != "." && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".") || isExempt(rel)) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		add := func(name string, node ast.Node) {
			start, end := fset.Position(node.Pos()), fset.Position(node.End())
			funcs = append(funcs, funcLength{
				key:   filepath.ToSlash(filepath.Dir(rel)) + " " + name,
				name:  name,
				pos:   fmt.Sprintf("%s:%d", rel, start.Line),
				file:  rel,
				line:  start.Line,
				lines: end.Line - start.Line + 1,
			})
		}
		for _, decl := range f.Decls {
			switch decl := decl.(type) {
			case *ast.FuncDecl:
				add(funcName(decl), decl)
			case *ast.GenDecl:
				// var x = func() ... {...}(): a function all the same
				for _, spec := range decl.Specs {
					if vs, ok := spec.(*ast.ValueSpec); ok {
						for i, v := range vs.Values {
							ast.Inspect(v, func(n ast.Node) bool {
								lit, ok := n.(*ast.FuncLit)
								if ok && i < len(vs.Names) {
									add(vs.Names[i].Name+" (func literal)", lit)
								}
								return !ok
							})
						}
					}
				}
			}
		}
		return nil
	})
	sort.Slice(funcs, func(i, j int) bool {
		if funcs[i].file != funcs[j].file {
			return funcs[i].file < funcs[j].file
		}
		return funcs[i].line < funcs[j].line
	})
	return funcs, err
}

func isExempt(dir string) bool {
	for _, e := range longFuncsExempt {
		if dir == e || strings.HasPrefix(dir, e+"/") {
			return true
		}
	}
	return false
}

// funcName is a function's name, or Type.Method for a method (pointer or not, type parameters
// dropped).
func funcName(fd *ast.FuncDecl) string {
	if fd.Recv == nil || len(fd.Recv.List) == 0 {
		return fd.Name.Name
	}
	typ := fd.Recv.List[0].Type
	if star, ok := typ.(*ast.StarExpr); ok {
		typ = star.X
	}
	switch x := typ.(type) {
	case *ast.IndexExpr:
		typ = x.X
	case *ast.IndexListExpr:
		typ = x.X
	}
	if id, ok := typ.(*ast.Ident); ok {
		return id.Name + "." + fd.Name.Name
	}
	return fd.Name.Name
}

// TestFuncLengths measures a module written here: a function counts from "func" to its closing
// brace, a method is named with its type, a package variable's function literal with the
// variable, and test files, testdata, hidden and exempt
// directories are left out.
func TestFuncLengths(t *testing.T) {
	root := t.TempDir()
	for name, src := range map[string]string{
		"a/a.go":                  "package a\n\nfunc one() {}\n\nfunc three() {\n\t_ = 1\n}\n",
		"a/t.go":                  "package a\n\ntype T[P any] struct{}\n\nfunc (*T[P]) M() {\n}\n\nfunc (T[P]) N() {}\n\nvar v = func() int {\n\treturn 1\n}()\n",
		"a/a_test.go":             "package a\n\nfunc skipped() {}\n",
		"a/testdata/x.go":         "package x\n\nfunc skipped() {}\n",
		".hidden/x.go":            "package x\n\nfunc skipped() {}\n",
		"internal/sandbox/s/x.go": "package s\n\nfunc skipped() {}\n",
		"internal/sandboxed/x.go": "package sandboxed\n\nfunc kept() {}\n",
	} {
		path := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	funcs, err := funcLengths(root)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range funcs {
		got = append(got, fmt.Sprintf("%s %s %s %d", f.pos, f.key, f.name, f.lines))
	}
	want := []string{
		"a/a.go:3 a one one 1",
		"a/a.go:5 a three three 3",
		"a/t.go:5 a T.M T.M 2",
		"a/t.go:8 a T.N T.N 1",
		"a/t.go:10 a v (func literal) v (func literal) 3",
		"internal/sandboxed/x.go:3 internal/sandboxed kept kept 1",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("measured:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

package main

import (
	"errors"
	"fmt"
	"go/ast"
	"go/types"
	"io"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/tools/go/packages"
)

// run prints the package layers of the module in dir and, with pkg, the file graph of pkg. bad
// says an import points back up.
func run(w io.Writer, dir, pkg string) (bad bool, err error) {
	mods, err := packages.Load(&packages.Config{Mode: packages.NeedName | packages.NeedImports | packages.NeedModule, Dir: dir}, "./...")
	if err != nil {
		return false, err
	}
	g, err := packageGraph(mods)
	if err != nil {
		return false, err
	}
	bad = g.print(w)
	if pkg == "" {
		return bad, nil
	}
	mode := packages.NeedName | packages.NeedFiles | packages.NeedSyntax | packages.NeedTypes | packages.NeedTypesInfo
	ps, err := packages.Load(&packages.Config{Mode: mode, Dir: dir}, pkg)
	if err != nil {
		return bad, err
	}
	if len(ps) != 1 {
		return bad, fmt.Errorf("%s: %d packages, want one", pkg, len(ps))
	}
	if len(ps[0].Errors) > 0 {
		return bad, fmt.Errorf("%s: %v", pkg, ps[0].Errors[0])
	}
	fmt.Fprintln(w)
	fileGraph(ps[0]).print(w, ps[0].PkgPath)
	return bad, nil
}

// modGraph is the module's packages with their imports of the module's packages.
type modGraph struct {
	module  string
	imports map[string][]string // by package path, sorted
}

func packageGraph(ps []*packages.Package) (*modGraph, error) {
	g := &modGraph{imports: map[string][]string{}}
	for _, p := range ps {
		if len(p.Errors) > 0 {
			return nil, fmt.Errorf("%s: %v", p.PkgPath, p.Errors[0])
		}
		if p.Module != nil && g.module == "" {
			g.module = p.Module.Path
		}
	}
	if g.module == "" {
		return nil, errors.New("no module")
	}
	for _, p := range ps {
		var imps []string
		for path := range p.Imports {
			if inModule(g.module, path) {
				imps = append(imps, path)
			}
		}
		slices.Sort(imps)
		g.imports[p.PkgPath] = imps
	}
	return g, nil
}

func inModule(module, path string) bool { return path == module || strings.HasPrefix(path, module+"/") }

// backUp says why an import points back up, or "".
func (g *modGraph) backUp(from, to string) string {
	rel := strings.TrimPrefix(to, g.module)
	switch {
	case strings.HasPrefix(rel, "/cmd/"):
		return "imports a command"
	case strings.HasPrefix(from, to+"/"):
		return "a part imports the package it belongs to"
	}
	return ""
}

// print writes the packages by layer, and the imports that point back up.
func (g *modGraph) print(w io.Writer) bool {
	layer := map[string]int{}
	var depth func(string) int
	depth = func(p string) int {
		if l, ok := layer[p]; ok {
			return l
		}
		layer[p] = 0 // the compiler refuses import cycles
		l := 0
		for _, i := range g.imports[p] {
			l = max(l, depth(i)+1)
		}
		layer[p] = l
		return l
	}
	top := 0
	for p := range g.imports {
		top = max(top, depth(p))
	}
	fmt.Fprintf(w, "module %s: %d packages in %d layers (0 imports none of the module's)\n", g.module, len(g.imports), top+1)
	for l := 0; l <= top; l++ {
		var names []string
		for p, pl := range layer {
			if pl == l {
				names = append(names, g.short(p))
			}
		}
		slices.Sort(names)
		fmt.Fprintf(w, "layer %d: %s\n", l, strings.Join(names, " "))
	}
	bad := false
	for _, p := range slices.Sorted(maps.Keys(g.imports)) {
		for _, i := range g.imports[p] {
			if why := g.backUp(p, i); why != "" {
				fmt.Fprintf(w, "ERROR: %s imports %s: %s\n", g.short(p), g.short(i), why)
				bad = true
			}
		}
	}
	if !bad {
		fmt.Fprintln(w, "imports pointing back up: none")
	}
	return bad
}

func (g *modGraph) short(p string) string {
	if p == g.module {
		return "."
	}
	return strings.TrimPrefix(p, g.module+"/")
}

// files is a package's file graph: out[a] are the files a uses top-level identifiers of.
type files struct {
	names []string // sorted
	out   map[string][]string
}

// fileGraph builds the graph from the type checker's definitions and uses.
func fileGraph(p *packages.Package) *files {
	declared := map[types.Object]string{} // top-level object -> its file
	fileOf := func(f *ast.File) string { return filepath.Base(p.Fset.File(f.Pos()).Name()) }
	g := &files{out: map[string][]string{}}
	for _, f := range p.Syntax {
		name := fileOf(f)
		g.names = append(g.names, name)
		for _, d := range f.Decls {
			var ids []*ast.Ident
			switch d := d.(type) {
			case *ast.FuncDecl:
				ids = append(ids, d.Name)
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						ids = append(ids, s.Name)
					case *ast.ValueSpec:
						ids = append(ids, s.Names...)
					}
				}
			}
			for _, id := range ids {
				if o := p.TypesInfo.Defs[id]; o != nil {
					declared[o] = name
				}
			}
		}
	}
	slices.Sort(g.names)
	edges := map[[2]string]bool{}
	for id, o := range p.TypesInfo.Uses {
		to, ok := declared[o]
		if !ok {
			continue
		}
		from := filepath.Base(p.Fset.Position(id.Pos()).Filename)
		if from != to {
			edges[[2]string{from, to}] = true
		}
	}
	for e := range edges {
		g.out[e[0]] = append(g.out[e[0]], e[1])
	}
	for _, s := range g.out {
		slices.Sort(s)
	}
	return g
}

// measure is what print reports of a file graph.
type measure struct {
	edges, layers, back int // back: edges inside cycles
	dfsBack, dfsLayers  int
	cycles              [][]string // the strongly connected components of more than one file
	layerOf             map[string]int
}

func (g *files) measure() measure {
	m := measure{layerOf: map[string]int{}}
	comp := g.components()
	for _, a := range g.names {
		for _, b := range g.out[a] {
			m.edges++
			if comp[a] == comp[b] {
				m.back++
			}
		}
	}
	members := map[int][]string{}
	for _, n := range g.names {
		members[comp[n]] = append(members[comp[n]], n)
	}
	for _, c := range slices.Sorted(maps.Keys(members)) {
		if len(members[c]) > 1 {
			m.cycles = append(m.cycles, members[c])
		}
	}
	// the condensation's longest path, in nodes: a component's layer is 1 + its successors' highest
	layer := map[int]int{}
	var depth func(int) int
	depth = func(c int) int {
		if l, ok := layer[c]; ok {
			return l
		}
		l := 1
		for _, n := range members[c] {
			for _, s := range g.out[n] {
				if comp[s] != c {
					l = max(l, depth(comp[s])+1)
				}
			}
		}
		layer[c] = l
		return l
	}
	for _, n := range g.names {
		m.layerOf[n] = depth(comp[n])
		m.layers = max(m.layers, m.layerOf[n])
	}
	m.dfsBack, m.dfsLayers = g.dfs()
	return m
}

// components numbers the strongly connected components (Tarjan's algorithm).
func (g *files) components() map[string]int {
	index, low := map[string]int{}, map[string]int{}
	onStack := map[string]bool{}
	var stack []string
	comp := map[string]int{}
	next, n := 0, 0
	var visit func(string)
	visit = func(v string) {
		index[v], low[v] = next, next
		next++
		stack = append(stack, v)
		onStack[v] = true
		for _, s := range g.out[v] {
			if _, seen := index[s]; !seen {
				visit(s)
				low[v] = min(low[v], low[s])
			} else if onStack[s] {
				low[v] = min(low[v], index[s])
			}
		}
		if low[v] == index[v] {
			for {
				top := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				onStack[top] = false
				comp[top] = n
				if top == v {
					break
				}
			}
			n++
		}
	}
	for _, v := range g.names {
		if _, seen := index[v]; !seen {
			visit(v)
		}
	}
	return comp
}

// dfs counts the back edges of a depth-first walk in name order and the longest path (in
// nodes) of the graph without them.
func (g *files) dfs() (back, layers int) {
	const (
		white = iota
		grey
		black
	)
	state := map[string]int{}
	cut := map[[2]string]bool{}
	var visit func(string)
	visit = func(v string) {
		state[v] = grey
		for _, s := range g.out[v] {
			switch state[s] {
			case white:
				visit(s)
			case grey:
				cut[[2]string{v, s}] = true
			}
		}
		state[v] = black
	}
	for _, v := range g.names {
		if state[v] == white {
			visit(v)
		}
	}
	depth := map[string]int{}
	var d func(string) int
	d = func(v string) int {
		if l, ok := depth[v]; ok {
			return l
		}
		l := 1
		for _, s := range g.out[v] {
			if !cut[[2]string{v, s}] {
				l = max(l, d(s)+1)
			}
		}
		depth[v] = l
		return l
	}
	for _, v := range g.names {
		layers = max(layers, d(v))
	}
	return len(cut), layers
}

func (g *files) print(w io.Writer, pkg string) {
	m := g.measure()
	fmt.Fprintf(w, "package %s: %d files, %d arrows\n", pkg, len(g.names), m.edges)
	fmt.Fprintf(w, "layers: %d (longest path of the condensation)\n", m.layers)
	fmt.Fprintf(w, "arrows back up: %d (edges inside cycles)\n", m.back)
	fmt.Fprintf(w, "DFS back edges: %d, DFS layers: %d\n", m.dfsBack, m.dfsLayers)
	for _, c := range m.cycles {
		fmt.Fprintf(w, "cycle: %s\n", strings.Join(c, " "))
	}
	for l := m.layers; l >= 1; l-- {
		var names []string
		for _, n := range g.names {
			if m.layerOf[n] == l {
				names = append(names, n)
			}
		}
		fmt.Fprintf(w, "layer %d: %s\n", l, strings.Join(names, " "))
	}
	for _, n := range g.names {
		fmt.Fprintf(w, "  %s -> %s\n", n, strings.Join(g.out[n], " "))
	}
}

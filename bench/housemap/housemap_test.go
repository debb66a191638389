package main

import (
	"bytes"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// TestFixture draws testdata/mod: its package layers and the two imports pointing back up, and
// the files of package a: top -> mid <-> low -> leafmethod -> leaf and low -> leaf, a cycle of two
// files (the DFS from leaf.go cuts mid -> low, leaving top -> mid the only path through it).
func TestFixture(t *testing.T) {
	var out bytes.Buffer
	bad, err := run(&out, "testdata/mod", "./a")
	if err != nil {
		t.Fatal(err)
	}
	if !bad {
		t.Error("imports pointing back up not reported")
	}
	got := out.String()
	for _, want := range []string{
		"module example.com/mod: 4 packages in 2 layers",
		"layer 0: a cmd/c\n",
		"layer 1: a/part b\n",
		"ERROR: a/part imports a: a part imports the package it belongs to\n",
		"ERROR: b imports cmd/c: imports a command\n",
		"package example.com/mod/a: 5 files, 6 arrows\n",
		"layers: 4 (longest path of the condensation)\n",
		"arrows back up: 2 (edges inside cycles)\n",
		"DFS back edges: 1, DFS layers: 3\n",
		"cycle: low.go mid.go\n",
		"layer 4: top.go\nlayer 3: low.go mid.go\nlayer 2: leafmethod.go\nlayer 1: leaf.go\n",
		"  low.go -> leaf.go leafmethod.go mid.go\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
}

// TestAcyclic: without cycles the two measures agree and nothing runs back up.
func TestAcyclic(t *testing.T) {
	g := &files{names: []string{"a.go", "b.go", "c.go", "d.go"}, out: map[string][]string{
		"a.go": {"b.go", "c.go"}, "b.go": {"d.go"}, "c.go": {"d.go"},
	}}
	m := g.measure()
	if m.layers != 3 || m.dfsLayers != 3 || m.back != 0 || m.dfsBack != 0 || len(m.cycles) != 0 {
		t.Errorf("measure = %+v, want 3 layers and nothing back", m)
	}
	g.out["d.go"] = []string{"a.go"}
	m = g.measure()
	if m.layers != 1 || m.back != 5 || m.dfsBack != 1 || m.dfsLayers != 3 {
		t.Errorf("with d -> a: %+v, want one layer, 5 arrows inside the cycle, 1 DFS back edge", m)
	}
}

// TestTheHouse draws this module: no import points back up, and internal/report's files have no
// arrow running back up and at most six layers (issue 30 halved its twelve).
func TestTheHouse(t *testing.T) {
	var out bytes.Buffer
	bad, err := run(&out, "../..", "./internal/report")
	if err != nil {
		t.Fatal(err)
	}
	if bad {
		t.Errorf("an import points back up:\n%s", out.String())
	}
	for _, want := range []string{"arrows back up: 0 (edges inside cycles)\n", "DFS back edges: 0,"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("internal/report: want %q:\n%s", want, out.String())
		}
	}
	var layers int
	if _, err := fmt.Sscanf(out.String()[strings.Index(out.String(), "\nlayers: ")+1:], "layers: %d", &layers); err != nil || layers > 6 {
		t.Errorf("internal/report: %d layers (%v), want at most 6:\n%s", layers, err, out.String())
	}
}

// TestTheJobsWing: internal/jobs and every package under it (found by walking the folder, so a new one is
// held too) have no file cycle: no arrow runs back up among their files (issue 37 untied the 17-file knot).
func TestTheJobsWing(t *testing.T) {
	var pkgs []string
	err := filepath.WalkDir("../../internal/jobs", func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		if d.Name() == "testdata" {
			return filepath.SkipDir
		}
		code, _ := filepath.Glob(filepath.Join(path, "*.go"))
		for _, f := range code {
			if !strings.HasSuffix(f, "_test.go") {
				rel, _ := filepath.Rel("../..", path)
				pkgs = append(pkgs, "./"+filepath.ToSlash(rel))
				break
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(pkgs) < 2 {
		t.Fatalf("found only %v under internal/jobs", pkgs)
	}
	for _, pkg := range pkgs {
		var out bytes.Buffer
		if _, err := run(&out, "../..", pkg); err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"arrows back up: 0 (edges inside cycles)\n", "DFS back edges: 0,"} {
			if !strings.Contains(out.String(), want) {
				t.Errorf("%s: want %q:\n%s", pkg, want, out.String())
			}
		}
	}
}

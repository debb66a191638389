// Command housemap draws the house: the module's package import graph as layers, and one
// package's file-level dependency graph with its layers and the arrows that run back up.
//
//	go run ./bench/housemap                          # the packages, by layer
//	go run ./bench/housemap -pkg ./internal/report   # and the files of one package
//
// A package's layer is 1 + the highest layer of the module's packages it imports (0 for none).
// An import points back up when a package imports cmd/ or a package whose directory holds its
// own (a part importing the whole it belongs to); housemap then exits 1.
//
// In a package, file A depends on file B when A uses a top-level identifier declared in B (a
// function, method, type, variable or constant; test files are left out). The files are layered
// by the condensation of that graph (each cycle as one node): "layers" is the number of nodes on
// its longest path, and "arrows back up" the edges inside a cycle, every one of which a reader
// following the dependencies downwards meets coming back. "DFS back edges" counts fewer: only
// the edges a depth-first walk in file-name order finds pointing at a file still being walked
// (what it takes to cut every cycle, not a minimum), and "DFS layers" the longest path once they
// are cut.
package main

import (
	"flag"
	"fmt"
	"os"
)

func main() {
	pkg := flag.String("pkg", "", "also draw this package's files (a pattern for go list, e.g. ./internal/report)")
	dir := flag.String("C", ".", "the module's directory")
	flag.Parse()
	bad, err := run(os.Stdout, *dir, *pkg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "housemap:", err)
		os.Exit(2)
	}
	if bad {
		os.Exit(1)
	}
}

package docs

import (
	"bufio"
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// `make check` is the quick loop: it skips the end-to-end tests the Makefile names in CHECK_SKIP,
// and `make test` (CI) runs everything. A skip nobody can see is a test silently gone from the
// loop, and a stale name skips nothing (or, worse, a new test that happens to take the name):
// this test keeps the Makefile's list, the table in docs/development.md and the tests that exist
// equal, each name declared in exactly the packages the table gives. The same holds for
// REORDER_SKIP, the tests make test's list-order reruns leave out, and its own table.

const checkPage = "docs/development.md"

// The development page's sections holding each list's table.
const (
	checkSkipHeading   = "### What `make check` skips"
	reorderSkipHeading = "### What the list-order reruns skip"
)

var (
	testFuncRE = regexp.MustCompile(`^func (Test[A-Za-z0-9_]*)\(`)
	// | `TestName` | `./pkg/` | why |
	skipRowRE = regexp.MustCompile("^\\| `(Test[A-Za-z0-9_]*)` \\| `\\./([^`]*?)/?` \\| (.+) \\|$")
)

// makeList returns the words of the Makefile variable name (backslash-continued words).
func makeList(makefile []byte, name string) ([]string, error) {
	var names []string
	in := false
	sc := bufio.NewScanner(bytes.NewReader(makefile))
	for sc.Scan() {
		line := sc.Text()
		if !in {
			rest, ok := strings.CutPrefix(line, name+" =")
			if !ok {
				continue
			}
			in, line = true, rest
		}
		more := strings.HasSuffix(line, `\`)
		names = append(names, strings.Fields(strings.TrimSuffix(line, `\`))...)
		if !more {
			return names, nil
		}
	}
	if !in {
		return nil, fmt.Errorf("Makefile: no %s = line", name)
	}
	return names, nil
}

// skipTable returns the table of the development page's section under heading (up to the next
// heading): test name -> packages (relative directories), and each row's reason.
func skipTable(page []byte, heading string) (map[string][]string, map[string]string) {
	pkgs, why := map[string][]string{}, map[string]string{}
	in := false
	for line := range strings.SplitSeq(string(page), "\n") {
		if strings.HasPrefix(line, "#") {
			in = strings.TrimSpace(line) == heading
			continue
		}
		m := skipRowRE.FindStringSubmatch(strings.TrimSpace(line))
		if !in || m == nil {
			continue
		}
		pkgs[m[1]] = append(pkgs[m[1]], m[2])
		why[m[1]] = strings.TrimSpace(m[3])
	}
	return pkgs, why
}

// declaredTests maps each top-level test function name to the directories (relative) declaring it.
func declaredTests(root string) (map[string][]string, error) {
	out := map[string][]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case ".git", "bin", "data", "out", "testdata":
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, filepath.Dir(p))
		for line := range strings.SplitSeq(string(b), "\n") {
			if m := testFuncRE.FindStringSubmatch(line); m != nil {
				out[m[1]] = append(out[m[1]], filepath.ToSlash(rel))
			}
		}
		return nil
	})
	return out, err
}

func TestCheckSkipsDocumented(t *testing.T) {
	skipsDocumented(t, "CHECK_SKIP", checkSkipHeading, "make check")
}

func TestReorderSkipsDocumented(t *testing.T) {
	skipsDocumented(t, "REORDER_SKIP", reorderSkipHeading, "the list-order reruns")
}

// skipsDocumented checks that the Makefile's list variable, the development page's table under
// heading (what skips: the prose's name for it) and the tests that exist agree.
func skipsDocumented(t *testing.T, variable, heading, what string) {
	root := repoRoot(t)
	mk, err := os.ReadFile(filepath.Join(root, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	skip, err := makeList(mk, variable)
	if err != nil {
		t.Fatal(err)
	}
	if len(skip) == 0 {
		t.Fatalf("Makefile: %s names no test", variable)
	}
	page, err := os.ReadFile(filepath.Join(root, checkPage))
	if err != nil {
		t.Fatal(err)
	}
	table, why := skipTable(page, heading)
	declared, err := declaredTests(root)
	if err != nil {
		t.Fatal(err)
	}

	inMake := map[string]bool{}
	for _, name := range skip {
		if inMake[name] {
			t.Errorf("Makefile: %s names %s twice", variable, name)
		}
		inMake[name] = true
		if _, ok := table[name]; !ok {
			t.Errorf("Makefile: %s names %s, which %s's table of what %s skip does not list", variable, name, checkPage, what)
		}
		dirs := uniqSorted(declared[name])
		if len(dirs) == 0 {
			t.Errorf("Makefile: %s names %s, but no _test.go declares func %s: renamed or removed? (a stale name may skip a later test of that name)", variable, name, name)
			continue
		}
		if want := uniqSorted(table[name]); len(table[name]) > 0 && strings.Join(dirs, " ") != strings.Join(want, " ") {
			t.Errorf("%s: %s is declared in %v but the table lists %v: -skip drops it in every package declaring it, so the table names each", checkPage, name, dirs, want)
		}
	}
	for name := range table {
		if !inMake[name] {
			t.Errorf("%s lists %s as skipped by %s, but the Makefile's %s does not name it", checkPage, name, what, variable)
		}
		if len(why[name]) < 10 {
			t.Errorf("%s: the row for %s gives no reason", checkPage, name)
		}
	}
}

func uniqSorted(s []string) []string {
	m := map[string]bool{}
	for _, v := range s {
		m[v] = true
	}
	out := make([]string, 0, len(m))
	for v := range m {
		out = append(out, v)
	}
	sort.Strings(out)
	return out
}

// The parsers above on their own: a continued variable, and a table row.
func TestCheckSkipParsers(t *testing.T) {
	got, err := makeList([]byte("X = 1\nCHECK_SKIP = TestA \\\n\tTestB \\\n\tTestC\nY = 2\n"), "CHECK_SKIP")
	if err != nil || strings.Join(got, ",") != "TestA,TestB,TestC" {
		t.Errorf("makeList = %v, %v; want TestA,TestB,TestC", got, err)
	}
	if _, err := makeList([]byte("test:\n\tgo test ./...\n"), "CHECK_SKIP"); err == nil {
		t.Error("makeList without CHECK_SKIP: no error")
	}
	page := "## A\n| `TestZ` | `./z/` | another section's table |\n### Skips\n" +
		"| `TestA` | `./internal/a/` | runs a sync at scale 10 |\n| `TestB` | `./docs/` | x |\n| TestC | ./c | no code spans |\n" +
		"### Next\n| `TestY` | `./y/` | the next section's table |\n"
	pkgs, why := skipTable([]byte(page), "### Skips")
	if strings.Join(pkgs["TestA"], ",") != "internal/a" || why["TestA"] != "runs a sync at scale 10" || strings.Join(pkgs["TestB"], ",") != "docs" ||
		pkgs["TestC"] != nil || pkgs["TestZ"] != nil || pkgs["TestY"] != nil {
		t.Errorf("skipTable = %v %v", pkgs, why)
	}
}

package docs

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// fixtureRowRE is a row of testdata/fixtures/README.md's table: | Area__file.json | GET | ...
var fixtureRowRE = regexp.MustCompile(`^\| ([A-Za-z]+__[a-z0-9-]+\.json) \|`)

// TestFixtureCopyIsWhole: testdata/fixtures/laravel-mayar holds exactly the files its README's
// table lists (the spec's samples, copied byte for byte), so a sample made up for a new record
// goes in testdata/fixtures/invented and is never taken for the spec's.
func TestFixtureCopyIsWhole(t *testing.T) {
	dir := filepath.Join(repoRoot(t), "testdata", "fixtures")
	b, err := os.ReadFile(filepath.Join(dir, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]bool{}
	for _, l := range strings.Split(string(b), "\n") {
		if m := fixtureRowRE.FindStringSubmatch(l); m != nil {
			listed[m[1]] = true
		}
	}
	if len(listed) == 0 {
		t.Fatal("testdata/fixtures/README.md: no table of the copied files")
	}
	entries, err := os.ReadDir(filepath.Join(dir, "laravel-mayar"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !listed[e.Name()] {
			t.Errorf("testdata/fixtures/laravel-mayar/%s: not one of the copied files its README lists; a sample made up for a record the spec shows none of goes in testdata/fixtures/invented", e.Name())
		}
		delete(listed, e.Name())
	}
	for name := range listed {
		t.Errorf("testdata/fixtures/README.md lists %s, which laravel-mayar/ does not hold", name)
	}
	if _, err := os.Stat(filepath.Join(dir, "invented", "README.md")); err != nil {
		t.Errorf("testdata/fixtures/invented/README.md: %v (it says what goes there)", err)
	}
}

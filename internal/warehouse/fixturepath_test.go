package warehouse

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFixturePath: a declaration's Fixture is the spec's (laravel-mayar/) or, for a record the
// spec shows no sample of, one made up in invented/ (docs/architecture.md, "A new list
// endpoint"); the spec's folder stays the byte-for-byte copy its README says it is. Before,
// only laravel-mayar/ was read, so a new list's made-up sample had to go among the spec's.
func TestFixturePath(t *testing.T) {
	root := t.TempDir()
	write := func(dir, name string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Join(root, dir), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, dir, name), []byte(`{"data":[]}`), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("laravel-mayar", "Spec__list.json")
	write("invented", "Made__list.json")
	write("laravel-mayar", "Both__list.json")
	write("invented", "Both__list.json")
	for _, tc := range []struct{ name, want, err string }{
		{"Spec__list.json", filepath.Join(root, "laravel-mayar", "Spec__list.json"), ""},
		{"Made__list.json", filepath.Join(root, "invented", "Made__list.json"), ""},
		{"None__list.json", "", "in none of " + filepath.Join(root, "laravel-mayar", "None__list.json") + ", " + filepath.Join(root, "invented", "None__list.json")},
		{"Both__list.json", "", "must not shadow the spec's"},
	} {
		got, err := fixturePath(root, tc.name)
		switch {
		case tc.err == "" && (err != nil || got != tc.want):
			t.Errorf("%s: %q, %v; want %q", tc.name, got, err, tc.want)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err) || !strings.Contains(err.Error(), tc.name)):
			t.Errorf("%s: %v; want an error naming it and saying %q", tc.name, err, tc.err)
		}
	}
	// the folder is there, with its README saying what goes in it
	if _, err := os.Stat(filepath.Join(fixturesDir, "invented")); err != nil {
		t.Errorf("testdata/fixtures/invented: %v (its README says what goes there)", err)
	}
}

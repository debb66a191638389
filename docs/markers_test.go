package docs

import (
	"bufio"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestNoMergeMarkers: a merge that left its conflict markers in a file commits both sides and
// neither (a page that says two things, SQL that does not parse only where it is read). Every
// text file of the repository is read for a line that starts like one.
func TestNoMergeMarkers(t *testing.T) {
	root := ".."
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			switch name {
			case ".git", "bin", "data", "out", "node_modules":
				return filepath.SkipDir
			}
			return nil
		}
		switch filepath.Ext(name) {
		case ".go", ".md", ".sql", ".yaml", ".yml", ".json", ".golden", ".csv", ".txt", ".toml":
		default:
			if name != "Makefile" && name != "Dockerfile" && name != "run" {
				return nil
			}
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 0, 64*1024), 16<<20)
		for n := 1; sc.Scan(); n++ {
			line := sc.Text()
			if strings.HasPrefix(line, "<<<<<<< ") || strings.HasPrefix(line, ">>>>>>> ") || line == "=======" && filepath.Ext(name) != ".md" {
				t.Errorf("%s:%d: a merge conflict marker: %q", p, n, line)
			}
		}
		return sc.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
}

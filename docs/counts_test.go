package docs

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/billsync/billsync/reports"
)

// The docs say how many reports there are ("six reports") and give each its numbered section
// in docs/reports.md. Adding a report (docs/reports.md "Adding a report") changes neither by
// itself; these tests fail until both are true again.

var (
	// countRE is a number, in words or figures, just before "reports" ("all six reports").
	countRE = regexp.MustCompile(`(?i)\b(one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|[0-9]+)( finance)? reports\b`)
	// measuredRE is a figure measured at a time (seconds, CPU seconds, megabytes): a sentence with
	// one records how many reports there were when it was measured, and stays true.
	measuredRE = regexp.MustCompile(`\d(\.\d+)? ?(s|CPU-s|MB)\b`)
	// sectionRE is a report's section in docs/reports.md: ## 3. `reviews`
	sectionRE = regexp.MustCompile("^## ([0-9]+)\\. `([a-z0-9-]+)`")
	numbers   = []string{"zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve"}
)

// reportNames are the reports defined in reports/*.yaml (a definition is named as its file).
func reportNames(t *testing.T) []string {
	t.Helper()
	files, err := fs.Glob(reports.FS, "*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("reports/*.yaml: %v (%d files)", err, len(files))
	}
	var out []string
	for _, f := range files {
		out = append(out, strings.TrimSuffix(f, ".yaml"))
	}
	return out
}

// staleCounts are the places in text (a Markdown file's lines) that say a number of reports
// other than n, as "line: text", but for a count next to a measured figure (on its line or the
// next).
func staleCounts(lines []string, n int) []string {
	var out []string
	for i, l := range lines {
		window := l
		if i+1 < len(lines) {
			window += " " + lines[i+1]
		}
		if measuredRE.MatchString(window) {
			continue
		}
		for _, m := range countRE.FindAllStringSubmatch(l, -1) {
			said, err := strconv.Atoi(m[1])
			if err != nil {
				said = slices.Index(numbers, strings.ToLower(m[1]))
			}
			if said != n {
				out = append(out, fmt.Sprintf("%d: %q", i+1, m[0]))
			}
		}
	}
	return out
}

// TestReportCountInDocs: every count of reports README.md and docs/*.md state is the count of
// reports/*.yaml.
func TestReportCountInDocs(t *testing.T) {
	n := len(reportNames(t))
	root := repoRoot(t)
	files, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	files = append([]string{filepath.Join(root, "README.md")}, files...)
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, f)
		for _, s := range staleCounts(strings.Split(string(b), "\n"), n) {
			t.Errorf("%s:%s: reports/*.yaml defines %d reports (%s)", rel, s, n, numbers[min(n, len(numbers)-1)])
		}
	}
}

// TestStaleCounts: the check finds a count that differs, in words or figures, and leaves a
// measurement (which says how many there were when it was taken) alone.
func TestStaleCounts(t *testing.T) {
	for _, tc := range []struct {
		text string
		n    int
		want int
	}{
		{"it writes six finance reports (aging, ...)", 6, 0},
		{"it writes six finance reports (aging, ...)", 7, 1},
		{"| docs | the six reports, their columns |", 7, 1},
		{"Six reports and 7 reports", 7, 1},
		{"all six reports 304–311 MB with aging's shared", 7, 0},
		{"(six reports over ~1M\nrecords: a median of 2.49 s)", 7, 0},
		{"the reports, all reports", 7, 0},
	} {
		if got := staleCounts(strings.Split(tc.text, "\n"), tc.n); len(got) != tc.want {
			t.Errorf("%q with %d reports: %d stale %v, want %d", tc.text, tc.n, len(got), got, tc.want)
		}
	}
}

// TestEveryReportHasASection: docs/reports.md has one numbered section per report, "## N. `name`",
// numbered from 1 in order, and none for a report that is not defined.
func TestEveryReportHasASection(t *testing.T) {
	names := reportNames(t)
	b, err := os.ReadFile(filepath.Join(repoRoot(t), "docs", "reports.md"))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	next := 1
	for i, l := range strings.Split(string(b), "\n") {
		m := sectionRE.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		if num, _ := strconv.Atoi(m[1]); num != next {
			t.Errorf("docs/reports.md:%d: section %s. `%s`, want number %d", i+1, m[1], m[2], next)
		}
		next++
		if !slices.Contains(names, m[2]) {
			t.Errorf("docs/reports.md:%d: a section for `%s`, which reports/ does not define", i+1, m[2])
		}
		seen[m[2]] = true
	}
	for _, name := range names {
		if !seen[name] {
			t.Errorf("report %s (reports/%s.yaml) has no section \"## %d. `%s` — ...\" in docs/reports.md", name, name, next, name)
			next++
		}
	}
}

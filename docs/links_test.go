package docs

import (
	"bufio"
	"bytes"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"
)

// A relative link in the docs is a promise to the reader that the file, and the heading its
// anchor names, are there. Text moves between README.md and docs/*.md, and headings get
// renamed; this test keeps every such link true.

var (
	linkRE   = regexp.MustCompile(`\[[^\]]*\]\(([^)\s]+)\)`)
	codeRE   = regexp.MustCompile("`[^`]*`")
	anchorRE = regexp.MustCompile(`<a\s+(?:id|name)="([^"]+)"`)
)

type link struct {
	file   string // the Markdown file, relative to the root
	line   int
	target string
}

// markdownFiles lists the repository's Markdown files, skipping what the build and demo create.
func markdownFiles(root string) ([]string, error) {
	var out []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case ".git", "node_modules", "bin", "data", "out":
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(p, ".md") {
			rel, _ := filepath.Rel(root, p)
			out = append(out, rel)
		}
		return nil
	})
	return out, err
}

// scanLinks returns the inline links of a Markdown text outside code blocks and code spans,
// and the anchors its headings (GitHub's rules) and explicit <a id> tags define.
func scanLinks(file string, b []byte) (links []link, anchors map[string]bool) {
	anchors = map[string]bool{}
	seen := map[string]int{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 64*1024), 1024*1024)
	var fence string
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if m := fenceRE.FindStringSubmatch(line); m != nil {
			switch {
			case fence == "":
				fence = m[2]
				continue
			case strings.HasPrefix(m[2], fence) && strings.TrimSpace(m[3]) == "":
				fence = ""
				continue
			}
		}
		if fence != "" {
			continue
		}
		if strings.HasPrefix(line, "#") {
			title := strings.TrimSpace(strings.TrimLeft(line, "#"))
			slug := slugify(title)
			if k := seen[slug]; k > 0 {
				anchors[fmt.Sprintf("%s-%d", slug, k)] = true
			} else {
				anchors[slug] = true
			}
			seen[slug]++
		}
		for _, m := range anchorRE.FindAllStringSubmatch(line, -1) {
			anchors[m[1]] = true
		}
		for _, m := range linkRE.FindAllStringSubmatch(codeRE.ReplaceAllString(line, ""), -1) {
			links = append(links, link{file: file, line: n, target: m[1]})
		}
	}
	return links, anchors
}

// slugify is GitHub's heading anchor: lower case, spaces to hyphens, and every character that
// is not a letter, digit, hyphen or underscore dropped.
func slugify(title string) string {
	var sb strings.Builder
	for _, r := range strings.ToLower(codeTicks.Replace(title)) {
		switch {
		case r == ' ':
			sb.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			sb.WriteRune(r)
		}
	}
	return sb.String()
}

var codeTicks = strings.NewReplacer("`", "")

// TestLinksResolve fails on a relative link to a file that does not exist, or to an anchor
// its Markdown file does not define.
func TestLinksResolve(t *testing.T) {
	root := repoRoot(t)
	files, err := markdownFiles(root)
	if err != nil {
		t.Fatal(err)
	}
	anchors := map[string]map[string]bool{}
	var links []link
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		l, a := scanLinks(f, b)
		links = append(links, l...)
		anchors[filepath.ToSlash(f)] = a
	}
	if len(links) == 0 {
		t.Fatal("no links found: the scanner is broken")
	}
	for _, l := range links {
		if err := checkLink(root, l, anchors); err != nil {
			t.Errorf("%s:%d: link %q: %v", l.file, l.line, l.target, err)
		}
	}
}

func checkLink(root string, l link, anchors map[string]map[string]bool) error {
	u, err := url.Parse(l.target)
	if err != nil {
		return err
	}
	if u.Scheme != "" || u.Host != "" {
		return nil // an address outside the repository
	}
	target := filepath.ToSlash(l.file)
	if u.Path != "" {
		target = filepath.ToSlash(filepath.Join(filepath.Dir(l.file), u.Path))
		if strings.HasPrefix(target, "../") {
			return fmt.Errorf("points outside the repository")
		}
		if _, err := os.Stat(filepath.Join(root, target)); err != nil {
			return fmt.Errorf("no such file %s", target)
		}
	}
	if u.Fragment == "" {
		return nil
	}
	a, ok := anchors[target]
	if !ok {
		return fmt.Errorf("anchor #%s on %s, which is not a Markdown file", u.Fragment, target)
	}
	if !a[u.Fragment] {
		return fmt.Errorf("%s has no heading with anchor #%s", target, u.Fragment)
	}
	return nil
}

// TestScanLinks pins the parts of the scanner the check relies on.
func TestScanLinks(t *testing.T) {
	in := "# Set up, a fresh clone\n" +
		"## `report` — the command\n" +
		"## Measured\n## Measured\n" +
		"see [a](docs/x.md#measured-1) and `[not](code.md)`\n" +
		"```sh\n[inside](fence.md)\n```\n" +
		"<a id=\"raw-anchor\"></a> [b](https://example.invalid/p)\n"
	links, anchors := scanLinks("README.md", []byte(in))
	want := []string{"docs/x.md#measured-1", "https://example.invalid/p"}
	if len(links) != len(want) {
		t.Fatalf("links %+v, want %v", links, want)
	}
	for i, l := range links {
		if l.target != want[i] {
			t.Errorf("link %d = %q, want %q", i, l.target, want[i])
		}
	}
	for _, a := range []string{"set-up-a-fresh-clone", "report--the-command", "measured", "measured-1", "raw-anchor"} {
		if !anchors[a] {
			t.Errorf("anchor %q missing from %v", a, anchors)
		}
	}
}

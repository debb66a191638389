package docs

import (
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/billsync/billsync/internal/entity"
)

// docs/sync.md and cmd/sandbox/README.md name, in prose, the lists a sync pages whole. The
// lists are declared in internal/entity (docs/warehouse.md's table is generated from them); a new
// list endpoint fails this test until both name it.

// apiPrefixRE is an endpoint's service and version, which the docs leave out: /hl/v1/.
var apiPrefixRE = regexp.MustCompile(`^/[a-z]+/v[0-9]+/`)

// pagedLists are the entities read as whole paged lists.
func pagedLists(t *testing.T) []*entity.Decl {
	t.Helper()
	var out []*entity.Decl
	for _, d := range entity.All() {
		if d.Paging == entity.Pages {
			out = append(out, d)
		}
	}
	if len(out) == 0 {
		t.Fatal("internal/entity declares no paged list")
	}
	return out
}

// listEndpoint is how cmd/sandbox/README.md writes a list's endpoint: without its service and
// version, one path per type (products') as its pattern, `product/type/{type}`.
func listEndpoint(d *entity.Decl) string {
	p := apiPrefixRE.ReplaceAllString(d.Paths[0], "")
	if len(d.Paths) > 1 {
		p = path.Dir(p) + "/{type}"
	}
	return p
}

// paragraph is the text of file from the line starting with start to the next blank line or
// list item, its lines joined by spaces.
func paragraph(t *testing.T, file, start string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot(t), file))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		switch {
		case len(out) == 0 && strings.HasPrefix(l, start):
			out = append(out, l)
		case len(out) > 0 && (strings.TrimSpace(l) == "" || strings.HasPrefix(l, "- ")):
			return strings.Join(out, " ")
		case len(out) > 0:
			out = append(out, strings.TrimSpace(l))
		}
	}
	if len(out) == 0 {
		t.Fatalf("%s: no paragraph starting %q (the test reads the lists there)", file, start)
	}
	return strings.Join(out, " ")
}

// TestDocsNameEveryList: docs/sync.md's "Every list, to the end" names each paged list (its
// table's words, "payment requests") and cmd/sandbox/README.md's "Lists" each one's endpoint.
func TestDocsNameEveryList(t *testing.T) {
	sync := paragraph(t, "docs/sync.md", "- **Every list, to the end.**")
	sync, _, _ = strings.Cut(sync, "are paged completely")
	sandbox := paragraph(t, "cmd/sandbox/README.md", "- **Lists** (")
	sandbox, _, _ = strings.Cut(sandbox, ")")
	for _, d := range pagedLists(t) {
		words := strings.ReplaceAll(d.TableName(), "_", " ")
		if !strings.Contains(strings.ToLower(sync), words) {
			t.Errorf("docs/sync.md \"Every list, to the end\" does not name %s (%q) among the lists paged whole: %q", d.Name, words, sync)
		}
		if ep := listEndpoint(d); !strings.Contains(sandbox, "`"+ep+"`") {
			t.Errorf("cmd/sandbox/README.md \"Lists\" does not name %s's endpoint `%s` (%s): %q", d.Name, ep, d.Paths[0], sandbox)
		}
	}
}

package warehouse

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/billsync/billsync/internal/entity"
)

const (
	docsTablesBegin = "<!-- BEGIN entity tables: generated from internal/entity (go test ./internal/warehouse -run TestDocsEntityTables -update) -->\n"
	docsTablesEnd   = "<!-- END entity tables -->\n"
)

// TestDocsEntityTables: docs/warehouse.md's table of the entity tables is the one the
// declarations give (entity.DocsTable), so a new or changed entity cannot leave it false;
// -update writes it.
func TestDocsEntityTables(t *testing.T) {
	const path = "../../docs/warehouse.md"
	doc, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := string(doc)
	i, j := strings.Index(s, docsTablesBegin), strings.Index(s, docsTablesEnd)
	if i < 0 || j < i {
		t.Fatalf("%s: no generated entity tables between %q and %q", path, docsTablesBegin, docsTablesEnd)
	}
	want := entity.DocsTable(entity.All())
	got := s[i+len(docsTablesBegin) : j]
	if got == want {
		return
	}
	if *update {
		if err := os.WriteFile(path, []byte(s[:i+len(docsTablesBegin)]+want+s[j:]), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("%s's entity tables differ from the declarations' (-update writes them):\n%s", path, want)
}

// Every table the entities fill has its row in the generated table, and nothing else does.
func TestDocsEntityTablesCoverTheDataTables(t *testing.T) {
	var rows []string
	for _, line := range strings.Split(entity.DocsTable(entity.All()), "\n") {
		if strings.HasPrefix(line, "| `") {
			rows = append(rows, strings.SplitN(line[3:], "`", 2)[0])
		}
	}
	data := slices.Clone(DataTables())
	slices.Sort(rows)
	slices.Sort(data)
	got, want := strings.Join(rows, ","), strings.Join(data, ",")
	if got != want {
		t.Errorf("documented tables %s, data tables %s", got, want)
	}
}

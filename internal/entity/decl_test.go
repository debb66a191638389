package entity

import (
	"strings"
	"testing"
)

func TestDeclarationsAreConsistent(t *testing.T) {
	if err := Check(All()); err != nil {
		t.Fatal(err)
	}
	paged := 0
	for _, d := range All() {
		if d.Paging == Pages {
			paged++
		}
	}
	if paged < 6 {
		t.Errorf("%d paged lists", paged)
	}
}

// Each broken declaration is reported with the entity's name, all of them at once.
func TestCheckReportsBrokenDeclarations(t *testing.T) {
	broken := []*Decl{
		{Name: "Bad-Name", Paging: Pages, Rule: FullRefresh, Paths: []string{"/x"}},
		{Name: "twice", Paging: Cursor, Rule: Incremental},
		{Name: "twice", Paging: Cursor, Rule: Incremental},
		{Name: "detail_alone", Paging: Detail, Rule: FillDetail, Table: "nothing", Paths: []string{"/d/{id}"}},
		{Name: "orphan_fanout", Paging: FanOut, Rule: Incremental, Paths: []string{"/f/{id}"}},
		{Name: "parent", Paging: Pages, Rule: FullRefresh, Paths: []string{"/p"}, PathID: true},
		{Name: "fanout_path", Paging: FanOut, Rule: Incremental, Parent: "listed", Paths: []string{"/f/{id}/x"}},
		{Name: "listed", Paging: Pages, Rule: FullRefresh, Paths: []string{"/l/{id}"}},
		{Name: "detail_by_pages", Paging: Pages, Rule: FillDetail, Paths: []string{"/y"}, Table: "twice"},
		{Name: "fields", Paging: Cursor, Rule: Incremental, Fields: []Field{
			{Col: "a", Type: "TEXT", JSON: []string{"a"}},
			{Col: "b", Type: Text, JSON: []string{"b"}, Future: true},
			{Col: "page", Type: Text, JSON: []string{"page"}},
			{Col: "c", Type: Text, JSON: []string{"c-d"}},
		}},
	}
	err := Check(broken)
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{
		"Bad-Name: name and table are lower_snake_case",
		"twice: declared twice",
		"detail_alone: fills table nothing, which no list declares",
		"orphan_fanout: a fan-out names its Parent",
		"parent: PathID, but no fan-out or detail reads per id of it",
		"fanout_path: a read per parent record has one path ending in /{id}",
		"fanout_path: its parent listed's ids become a path segment: declare PathID on listed",
		"listed: path /l/{id}: only a fan-out or detail read has {id}",
		"twice: a cursor read has one path",
		`detail_by_pages: a paged list is read whole: rule "detail"`,
		`detail_by_pages: a detail read (paging "pages") and the detail rule ("detail") go together`,
		`fields: column a: unknown type "TEXT"`,
		"fields: column b: only a time may lie in the future",
		`fields: column "page" is taken`,
		`fields: column c: JSON name "c-d"`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not say %q:\n%v", want, err)
		}
	}
}

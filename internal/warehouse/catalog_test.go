package warehouse

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/billsync/billsync/internal/entity"
	"github.com/billsync/billsync/internal/syncdata"
)

// TestEveryEntityTracksItsChanges is the warehouse's part of the conformance suite over every
// declared entity (internal/report's TestEveryEntityConforms runs the rest against the simulator):
// its fixture merges, and a later read changing each change-tracked column puts that change in
// record_changes, under the table's name.
func TestEveryEntityTracksItsChanges(t *testing.T) {
	for _, d := range entity.All() {
		if d.Rule == entity.FillDetail || len(d.Changes) == 0 {
			continue
		}
		t.Run(string(d.Name), func(t *testing.T) {
			b := startBuild(t, newPath(t))
			items := fixtureItems(t, d.Fixture)
			r1 := startRun(t, b, "acct")
			if res := load(t, b, d.Name, r1, t0, false, items...); res.Inserted == 0 {
				t.Fatalf("merged: %+v", res)
			}
			var rec map[string]any
			if err := json.Unmarshal([]byte(items[0]), &rec); err != nil {
				t.Fatal(err)
			}
			for _, col := range d.Changes {
				f, _ := d.Field(col)
				if len(f.JSON) == 0 || strings.Contains(f.JSON[0], ".") {
					t.Fatalf("changed: %s is computed by hand; give this test its change", col)
				}
				rec[f.JSON[0]] = changedValue(f)
			}
			changed, err := json.Marshal(rec)
			if err != nil {
				t.Fatal(err)
			}
			r2 := startRun(t, b, "acct")
			load(t, b, d.Name, r2, t0.Add(time.Hour), false, append([]string{string(changed)}, items[1:]...)...)
			for _, col := range d.Changes {
				if n := queryInt(t, b.DB(), `SELECT count(*) FROM record_changes WHERE entity = ? AND field = ? AND run_id = ?`, d.TableName(), col, r2.ID); n != 1 {
					t.Errorf("changed: %d changes of %s.%s, want 1", n, d.TableName(), col)
				}
			}
		})
	}
}

// changedValue is a value of f's type no fixture holds.
func changedValue(f entity.Field) any {
	switch f.Type {
	case entity.Int:
		return 987654
	case entity.Number, entity.Decimal:
		return 1.25
	case entity.Time:
		return int64(1785000000000) // 2026-07-25, plausible and ahead of every fixture
	default:
		return "billsync-changed"
	}
}

// TestEveryChildConforms is the conformance suite over every declared child table
// (entity.Child), run for each entity that fills one: from the parent's fixture record given an
// array of its own, the child's rows are created with every declared column typed from its JSON
// name, changes of its tracked columns and new elements go to record_changes, elements the
// array no longer holds are marked deleted, a parent leaving its whole list leaves its children
// as they were, a parent restored restores the elements it lists again; and the catalog names,
// exports and labels the table, and dq_deleted names a deleted row. A new child fails here until
// its declaration says each part.
func TestEveryChildConforms(t *testing.T) {
	for _, d := range entity.All() {
		for _, c := range d.Derived {
			t.Run(string(d.Name)+"/"+c.Table, func(t *testing.T) {
				childCataloged(t, c)
				s := newChildSuite(t, d, c)
				s.created()
				s.changed()
				s.shrunk()
				if d.Rule == entity.FillDetail {
					return // a detail deletes and restores no parent: its list's suite does
				}
				s.parentDeleted()
				s.parentRestored()
			})
		}
	}
}

// childCataloged: the table is a data table with its declared columns (so its DDL, the lake and
// the Parquet export carry it) and the reports label it in both locales. internal/report's
// TestEveryEntityConforms checks the same against the simulator.
func childCataloged(t *testing.T, c entity.Child) {
	t.Helper()
	if !slices.Contains(DataTables(), c.Table) {
		t.Errorf("exported: %s is not among DataTables (the export, the lake)", c.Table)
	}
	cols := DataColumns()[c.Table]
	for _, f := range c.Fields {
		if !slices.Contains(cols, Column{f.Col, f.Type}) {
			t.Errorf("created: %s has no column %s %s", c.Table, f.Col, f.Type)
		}
	}
	if l := entity.Labels(entity.All())[c.Table]; l[0] == "" || l[1] == "" {
		t.Errorf("labelled: %s has no label in both locales: %v", c.Table, l)
	}
}

// childSuite loads one parent record, its array of elements changed between runs.
type childSuite struct {
	t      *testing.T
	b      *Build
	d      *entity.Decl
	c      entity.Child
	parent map[string]any // the parent's record, its array set by each step
	other  string         // another record of the parent's list
	runs   int
}

const childParent = "billsync-parent"

func newChildSuite(t *testing.T, d *entity.Decl, c entity.Child) *childSuite {
	s := &childSuite{t: t, b: startBuild(t, newPath(t)), d: d, c: c}
	list := d
	if d.Rule == entity.FillDetail { // its parent is listed first, saying nothing of its children
		for _, l := range entity.All() {
			if l.Rule != entity.FillDetail && l.TableName() == d.Table {
				list = l
			}
		}
	}
	s.parent = s.record(list.Fixture)
	delete(s.parent, c.Array)
	delete(s.parent, "variant") // products: the JSON-encoded form of the array
	other := maps.Clone(s.parent)
	other["id"] = "billsync-other"
	b, _ := json.Marshal(other)
	s.other = string(b)
	if d.Rule == entity.FillDetail {
		run := startRun(t, s.b, "acct")
		load(t, s.b, list.Name, run, t0, true, s.marshal(), s.other)
		s.finish(run)
		s.parent = s.record(d.Fixture)
	}
	return s
}

// record is the first record of a fixture, as the parent.
func (s *childSuite) record(fixture string) map[string]any {
	var rec map[string]any
	if err := json.Unmarshal([]byte(fixtureItems(s.t, fixture)[0]), &rec); err != nil {
		s.t.Fatal(err)
	}
	rec["id"] = childParent
	return rec
}

func (s *childSuite) marshal() string {
	b, err := json.Marshal(s.parent)
	if err != nil {
		s.t.Fatal(err)
	}
	return string(b)
}

// element is the array element id, each field set to a value of its type (changed: another).
func (s *childSuite) element(id string, changed bool) map[string]any {
	e := map[string]any{"id": id}
	for _, f := range s.c.Fields {
		v := childValue(f)
		if changed && slices.Contains(s.c.Changes, f.Col) {
			v = changedValue(f)
		}
		setJSON(e, f.JSON[0], v)
	}
	return e
}

// merge loads the parent with elements as its array, alone or beside another record of its
// list, in a new run, and returns the run.
func (s *childSuite) merge(elements ...map[string]any) syncdata.Run {
	s.t.Helper()
	s.runs++
	run := startRun(s.t, s.b, "acct")
	s.parent[s.c.Array] = elements
	records := []string{s.marshal()}
	if s.d.Rule != entity.FillDetail {
		records = append(records, s.other)
	}
	load(s.t, s.b, s.d.Name, run, t0.Add(time.Duration(s.runs)*time.Hour), s.d.Rule != entity.FillDetail, records...)
	s.finish(run)
	return run
}

// finish ends a run, so the next one is a later sync (not this one resumed).
func (s *childSuite) finish(run syncdata.Run) {
	s.t.Helper()
	if err := s.b.finishRun(context.Background(), run.ID, syncdata.RunStats{Status: "succeeded"}); err != nil {
		s.t.Fatal(err)
	}
}

// changes are the run's record_changes of the child table: "id field", sorted.
func (s *childSuite) changes(run syncdata.Run) string {
	return queryString(s.t, s.b.DB(), `SELECT coalesce(string_agg(record_id || ' ' || field, ', ' ORDER BY record_id, field), '')
		FROM record_changes WHERE entity = ? AND run_id = ?`, s.c.Table, run.ID)
}

// live are the parent's children not marked deleted: their ids, sorted.
func (s *childSuite) live() string {
	return queryString(s.t, s.b.DB(), fmt.Sprintf(`SELECT coalesce(string_agg(id, ',' ORDER BY id), '') FROM %s
		WHERE %s = ? AND deleted_upstream_at IS NULL`, s.c.Table, s.c.ParentKey), childParent)
}

func (s *childSuite) created() {
	s.merge(s.element("e1", false), s.element("e2", false))
	if got := s.live(); got != "e1,e2" {
		s.t.Fatalf("created: the parent's children are %q, want e1,e2", got)
	}
	for _, f := range s.c.Fields {
		if n := queryInt(s.t, s.b.DB(), fmt.Sprintf(`SELECT count(%q) FROM %s WHERE %s = ?`, f.Col, s.c.Table, s.c.ParentKey), childParent); n != 2 {
			s.t.Errorf("created: %s.%s is NULL in %d of 2 rows (from the element's %q)", s.c.Table, f.Col, 2-n, f.JSON[0])
		}
	}
}

func (s *childSuite) changed() {
	run := s.merge(s.element("e1", true), s.element("e2", false), s.element("e3", false))
	want := []string{"e3 _created"}
	for _, col := range s.c.Changes {
		want = append(want, "e1 "+col)
	}
	slices.Sort(want)
	if got := s.changes(run); got != strings.Join(want, ", ") {
		s.t.Errorf("changed: record_changes of %s: %q, want %q", s.c.Table, got, strings.Join(want, ", "))
	}
}

func (s *childSuite) shrunk() {
	run := s.merge(s.element("e1", true))
	if got := s.live(); got != "e1" {
		s.t.Errorf("shrunk: live children %q, want e1", got)
	}
	if got := s.changes(run); got != "e2 _deleted, e3 _deleted" {
		s.t.Errorf("shrunk: record_changes %q, want e2 and e3 _deleted", got)
	}
	// labelled when deleted: dq_deleted's view names the row
	if _, err := s.b.DB().Exec(entity.DeletedLabelsSQL(entity.All())); err != nil {
		s.t.Fatal(err)
	}
	if got := queryString(s.t, s.b.DB(), `SELECT label FROM `+entity.DeletedLabelsView+` WHERE entity = ? AND id = 'e2'`, s.c.Table); got == "" {
		s.t.Errorf("deleted: dq_deleted does not name the deleted %s row e2: the child has no name column, declare what names it (Child.Deleted)", s.c.Table)
	}
}

func (s *childSuite) parentDeleted() {
	s.runs++
	run := startRun(s.t, s.b, "acct")
	load(s.t, s.b, s.d.Name, run, t0.Add(time.Duration(s.runs)*time.Hour), true, s.other)
	s.finish(run)
	if n := queryInt(s.t, s.b.DB(), fmt.Sprintf(`SELECT count(deleted_upstream_at) FROM %s WHERE id = ?`, s.d.TableName()), childParent); n != 1 {
		s.t.Fatalf("parent deleted: the parent is not marked deleted")
	}
	if got, changes := s.live(), s.changes(run); got != "e1" || changes != "" {
		s.t.Errorf("parent deleted: children %q with changes %q, want e1 kept as it was (docs/warehouse.md)", got, changes)
	}
}

func (s *childSuite) parentRestored() {
	run := s.merge(s.element("e1", true), s.element("e2", false))
	if got, changes := s.live(), s.changes(run); got != "e1,e2" || changes != "e2 _restored" {
		s.t.Errorf("parent restored: children %q with changes %q, want e1,e2 and e2 _restored", got, changes)
	}
}

// childValue is a value of f's type that changedValue is not.
func childValue(f entity.Field) any {
	switch f.Type {
	case entity.Int:
		return 1200
	case entity.Number, entity.Decimal:
		return 2.5
	case entity.Time:
		return int64(1778236239496)
	case entity.JSON:
		return map[string]any{"k": 1}
	default:
		return "billsync-" + f.Col
	}
}

// setJSON sets a (dotted) JSON name of a record.
func setJSON(rec map[string]any, name string, v any) {
	parts := strings.Split(name, ".")
	for _, p := range parts[:len(parts)-1] {
		next, ok := rec[p].(map[string]any)
		if !ok {
			next = map[string]any{}
			rec[p] = next
		}
		rec = next
	}
	rec[parts[len(parts)-1]] = v
}

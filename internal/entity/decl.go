package entity

import (
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strings"
)

// Decl declares one entity: where its records come from, how a read of them merges into its
// table, and the table's columns. The warehouse derives the table's DDL, the projection and
// change-history SQL and the docs table from it; fetch derives its list streams.
type Decl struct {
	Name  Name
	Table string // the table the entity's merges write; its Name when empty

	// Paths are the endpoints that together are the whole list (Paging Pages); the one endpoint
	// of a cursor read; the one endpoint of a fan-out or detail read, per parent id: its last
	// segment is {id}.
	Paths  []string
	Paging Paging
	Rule   Rule
	// Parent is the entity a fan-out reads per record of (its ids fill {id}); a detail's parent is
	// the list writing its Table.
	Parent Name

	// The record's key is its `id` (with the account: a table's rows are (account, id)).
	// PathID: the id becomes one segment of a request path (a detail read, the credit history
	// fan-out), so an id that cannot be one fails validation. Set exactly on the parents of the
	// declared fan-outs and details.
	PathID bool

	// Fields are the table's typed columns after account and id, in the table's order. A detail
	// entity's fields are the columns it fills in the listed rows.
	Fields []Field
	// Changes are the columns whose changes go to record_changes, in that order.
	Changes []string
	// Derived are the child tables built from arrays inside the record (Child).
	Derived []Child

	// SQL names the sections of merge/<Name>.sql, the quirks written by hand: they override the
	// generated `project` and `changes` and merge/common.sql's steps. Empty: the entity has no
	// file and its SQL is generated from Fields and Changes.
	SQL []string

	Row string // docs: what one row of the table is
	Doc string // docs: anything a reader must know beyond the columns (a detail: where its columns come from)
	// Fixture is a sample response whose `data` holds the entity's records (its merge golden): the
	// spec's, in testdata/fixtures/laravel-mayar, or, when the spec shows none, one made up from
	// its fields in testdata/fixtures/invented (never among the spec's copied files).
	Fixture string

	// Label names the table (a detail: its read) in the reports, in both locales.
	Label Label
	// Deleted is how dq_deleted names a deleted row: a VARCHAR SQL expression over the row `x`.
	// Empty: its name column (NULL without one). A list whose rows are never marked deleted
	// has none.
	Deleted string
}

// Label is a table's name in the reports' two locales.
type Label struct{ ID, EN string }

// Paging is how the records are read.
type Paging string

const (
	Pages  Paging = "pages"   // page=&pageSize= until the server's count is reached: a whole list
	Cursor Paging = "cursor"  // from the newest created_at stored: incremental
	FanOut Paging = "fan-out" // one paged read per customer (credit history)
	Detail Paging = "detail"  // one read per listed record
)

// Rule is how a read merges into the table.
type Rule string

const (
	// FullRefresh: upserted by id; a whole list marks the rows it did not contain deleted upstream.
	FullRefresh Rule = "full refresh"
	// Incremental: upserted by id, never marked deleted.
	Incremental Rule = "incremental"
	// FillDetail: fills the Fields of rows another entity listed; inserts and deletes none.
	FillDetail Rule = "detail"
)

// Type is a column's type; the projection casts the record's text with the matching macro.
type Type string

const (
	Text    Type = "VARCHAR"
	Int     Type = "BIGINT"        // bs_int: a fraction or text is a validation error
	Number  Type = "DOUBLE"        // bs_num
	Decimal Type = "DECIMAL(20,4)" // bs_dec: money that may carry fractions
	Time    Type = "TIMESTAMPTZ"   // bs_ts: epoch milliseconds or ISO-8601, checked plausible
	JSON    Type = "JSON"          // kept as the record's JSON value
)

// Field is one typed column.
type Field struct {
	Col  string
	Type Type
	// JSON are the record's fields that fill the column, the first present winning: aliases
	// ("updatedAt", "updateAt") and nested fields ("customer.id"). Empty: the entity's own
	// `project` SQL computes it.
	JSON []string
	// Future: a time that may lie ahead (an expiry); only its lower bound is checked.
	Future bool
	// Required: a record without the field is invalid (a cursor moves with it).
	Required bool
	Doc      string // docs: meaning or values, shown after the column name
}

// TableName is the table the entity writes.
func (d *Decl) TableName() string {
	if d.Table != "" {
		return d.Table
	}
	return string(d.Name)
}

// Field returns the field of column col.
func (d *Decl) Field(col string) (Field, bool) {
	i := slices.IndexFunc(d.Fields, func(f Field) bool { return f.Col == col })
	if i < 0 {
		return Field{}, false
	}
	return d.Fields[i], true
}

// Child declares a child table (dlt's way): its rows are the elements of an array inside the
// parent's record, keyed by (account, ParentKey, id), the element's `id`. Its table, merge,
// change history, deletion marks, labels, export and docs row all follow from this declaration
// (internal/warehouse, child.go): the rows are rebuilt from the array each time the parent record
// is new, changed or restored; an element the parent no longer lists is marked deleted upstream;
// a parent that leaves its list keeps its children as they were (its own deleted_upstream_at
// says it is gone).
type Child struct {
	Table     string
	ParentKey string // the column holding the parent's id
	// Array is the JSON name of the array in the parent's record. A parent whose projection is
	// generated checks it is an array; a hand-written one must give it as column x_<Table>.
	Array string
	// Fields are the element's typed columns, each by its JSON names (elements are not validated:
	// a value that does not type is NULL, so Required and Future say nothing here).
	Fields []Field
	// Changes are the columns whose changes go to record_changes, in that order.
	Changes  []string
	Row, Doc string
	Label    Label
	Deleted  string // as Decl.Deleted
}

// Field returns the child's field of column col.
func (c *Child) Field(col string) (Field, bool) { return fieldOf(c.Fields, col) }

// All returns every declaration, in declaration order (fetch starts its list streams in it).
func All() []*Decl { return all }

// Get returns the declaration of n.
func Get(n Name) (*Decl, bool) {
	i := slices.IndexFunc(all, func(d *Decl) bool { return d.Name == n })
	if i < 0 {
		return nil, false
	}
	return all[i], true
}

// identRe keeps names that go into SQL safe to write there.
var identRe = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)

// jsonNameRe: a JSON field name, dotted for nested objects.
var jsonNameRe = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$`)

// Check reports every inconsistency of the declarations: a broken one must fail a test, not a
// sync.
func Check(decls []*Decl) error {
	var problems []string
	bad := func(d *Decl, format string, args ...any) {
		problems = append(problems, string(d.Name)+": "+fmt.Sprintf(format, args...))
	}
	names := map[Name]bool{}
	for _, d := range decls {
		if !identRe.MatchString(string(d.Name)) || !identRe.MatchString(d.TableName()) {
			bad(d, "name and table are lower_snake_case")
		}
		if names[d.Name] {
			bad(d, "declared twice")
		}
		names[d.Name] = true
		switch d.Rule {
		case FullRefresh, Incremental, FillDetail:
		default:
			bad(d, "unknown rule %q", d.Rule)
		}
		switch d.Paging {
		case Pages:
			if len(d.Paths) == 0 {
				bad(d, "a paged list needs its paths")
			}
			if d.Rule != FullRefresh {
				bad(d, "a paged list is read whole: rule %q, want %q", d.Rule, FullRefresh)
			}
		case Cursor, FanOut, Detail:
		default:
			bad(d, "unknown paging %q", d.Paging)
		}
		if (d.Rule == FillDetail) != (d.Paging == Detail) {
			bad(d, "a detail read (paging %q) and the detail rule (%q) go together", d.Paging, d.Rule)
		}
		if d.Rule == FillDetail && d.Table == "" {
			bad(d, "a detail names the table it fills")
		}
		cols := map[string]bool{"account": true, "id": true}
		checkFields(d, d.Fields, cols, bad)
		for _, c := range d.Changes {
			if _, ok := d.Field(c); !ok {
				bad(d, "change-tracked column %q is no field", c)
			}
		}
		if d.Label.ID == "" || d.Label.EN == "" {
			bad(d, "a label in both locales (Label.ID, Label.EN) names it in the reports")
		}
		if d.Deleted != "" && d.Rule != FullRefresh {
			bad(d, "only a whole list marks rows deleted: a Deleted label is for rule %q", FullRefresh)
		}
		for _, c := range d.Derived {
			checkChild(d, c, bad)
		}
		hand := slices.Contains(d.SQL, "project")
		for _, f := range d.Fields {
			if len(f.JSON) == 0 && !hand {
				bad(d, "field %s has no JSON name and no hand-written project section computes it", f.Col)
			}
		}
	}
	checkSharedChildren(decls, bad)
	checkFanOuts(decls, bad)
	for _, d := range decls {
		if d.Rule != FillDetail {
			continue
		}
		if !slices.ContainsFunc(decls, func(o *Decl) bool { return o.Rule != FillDetail && o.TableName() == d.Table }) {
			bad(d, "fills table %s, which no list declares", d.Table)
		}
	}
	if len(problems) > 0 {
		return fmt.Errorf("entity declarations:\n  %s", strings.Join(problems, "\n  "))
	}
	return nil
}

// ParentOf is the entity whose records a fan-out or detail read reads per id: its Parent, or the
// list writing a detail's table.
func ParentOf(decls []*Decl, d *Decl) (*Decl, bool) {
	for _, p := range decls {
		switch {
		case d.Paging == FanOut && p.Name == d.Parent,
			d.Paging == Detail && p.Rule != FillDetail && p.TableName() == d.Table:
			return p, true
		}
	}
	return nil, false
}

// IDPath is a fan-out's or detail's endpoint without its {id}: the parent's id is appended.
func (d *Decl) IDPath() string {
	if len(d.Paths) == 0 {
		return ""
	}
	return strings.TrimSuffix(d.Paths[0], "{id}")
}

// checkFanOuts: a read per parent record names one endpoint ending in {id} and a parent whose
// ids are checked as path segments (PathID); PathID is set on those parents only.
func checkFanOuts(decls []*Decl, bad func(*Decl, string, ...any)) {
	readByID := map[Name]bool{}
	for _, d := range decls {
		perID := d.Paging == FanOut || d.Paging == Detail
		for _, p := range d.Paths {
			if strings.Contains(p, "{id}") && (!perID || !strings.HasSuffix(p, "/{id}")) {
				bad(d, "path %s: only a fan-out or detail read has {id}, as its last segment", p)
			}
		}
		if d.Paging == Cursor && len(d.Paths) != 1 {
			bad(d, "a cursor read has one path: %v", d.Paths)
		}
		if !perID {
			if d.Parent != "" {
				bad(d, "a parent is for a fan-out or detail read (paging %q)", d.Paging)
			}
			continue
		}
		if len(d.Paths) != 1 || !strings.HasSuffix(d.Paths[0], "/{id}") {
			bad(d, "a read per parent record has one path ending in /{id}: %v", d.Paths)
		}
		if d.Paging == FanOut && d.Parent == "" {
			bad(d, "a fan-out names its Parent, the entity whose records it reads per id")
		}
		p, ok := ParentOf(decls, d)
		if !ok {
			bad(d, "no parent entity %q declared", d.Parent)
			continue
		}
		readByID[p.Name] = true
		if !p.PathID {
			bad(d, "its parent %s's ids become a path segment: declare PathID on %s", p.Name, p.Name)
		}
	}
	for _, d := range decls {
		if d.PathID && !readByID[d.Name] {
			bad(d, "PathID, but no fan-out or detail reads per id of it")
		}
	}
}

// checkChild reports what a child's declaration cannot provide: every part of its SQL is
// generated, so each column needs a JSON name, and its elements are not validated.
func checkChild(d *Decl, c Child, bad func(*Decl, string, ...any)) {
	if c.Label.ID == "" || c.Label.EN == "" {
		bad(d, "child table %q: a label in both locales names it in the reports", c.Table)
	}
	if !identRe.MatchString(c.Table) || !identRe.MatchString(c.ParentKey) {
		bad(d, "child table %q: names are lower_snake_case", c.Table)
	}
	if !jsonNameRe.MatchString(c.Array) || strings.Contains(c.Array, ".") {
		bad(d, "child table %q: Array names the field of the parent's record holding its elements (a JSON name, not nested): %q", c.Table, c.Array)
	}
	checkFields(d, c.Fields, map[string]bool{"account": true, "id": true, c.ParentKey: true}, bad)
	for _, f := range c.Fields {
		if len(f.JSON) == 0 {
			bad(d, "child table %q: column %s has no JSON name: a child's columns are generated from its element's fields, no hand-written SQL computes one", c.Table, f.Col)
		}
		if f.Required || f.Future {
			bad(d, "child table %q: column %s is Required or Future, but a child's elements are not validated (a value that does not type is NULL)", c.Table, f.Col)
		}
	}
	for _, col := range c.Changes {
		if _, ok := c.Field(col); !ok {
			bad(d, "child table %q: change-tracked column %q is no field", c.Table, col)
		}
	}
}

// checkSharedChildren: a child table several entities fill (a list and its detail) is declared
// alike by each (one Child value, shared).
func checkSharedChildren(decls []*Decl, bad func(*Decl, string, ...any)) {
	seen := map[string]Child{}
	for _, d := range decls {
		for _, c := range d.Derived {
			if o, ok := seen[c.Table]; ok && !reflect.DeepEqual(o, c) {
				bad(d, "child table %q is declared differently by another entity: declare one Child and give it to both", c.Table)
			}
			seen[c.Table] = c
		}
	}
}

func checkFields(d *Decl, fields []Field, cols map[string]bool, bad func(*Decl, string, ...any)) {
	for _, f := range fields {
		if !identRe.MatchString(f.Col) {
			bad(d, "column %q is not lower_snake_case", f.Col)
		}
		if cols[f.Col] || commonColumn[f.Col] || projectionName[f.Col] || strings.HasPrefix(f.Col, "x_") {
			bad(d, "column %q is taken (declared twice, a column every table has, a name the projection uses, or a merge helper's x_ prefix)", f.Col)
		}
		cols[f.Col] = true
		switch f.Type {
		case Text, Int, Number, Decimal, Time, JSON:
		default:
			bad(d, "column %s: unknown type %q", f.Col, f.Type)
		}
		for _, j := range f.JSON {
			if !jsonNameRe.MatchString(j) {
				bad(d, "column %s: JSON name %q", f.Col, j)
			}
		}
		if f.Future && f.Type != Time {
			bad(d, "column %s: only a time may lie in the future", f.Col)
		}
	}
}

// commonColumn are the columns every entity table has besides account and id.
var commonColumn = map[string]bool{"raw": true, "raw_hash": true, "first_seen_run": true, "last_seen_run": true,
	"first_seen_at": true, "last_seen_at": true, "deleted_upstream_at": true}

// projectionName are the names the generated projection gives the staged record's parts.
var projectionName = map[string]bool{"seq": true, "page": true, "idx": true, "r": true}

package warehouse

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/billsync/billsync/internal/entity"
)

// The SQL an entity's declaration implies: its table's DDL, its projection (`project`, the same
// shape as a hand-written one: one json_transform per record, typed by the bs_* macros, every
// problem located) and its change history (`changes`). An entity's merge/<name>.sql overrides
// what it declares there; the loader checks both alike.

// q quotes an identifier: generated SQL quotes every name, so a column may be called "order".
func q(name string) string { return `"` + name + `"` }

// jsonPath is the projection's access to a record field: r."customer"."id".
func jsonPath(name string) string {
	parts := strings.Split(name, ".")
	for i, p := range parts {
		parts[i] = q(p)
	}
	return "r." + strings.Join(parts, ".")
}

// fieldText is the field's text as the record sent it, the first of its JSON names present.
func fieldText(f entity.Field) string {
	if len(f.JSON) == 1 {
		return jsonPath(f.JSON[0])
	}
	paths := make([]string, len(f.JSON))
	for i, j := range f.JSON {
		paths[i] = jsonPath(j)
	}
	return "coalesce(" + strings.Join(paths, ", ") + ")"
}

// typed are the macros that type a field's text, and what a value that fails says it is not.
var typed = map[entity.Type]struct{ macro, what string }{
	entity.Int:     {"bs_int", "an integer"},
	entity.Number:  {"bs_num", "a number"},
	entity.Decimal: {"bs_dec", "a number"},
	entity.Time:    {"bs_ts", "a timestamp"},
}

// jsonStructure is the json_transform structure reading every field of d: each JSON name as
// VARCHAR (typed afterwards, so "123" and 123 both load), JSON fields as JSON, nested names as
// objects; then the arrays of its child tables (arrays), as JSON.
func jsonStructure(fields []entity.Field, arrays ...string) string {
	type node struct {
		keys []string
		kids map[string]*node
		typ  map[string]string
	}
	newNode := func() *node { return &node{kids: map[string]*node{}, typ: map[string]string{}} }
	root := newNode()
	add := func(path, typ string) {
		n := root
		parts := strings.Split(path, ".")
		for i, p := range parts {
			if !slices.Contains(n.keys, p) {
				n.keys = append(n.keys, p)
			}
			if i == len(parts)-1 {
				n.typ[p] = typ
				return
			}
			if n.kids[p] == nil {
				n.kids[p] = newNode()
			}
			n = n.kids[p]
		}
	}
	add("id", "VARCHAR")
	for _, f := range fields {
		typ := "VARCHAR"
		if f.Type == entity.JSON {
			typ = "JSON"
		}
		for _, j := range f.JSON {
			add(j, typ)
		}
	}
	for _, a := range arrays {
		add(a, "JSON")
	}
	var render func(n *node) string
	render = func(n *node) string {
		parts := make([]string, len(n.keys))
		for i, k := range n.keys {
			if kid := n.kids[k]; kid != nil {
				parts[i] = fmt.Sprintf("%q: %s", k, render(kid))
			} else {
				parts[i] = fmt.Sprintf("%q: %q", k, n.typ[k])
			}
		}
		return "{" + strings.Join(parts, ", ") + "}"
	}
	return render(root)
}

// projectSQL is the generated `project` section of a list entity.
func projectSQL(d *entity.Decl) (string, error) {
	if d.Rule == entity.FillDetail {
		return "", fmt.Errorf("a detail's projection is written by hand (declare \"project\" in its SQL)")
	}
	var tcols, cols, checks, times []string
	for _, f := range d.Fields {
		if len(f.JSON) == 0 {
			return "", fmt.Errorf("field %s has no JSON name", f.Col)
		}
		text := fieldText(f)
		label := "'" + f.JSON[0] + "'"
		if f.Required {
			checks = append(checks, fmt.Sprintf("CASE WHEN r IS NOT NULL AND %s IS NULL THEN %s END", text, "'"+f.JSON[0]+": missing'"))
		}
		t, ok := typed[f.Type]
		if !ok { // text and JSON are stored as sent
			cols = append(cols, text+" AS "+q(f.Col))
			continue
		}
		tcols = append(tcols, fmt.Sprintf("%s(%s) AS %s", t.macro, text, q(f.Col)))
		cols = append(cols, q(f.Col))
		bad := fmt.Sprintf("bs_bad(%s, %s, %s, '%s')", label, text, q(f.Col), t.what)
		if f.Type != entity.Time {
			checks = append(checks, bad)
			continue
		}
		latest := "c.latest_at, c.clocks"
		if f.Future {
			latest = "NULL::TIMESTAMPTZ, NULL::VARCHAR"
		}
		times = append(times, bad, fmt.Sprintf("bs_when(%s, %s, %s, %s)", label, text, q(f.Col), latest))
	}
	problems := []string{
		"CASE WHEN r IS NULL THEN 'not a JSON object' END",
		"CASE WHEN r IS NOT NULL AND bs_blank(r.id) IS NULL THEN 'id: missing' END",
	}
	if d.PathID {
		problems = append(problems, "bs_path_id(bs_blank(r.id))")
	}
	arrays, children, childProblems := childProjection(d)
	problems = append(append(append(problems, checks...), times...), childProblems...)
	x := strings.Join(append([]string{"seq AS x_seq, page AS x_page, idx AS x_idx"}, children...), ",\n       ")
	t := "SELECT * FROM p"
	if len(tcols) > 0 {
		t = "SELECT *, " + strings.Join(tcols, ",\n           ") + "\n    FROM p"
	}
	var b strings.Builder
	fmt.Fprintf(&b, `%s
WITH p AS (
    SELECT seq, page, idx, raw::JSON AS raw, raw_hash, json_transform(raw, '%s') AS r
    FROM parse_input
), t AS (
    %s
)
SELECT c.account, bs_blank(r.id) AS id,
       %s,
       raw, raw_hash, c.run_id AS last_seen_run, c.observed_at AS last_seen_at, NULL::TIMESTAMPTZ AS deleted_upstream_at,
       %s,
       list_filter([
           %s
       ], x -> x IS NOT NULL) AS x_problems
FROM t, merge_ctx c;
`, projectTable, jsonStructure(d.Fields, arrays...), t, strings.Join(cols, ", "), x,
		strings.Join(problems, ",\n           "))
	return b.String(), nil
}

// changesSQL is the generated `changes` section: one record_changes row per tracked column
// whose value differs from the stored row's, named by the table (as the lifecycle rows are).
func changesSQL(d *entity.Decl) (string, error) {
	if len(d.Changes) == 0 {
		return "-- opt-out: the declaration tracks no field's changes\n", nil
	}
	var chs []string
	for _, c := range d.Changes {
		f, ok := d.Field(c)
		if !ok {
			return "", fmt.Errorf("change-tracked column %s is no field", c)
		}
		old, new := "t."+q(c), "s."+q(c)
		if f.Type != entity.Text {
			old, new = old+"::VARCHAR", new+"::VARCHAR"
		}
		chs = append(chs, fmt.Sprintf("{'field': '%s', 'old_value': %s, 'new_value': %s}", c, old, new))
	}
	table := d.TableName()
	return fmt.Sprintf(`INSERT INTO record_changes
SELECT s.account, '%s', s.id, u.ch.field, u.ch.old_value, u.ch.new_value, s.last_seen_at, s.last_seen_run
FROM incoming s
JOIN %s t ON t.account = s.account AND t.id = s.id,
LATERAL UNNEST([
    %s
]) AS u(ch)
WHERE u.ch.old_value IS DISTINCT FROM u.ch.new_value;
`, table, q(table), strings.Join(chs, ",\n    ")), nil
}

// Column is one column of a data table, as its declaration makes it.
type Column struct {
	Name string
	Type entity.Type // an entity.Type, or UHUGEINT for raw_hash
}

// The columns every data table ends with, after its declared fields: the record's JSON and the
// sync's bookkeeping. An entity's table adds raw_hash (the merge's change test) after them.
var (
	tailColumns = []Column{{"raw", entity.JSON}, {"first_seen_run", entity.Int}, {"last_seen_run", entity.Int},
		{"first_seen_at", entity.Time}, {"last_seen_at", entity.Time}, {"deleted_upstream_at", entity.Time}}
	rawHashColumn = Column{"raw_hash", "UHUGEINT"}
)

// DataColumns are the columns of every table the declarations fill (DataTables), in the
// table's order: an entity's table has account and id, its list's fields, the fields its
// details fill, then the tail; a child table its parent's key before its own id. The DDL and
// the lake's tables (internal/lake) both follow from it.
func DataColumns() map[string][]Column { return declaredColumns(entity.All()) }

func declaredColumns(decls []*entity.Decl) map[string][]Column {
	out := map[string][]Column{}
	add := func(cols []Column, fields []entity.Field) []Column {
		for _, f := range fields {
			cols = append(cols, Column{f.Col, f.Type})
		}
		return cols
	}
	for _, d := range decls {
		if d.Rule == entity.FillDetail {
			continue
		}
		cols := add([]Column{{"account", entity.Text}, {"id", entity.Text}}, d.Fields)
		for _, x := range decls {
			if x.Rule == entity.FillDetail && x.Table == d.TableName() {
				cols = add(cols, x.Fields)
			}
		}
		out[d.TableName()] = append(append(cols, tailColumns...), rawHashColumn)
		for _, c := range d.Derived {
			cols := add([]Column{{"account", entity.Text}, {c.ParentKey, entity.Text}, {"id", entity.Text}}, c.Fields)
			out[c.Table] = append(cols, tailColumns...)
		}
	}
	return out
}

// tableDDL are the CREATE TABLE statements of every table the declarations fill, by table
// (declaredColumns). A table no migration creates is created from it (createDeclaredTables), and
// TestDeclaredDDLMatchesTheMigrations holds the migrated ones to it.
func tableDDL(decls []*entity.Decl) map[string]string {
	out := map[string]string{}
	for table, cols := range declaredColumns(decls) {
		var defs []string
		for _, c := range cols {
			def := q(c.Name) + " " + string(c.Type)
			if c.Name == "raw" {
				def += " USING COMPRESSION zstd"
			}
			defs = append(defs, def)
		}
		out[table] = "CREATE TABLE IF NOT EXISTS " + q(table) + " (\n    " + strings.Join(defs, ",\n    ") + "\n)"
	}
	return out
}

// migratedTables are the tables the migrations create (by CREATE TABLE or a rename).
var migratedTables = func() map[string]bool {
	re := regexp.MustCompile(`(?i)(?:CREATE TABLE|RENAME TO)\s+(\w+)`)
	out := map[string]bool{}
	files, err := sqlFS.ReadDir("migrations")
	if err != nil {
		panic(err)
	}
	for _, f := range files {
		for _, m := range re.FindAllStringSubmatch(mustRead("migrations/"+f.Name()), -1) {
			out[strings.ToLower(m[1])] = true
		}
	}
	return out
}()

// declaredOnlyTables are the data tables no migration creates: created from their declaration.
func declaredOnlyTables() []string {
	var out []string
	for _, t := range DataTables() {
		if !migratedTables[t] {
			out = append(out, t)
		}
	}
	return out
}

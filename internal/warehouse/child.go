package warehouse

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/billsync/billsync/internal/entity"
)

// The SQL a child table's declaration (entity.Child) implies, run after its parent's upsert in
// the same transaction. Only parents that are new, changed or restored are looked at
// (merge_state's derive): an unchanged parent has unchanged children, so their seen columns move
// only when the parent's record changes. A parent that says which children it has (its array
// present) is authoritative: children it no longer lists get deleted_upstream_at.
//
// Three statements per child and parent entity, the loader's steps:
//   derived_<table>_incoming  builds incoming_<table> from the parents' arrays (given by the
//                             parent's projection as x_<table>, parsed there once);
//   derived_<table>           its change history, lifecycle rows, deletion marks and merge;
//   derived_<table>_first     inserts it when the parent had its first load.

// childArray is the column a parent's projection gives a child's array in: a JSON array, or
// NULL when the record does not say which children it has (then they are left alone).
func childArray(c entity.Child) string { return "x_" + c.Table }

// childTemp is the temp table the child's incoming step builds and its other steps read.
func childTemp(c entity.Child) string { return "incoming_" + c.Table }

// childSections are the loader's steps of child c of parent entity d, by step name.
func childSections(d *entity.Decl, c entity.Child) map[string]string {
	step := "derived_" + c.Table
	return map[string]string{
		step + "_incoming": childIncomingSQL(d, c),
		step:               childMergeSQL(d, c),
		step + "_first":    fmt.Sprintf("INSERT INTO %s BY NAME SELECT * FROM %s;\n", q(c.Table), q(childTemp(c))),
	}
}

// childIncomingSQL unnests the arrays of the parents to derive from into the child's rows: one
// json_transform per element, typed by the bs_* macros (untyped values are NULL: elements are
// not validated), elements without an id skipped, one row per (parent, id).
func childIncomingSQL(d *entity.Decl, c entity.Child) string {
	arr := "s." + q(childArray(c))
	where := []string{arr + " IS NOT NULL", "s.id IN (SELECT id FROM merge_state WHERE derive)"}
	if d.Rule == entity.FillDetail {
		// a detail's parent may not be listed (yet): its merge filled no row to hang children on
		where = append(where, fmt.Sprintf("EXISTS (SELECT 1 FROM %s p WHERE p.account = s.account AND p.id = s.id)", q(d.TableName())))
	}
	cols := []string{"account", q(c.ParentKey), "bs_blank(r.id) AS id"}
	for _, f := range c.Fields {
		text := fieldText(f)
		if t, ok := typed[f.Type]; ok {
			text = t.macro + "(" + text + ")"
		}
		cols = append(cols, text+" AS "+q(f.Col))
	}
	return fmt.Sprintf(`CREATE OR REPLACE TEMP TABLE %s AS
WITH v AS (
    SELECT s.account, s.id AS %s, s.last_seen_run, s.last_seen_at, unnest(%s::JSON[]) AS raw
    FROM incoming s
    WHERE %s
), p AS (
    SELECT *, json_transform(raw, '%s') AS r FROM v
)
SELECT %s,
       raw, last_seen_run, last_seen_at, NULL::TIMESTAMPTZ AS deleted_upstream_at,
       last_seen_run AS first_seen_run, last_seen_at AS first_seen_at
FROM p
WHERE bs_blank(r.id) IS NOT NULL
QUALIFY row_number() OVER (PARTITION BY %s, bs_blank(r.id)) = 1;
`, q(childTemp(c)), q(c.ParentKey), arr, strings.Join(where, "\n      AND "), jsonStructure(c.Fields),
		strings.Join(cols, ", "), q(c.ParentKey))
}

// childMergeSQL records the child's changes (its tracked columns; `_created` and `_restored`
// as the parent's lifecycle does; `_deleted` for each stored child a derived parent no longer
// lists), marks those deleted and merges the incoming rows.
func childMergeSQL(d *entity.Decl, c entity.Child) string {
	table, temp, key, arr := q(c.Table), q(childTemp(c)), q(c.ParentKey), q(childArray(c))
	join := fmt.Sprintf("t.account = s.account AND t.%s = s.%s AND t.id = s.id", key, key)
	var b strings.Builder
	b.WriteString(childChangesSQL(c, join))
	fmt.Fprintf(&b, `INSERT INTO record_changes
SELECT s.account, '%[1]s', s.id, CASE WHEN t.id IS NULL THEN '_created' ELSE '_restored' END,
       NULL, NULL, s.last_seen_at, s.last_seen_run
FROM %[2]s s
LEFT JOIN %[3]s t ON %[4]s
WHERE t.deleted_upstream_at IS NOT NULL
   OR (t.id IS NULL AND EXISTS (SELECT 1 FROM %[5]s p, merge_ctx c
                               WHERE p.account = c.account AND p.first_seen_run <> c.run_id));
`, c.Table, temp, table, join, q(d.TableName()))
	gone := fmt.Sprintf(`WHERE t.account = c.account AND t.deleted_upstream_at IS NULL
  AND t.%[1]s IN (SELECT id FROM incoming WHERE %[2]s IS NOT NULL
                       AND id IN (SELECT id FROM merge_state WHERE derive))
  AND NOT EXISTS (SELECT 1 FROM %[3]s s WHERE s.%[1]s = t.%[1]s AND s.id = t.id);
`, key, arr, temp)
	fmt.Fprintf(&b, `
INSERT INTO record_changes
SELECT t.account, '%s', t.id, '_deleted', NULL, NULL, c.observed_at, c.run_id
FROM %s t, merge_ctx c
%s
UPDATE %s t SET deleted_upstream_at = c.observed_at
FROM merge_ctx c
%s`, c.Table, table, gone, table, gone)
	var set []string
	for _, f := range c.Fields {
		set = append(set, fmt.Sprintf("%s = s.%s", q(f.Col), q(f.Col)))
	}
	set = append(set, "raw = s.raw", "last_seen_run = s.last_seen_run", "last_seen_at = s.last_seen_at", "deleted_upstream_at = NULL")
	fmt.Fprintf(&b, `
MERGE INTO %s t
USING %s s
ON %s
WHEN MATCHED THEN UPDATE SET %s
WHEN NOT MATCHED THEN INSERT BY NAME;
`, table, temp, join, strings.Join(set, ", "))
	return b.String()
}

// childChangesSQL: a record_changes row per tracked column whose value differs from the stored
// child's, named by the child's table.
func childChangesSQL(c entity.Child, join string) string {
	if len(c.Changes) == 0 {
		return ""
	}
	value := func(side, col string) string {
		if f, _ := c.Field(col); f.Type != entity.Text {
			return side + "." + q(col) + "::VARCHAR"
		}
		return side + "." + q(col)
	}
	from := fmt.Sprintf("FROM %s s\nJOIN %s t ON %s", q(childTemp(c)), q(c.Table), join)
	if len(c.Changes) == 1 { // one column: no list to unnest
		col := c.Changes[0]
		return fmt.Sprintf(`INSERT INTO record_changes
SELECT s.account, '%s', s.id, '%s', %s, %s, s.last_seen_at, s.last_seen_run
%s
WHERE %s IS DISTINCT FROM %s;

`, c.Table, col, value("t", col), value("s", col), from, value("t", col), value("s", col))
	}
	chs := make([]string, len(c.Changes))
	for i, col := range c.Changes {
		chs[i] = fmt.Sprintf("{'field': '%s', 'old_value': %s, 'new_value': %s}", col, value("t", col), value("s", col))
	}
	return fmt.Sprintf(`INSERT INTO record_changes
SELECT s.account, '%s', s.id, u.ch.field, u.ch.old_value, u.ch.new_value, s.last_seen_at, s.last_seen_run
%s,
LATERAL UNNEST([
    %s
]) AS u(ch)
WHERE u.ch.old_value IS DISTINCT FROM u.ch.new_value;

`, c.Table, from, strings.Join(chs, ",\n    "))
}

// childProjection is what a generated parent projection adds for its children: each array in
// the JSON structure, its column, and the problem of an array that is none.
func childProjection(d *entity.Decl) (arrays, cols, problems []string) {
	for _, c := range d.Derived {
		a := jsonPath(c.Array)
		if !slices.Contains(arrays, c.Array) {
			arrays = append(arrays, c.Array)
		}
		cols = append(cols, fmt.Sprintf("CASE WHEN json_type(%s) = 'ARRAY' THEN %s END AS %s", a, a, q(childArray(c))))
		problems = append(problems, fmt.Sprintf("CASE WHEN %s IS NOT NULL AND json_type(%s) <> 'ARRAY' THEN '%s: not an array' END", a, a, c.Array))
	}
	return arrays, cols, problems
}

// handProjectionGivesChildren names each child whose array a hand-written projection of d does
// not give as its column: the declaration cannot say how a quirk of the record holds the array.
func handProjectionGivesChildren(d *entity.Decl, project string) []string {
	var missing []string
	for _, c := range d.Derived {
		if !regexp.MustCompile(`(?i)\bAS\s+"?` + childArray(c) + `"?[\s,]`).MatchString(project) {
			missing = append(missing, fmt.Sprintf("section \"project\" is written by hand, so it must give child table %s its array (%q in the record) as column %s: a JSON array, NULL when the record does not say",
				c.Table, c.Array, childArray(c)))
		}
	}
	return missing
}

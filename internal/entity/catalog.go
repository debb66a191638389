package entity

import (
	"fmt"
	"slices"
	"strings"
)

// The catalog: what lists the tables is derived from the declarations, so a new entity is
// counted, labelled and named when deleted without a line anywhere else.

// Labels are the reports' names of every declared table and detail read, keyed by the name a
// report shows (a table's, a detail's entity name): {Indonesian, English}.
func Labels(decls []*Decl) map[string][2]string {
	m := map[string][2]string{}
	for _, d := range decls {
		key := string(d.Name)
		if d.Rule != FillDetail {
			key = d.TableName()
		}
		m[key] = [2]string{d.Label.ID, d.Label.EN}
		for _, c := range d.Derived {
			m[c.Table] = [2]string{c.Label.ID, c.Label.EN}
		}
	}
	return m
}

// HeldRowsView is the name of the view RowsViewSQL creates.
const HeldRowsView = "entity_rows"

// RowsViewSQL creates the view of the rows each list's table holds per account, and how many of
// them are marked deleted upstream (dq_sync_health's rows): one branch per table a list writes.
func RowsViewSQL(decls []*Decl) string {
	var b strings.Builder
	b.WriteString("-- generated from internal/entity: the rows each list's table holds per account\n")
	b.WriteString("CREATE OR REPLACE VIEW " + HeldRowsView + " AS\n")
	for i, t := range listTables(decls) {
		if i > 0 {
			b.WriteString("UNION ALL ")
		}
		fmt.Fprintf(&b, "SELECT account, '%s' AS entity, count(*) AS rows, count(deleted_upstream_at) AS deleted_rows FROM %s GROUP BY ALL\n", t, t)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// DeletedLabelsView is the name of the view DeletedLabelsSQL creates.
const DeletedLabelsView = "deleted_record_labels"

// DeletedLabelsSQL creates the view naming each row ever marked deleted upstream (dq_deleted's
// label and amount): one branch per table a whole list or a child table writes. Only the rows with a
// `_deleted` change are read (the semi join), so labels are built for those and not for every
// record.
func DeletedLabelsSQL(decls []*Decl) string {
	type tbl struct{ table, label, amount string }
	var ts []tbl
	add := func(table string, fields []Field, deleted string) {
		if slices.ContainsFunc(ts, func(t tbl) bool { return t.table == table }) {
			return
		}
		t := tbl{table: table, label: deleted, amount: "NULL"}
		if f, ok := fieldOf(fields, "name"); t.label == "" && ok && f.Type == Text {
			t.label = "x.name"
		}
		if t.label == "" {
			t.label = "NULL"
		}
		if f, ok := fieldOf(fields, "amount"); ok && f.Type == Int {
			t.amount = "x.amount"
		}
		ts = append(ts, t)
	}
	for _, d := range decls {
		if d.Rule == FullRefresh {
			add(d.TableName(), d.Fields, d.Deleted)
		}
		// a child's rows are marked deleted when its parent's array shrinks, whatever the parent's rule
		for _, c := range d.Derived {
			add(c.Table, c.Fields, c.Deleted)
		}
	}
	var b strings.Builder
	b.WriteString("-- generated from internal/entity: what each row ever deleted upstream is called\n")
	b.WriteString("CREATE OR REPLACE VIEW " + DeletedLabelsView + " AS\n")
	for i, t := range ts {
		if i > 0 {
			b.WriteString("UNION ALL ")
		}
		fmt.Fprintf(&b, "SELECT x.account, '%[1]s' AS entity, x.id, (%[2]s)::VARCHAR AS label, (%[3]s)::BIGINT AS amount, x.first_seen_at, x.last_seen_at\n"+
			"FROM %[1]s x SEMI JOIN record_changes c ON c.account = x.account AND c.entity = '%[1]s' AND c.record_id = x.id AND c.field = '_deleted'\n",
			t.table, t.label, t.amount)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// listTables are the tables lists write, each once, in declaration order.
func listTables(decls []*Decl) []string {
	var ts []string
	for _, d := range decls {
		if d.Rule != FillDetail && !slices.Contains(ts, d.TableName()) {
			ts = append(ts, d.TableName())
		}
	}
	return ts
}

func fieldOf(fields []Field, col string) (Field, bool) {
	i := slices.IndexFunc(fields, func(f Field) bool { return f.Col == col })
	if i < 0 {
		return Field{}, false
	}
	return fields[i], true
}

package entity

import (
	"fmt"
	"strings"
)

// DocsTable is the Markdown table of the entity tables docs/warehouse.md shows: one row per
// table (a list's, then its child tables), its columns besides the common ones with what each
// declares of itself.
func DocsTable(decls []*Decl) string {
	var b strings.Builder
	b.WriteString("| table | one row per | columns (besides the common ones) |\n|---|---|---|\n")
	for _, d := range decls {
		if d.Rule == FillDetail {
			continue
		}
		cols := docColumns(d.Fields)
		for _, x := range decls {
			if x.Rule == FillDetail && x.Table == d.TableName() {
				detail := docColumns(x.Fields)
				if x.Doc != "" {
					detail += " (" + x.Doc + ")"
				}
				cols += ", " + detail
			}
		}
		if d.Doc != "" {
			cols += ". " + d.Doc
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s |\n", d.TableName(), d.Row, cols)
		for _, c := range d.Derived {
			cols := c.ParentKey + ", id, " + docColumns(c.Fields)
			if c.Doc != "" {
				cols += ". " + c.Doc
			}
			fmt.Fprintf(&b, "| `%s` | %s | %s |\n", c.Table, c.Row, cols)
		}
	}
	return b.String()
}

func docColumns(fields []Field) string {
	s := make([]string, len(fields))
	for i, f := range fields {
		var notes []string
		switch f.Type {
		case Number, JSON:
			notes = append(notes, string(f.Type))
		}
		if f.Doc != "" {
			notes = append(notes, f.Doc)
		}
		s[i] = f.Col
		if len(notes) > 0 {
			s[i] += " (" + strings.Join(notes, "; ") + ")"
		}
	}
	return strings.Join(s, ", ")
}

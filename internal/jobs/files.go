package jobs

import (
	"time"

	"github.com/billsync/billsync/internal/tablefile"
)

// WriteTableFile writes a plan or result table as .csv or .xlsx, by the path's extension, through the
// writer the reports use (tablefile): atomically, text a spreadsheet would run as a formula defused.
func WriteTableFile(path string, t *Table, o FileOptions) error {
	l := o.lang()
	return tablefile.Write(path, fileTable(t, l), tablefile.Options{Locale: string(l), Currency: o.Currency,
		Footer: t.Title + " · " + l.w("page_footer") + " " + clock(time.Now(), o.loc())})
}

// saysWhy are the columns that explain a row (an error, a reconciliation's evidence, a note): the workbook
// prints them only when a row of the file has something in them.
var saysWhy = map[string]bool{"error": true, "reconciled": true, "read": true, "missing": true, "settle": true, "note": true}

// fileTable is the table as the file writer takes it: each column's unit its number format, and the
// summary sheet's facts and its figures, the rows and amounts per product (or the kind's grouping) and
// their totals.
func fileTable(t *Table, l lang) *tablefile.Table {
	out := &tablefile.Table{Name: t.Name, Title: t.Title, Rows: t.Rows,
		Summary: tablefile.Summary{Name: l.w("sheet.summary"), Facts: t.Facts}}
	for _, c := range t.Columns {
		out.Columns = append(out.Columns, tablefile.Column{Title: c.Title, Format: string(c.Unit), Ref: c.Ref,
			ShortIDs: shortIDs[c.Key], Explains: saysWhy[c.Key]})
	}
	s := t.Summary
	if s == nil {
		return out
	}
	group := l.w("group")
	if s.GroupBy != "" {
		group = l.w("group." + s.GroupBy)
	}
	sum := &out.Summary
	sum.Head = []tablefile.Column{{Title: group}, {Title: l.w("rows"), Format: string(unitCount)},
		{Title: l.w("to_send"), Format: string(unitCount)}}
	if s.Unit != unitNone {
		sum.Head = append(sum.Head, tablefile.Column{Title: l.w("sum." + string(s.Unit)), Format: string(s.Unit)},
			tablefile.Column{Title: l.w("sum_to_send." + string(s.Unit)), Format: string(s.Unit)})
	}
	figures := func(name string, g *Group) []any {
		vals := []any{name, g.Rows, g.ToSend}
		if s.Unit != unitNone {
			vals = append(vals, g.Total, g.TotalToSend)
		}
		return vals
	}
	var total Group
	for _, g := range s.Groups {
		name := g.Name
		if name == "" {
			name = l.w("all")
		}
		sum.Rows = append(sum.Rows, figures(name, g))
		total.Rows, total.ToSend = total.Rows+g.Rows, total.ToSend+g.ToSend
		total.Total, total.TotalToSend = total.Total+g.Total, total.TotalToSend+g.TotalToSend
	}
	sum.Total = figures(l.w("total"), &total)
	return out
}

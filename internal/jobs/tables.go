package jobs

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// FileOptions say how the plan and result files and the printed summaries read.
type FileOptions struct {
	Locale   string         // id (default) or en: headers, labels, digit grouping
	Location *time.Location // every time is shown in it, its zone named; nil = UTC
	Currency string         // money cells' format; "" = IDR
}

func (o FileOptions) loc() *time.Location {
	if o.Location == nil {
		return time.UTC
	}
	return o.Location
}

func (o FileOptions) lang() lang { return langOf(o.Locale) }

// Column is one column of a plan or result file.
type Column struct {
	Key   string // stable: seq, state, send.amount, current.balance, result.balance …
	Title string // as printed, in the file's locale
	Unit  unit   // numbers of this unit; "" = text
	// Ref marks a reference column (IDs, links, the idempotency key): last, and out of a workbook's print
	// area, so the printed page keeps what a reviewer reads at a readable size.
	Ref bool
}

// Table is a plan or result as rows under a header. Numbers are digits (a decimal point at most), written
// as numbers into a workbook; everything else is text.
type Table struct {
	Name    string // the sheet's name
	Columns []Column
	Rows    [][]string
	Summary *Summary
	// Facts are the label/value lines of the workbook's summary sheet.
	Facts [][2]string
	Title string
}

// PlanTable is the plan as rows under a header: what will be sent and the values it will change. The
// request's fields keep the names of the input's columns, so a plan file can be planned again as it is.
func PlanTable(p *Plan, o FileOptions) *Table {
	l := o.lang()
	reqCols := fieldOrder(p, func(a *Action) map[string]string { return a.Request })
	curCols := fieldOrder(p, func(a *Action) map[string]string { return a.Current })
	t := &Table{Name: l.w("sheet.plan"), Summary: Summarize(p), Title: fmt.Sprintf(l.w("title.plan"), p.ID)}
	t.add(l, "seq", unitCount)
	t.add(l, "line", unitCount)
	t.add(l, "state", unitNone)
	t.add(l, "target", unitNone)
	t.add(l, "change", unitNone)
	type src struct {
		m   func(a *Action) string
		col Column
	}
	var cols []src
	for _, c := range reqCols {
		cols = append(cols, src{func(a *Action) string { return a.Request[c] },
			Column{Key: "send." + c, Title: c, Unit: fieldUnit(p.Kind, c), Ref: isReference(c)}})
	}
	for _, c := range curCols {
		if shownInTarget(p, c) {
			continue // the target says it already (the customer's and the product's names): no column repeats another
		}
		name := fmt.Sprintf(l.w("current"), c)
		if _, ok := words["current."+c]; ok {
			name = l.w("current." + c)
		}
		cols = append(cols, src{func(a *Action) string { return a.Current[c] },
			Column{Key: "current." + c, Title: name, Unit: fieldUnit(p.Kind, c), Ref: isReference(c)}})
	}
	cols = append(cols, src{func(a *Action) string { return planNote(p, a, l, o.loc()) }, Column{Key: "note", Title: l.w("note")}})
	// What a reviewer reads first, the references after it.
	sort.SliceStable(cols, func(i, k int) bool { return !cols[i].col.Ref && cols[k].col.Ref })
	for _, c := range cols {
		t.Columns = append(t.Columns, c.col)
	}
	t.Columns = append(t.Columns, Column{Key: "action_id", Title: l.w("action_id"), Ref: true})
	for _, a := range p.Actions {
		row := []string{strconv.Itoa(a.Seq), strconv.Itoa(a.Line), l.state(a.State), a.Target, planChange(p, a, l, o.loc())}
		for _, c := range cols {
			row = append(row, c.m(a))
		}
		t.Rows = append(t.Rows, append(row, a.ID))
	}
	t.Facts = planFacts(p, o)
	withRepeats(p, t, l, o.loc())
	return t
}

// shownInTarget says whether every row's warehouse value of a text field (a name) is part of its target
// already. Numbers are never taken as shown: "0" is part of many a target.
func shownInTarget(p *Plan, field string) bool {
	if fieldUnit(p.Kind, field) != unitNone {
		return false
	}
	for _, a := range p.Actions {
		v := a.Current[field]
		if !strings.ContainsFunc(v, unicode.IsLetter) || !strings.Contains(a.Target, v) {
			return false
		}
	}
	return len(p.Actions) > 0
}

// planNote explains a row in its state, in the file's language where billsync words it: a held row
// says why it is not sent and how to send it (what it repeats is in its own column).
func planNote(p *Plan, a *Action, l lang, loc *time.Location) string {
	if a.State == Held {
		return l.f("held.note")
	}
	return localTimes(note(a), loc)
}

// planChange is a row's change; a held row's, for a kind that journals the balance the service reports,
// is the balance as of the evidence it names: the one the service answered the earlier send with, or
// else the balance of the sync the plan was checked against, that sync named.
func planChange(p *Plan, a *Action, l lang, loc *time.Location) string {
	s, err := kindOf(p.Kind)
	if a.State != Held || err != nil || !s.traits().journalsBalance {
		return a.Change
	}
	if b := a.Detail["repeatOfBalance"]; b != "" {
		return l.f("held.balance", l.number(b), repeatWhen(a, l, loc))
	}
	if a.Detail["onService"] != "" {
		// held by the service's own record, synced: that sync's balance holds it
		return l.f("held.balance_service", l.number(a.Current["balance"]), clockOr(p.WarehouseSyncedAt, loc, l.w("never")))
	}
	return l.f("held.balance_sync", l.number(a.Current["balance"]), clockOr(p.WarehouseSyncedAt, loc, l.w("never")))
}

// repeatWhen is when the send a row repeats happened, as the journal knows it ("sent between … and …").
func repeatWhen(a *Action, l lang, loc *time.Location) string {
	at, err := time.Parse(time.RFC3339Nano, a.Detail["repeatOfSentAt"])
	if err != nil {
		return ""
	}
	answered, _ := time.Parse(time.RFC3339Nano, a.Detail["repeatOfAnsweredAt"])
	return l.sentWhen(at, answered, loc)
}

// repeatText is what a row repeats, in the file's language: plan, row, input line and file, when it was
// sent and how it ended. Rows journaled before these details were kept show the journal's words.
func repeatText(a *Action, l lang, loc *time.Location) string {
	d := a.Detail
	when := repeatWhen(a, l, loc)
	var parts []string
	switch {
	case d["repeatOfPlan"] != "" && when != "":
		file := ""
		if d["repeatOfFile"] != "" {
			file = l.f("of_file", d["repeatOfFile"])
		}
		s := l.f("repeat_of", d["repeatOfPlan"], d["repeatOfSeq"], d["repeatOfLine"], file, when, l.state(State(d["repeatOfState"])))
		if n, _ := strconv.Atoi(d["repeatOfN"]); n > 1 {
			s += l.f("and_more", l.group(int64(n-1)))
		}
		parts = append(parts, s)
	case d["onService"] == "" || l == "en":
		return localTimes(d["repeatOf"], loc) // the journal's words (an old row), or English records
	}
	switch {
	case d["onService"] == "":
	case l == "en":
		parts = append(parts, d["onService"])
	default:
		// the records by their IDs: the journal's description of them is English (it is in the CLI's)
		parts = append(parts, l.f("on_service", d["onServiceIds"]))
	}
	return strings.Join(parts, "; ")
}

// withRepeats adds the repeat columns when a row is held or marked to repeat: whether it may repeat, and the
// earlier send it repeats (plan, row, line, time, outcome). They go before the reference columns.
func withRepeats(p *Plan, t *Table, l lang, loc *time.Location) {
	has := false
	for _, a := range p.Actions {
		has = has || a.AllowRepeat || a.Detail["repeatOf"] != ""
	}
	if !has {
		return
	}
	at := len(t.Columns)
	for at > 0 && t.Columns[at-1].Ref {
		at--
	}
	cols := []Column{{Key: "repeat", Title: "repeat"}, {Key: "repeat_of", Title: l.w("repeat_of")}}
	t.Columns = append(t.Columns[:at], append(cols, t.Columns[at:]...)...)
	for i, a := range p.Actions {
		mark := ""
		if a.AllowRepeat {
			mark = "yes"
		}
		row := t.Rows[i]
		t.Rows[i] = append(row[:at:at], append([]string{mark, repeatText(a, l, loc)}, row[at:]...)...)
	}
}

// ResultTable is each action's outcome: state, error, and what the service answered (new balance, links).
// run is the run the file is written for (nil: the plan as it stands).
func ResultTable(p *Plan, run *Run, o FileOptions) *Table {
	l := o.lang()
	s, _ := kindOf(p.Kind)
	var results []string
	if s != nil {
		results = s.traits().results
	}
	n := 0
	if run != nil {
		n = run.N
	}
	t := &Table{Name: l.w("sheet.result"), Summary: Summarize(p), Title: fmt.Sprintf(l.w("title.result"), p.ID, n)}
	if run == nil {
		t.Title = fmt.Sprintf(l.w("title.plan"), p.ID)
	}
	t.add(l, "seq", unitCount)
	t.add(l, "line", unitCount)
	t.add(l, "target", unitNone)
	t.add(l, "state", unitNone)
	t.add(l, "sends", unitCount)
	t.add(l, "error", unitNone)
	var refs []string
	for _, c := range results {
		if isReference(c) {
			refs = append(refs, c)
			continue
		}
		t.Columns = append(t.Columns, Column{Key: "result." + c, Title: l.w("result." + c), Unit: fieldUnit(p.Kind, c)})
	}
	for _, k := range []string{"reconciled", "read", "missing", "settle", "note"} {
		t.add(l, k, unitNone)
	}
	for _, c := range refs {
		t.Columns = append(t.Columns, Column{Key: "result." + c, Title: c, Ref: true})
	}
	t.Columns = append(t.Columns, Column{Key: "action_id", Title: l.w("action_id"), Ref: true})
	for _, a := range p.Actions {
		row := []string{strconv.Itoa(a.Seq), strconv.Itoa(a.Line), a.Target, l.state(a.State), strconv.Itoa(a.Sends), a.Error}
		for _, c := range results {
			if !isReference(c) {
				row = append(row, a.Detail[c])
			}
		}
		loc := o.loc()
		row = append(row, localTimes(a.Detail["reconciled"], loc), localTimes(a.Detail["read"], loc),
			localTimes(a.Detail["missing"], loc), a.Detail["settle"], planNote(p, a, l, loc))
		for _, c := range refs {
			row = append(row, a.Detail[c])
		}
		t.Rows = append(t.Rows, append(row, a.ID))
	}
	t.Facts = planFacts(p, o)
	if run != nil {
		t.Facts = append(t.Facts,
			[2]string{l.w("run"), fmt.Sprintf(l.w("run_of"), run.N, run.ID, clock(run.Started, o.loc()), run.By)},
			[2]string{l.w("service"), run.BaseURL},
			[2]string{l.w("run_status"), l.runStatus(run.Status)},
			[2]string{l.w("sent_n"), l.group(int64(run.Sent))})
	}
	withRepeats(p, t, l, o.loc())
	return t
}

// isReference says whether a request, warehouse or result field is an ID or a link: a reference column.
func isReference(field string) bool {
	return field == "id" || field == "idProd" || field == "link" || strings.HasSuffix(field, "Id") ||
		strings.HasSuffix(field, "Url")
}

// shortIDs are the columns of people's text whose IDs a workbook shows by their start ("customer
// 00304804… (Made)"), as the reports do: the whole IDs are in the reference columns and the CSV.
var shortIDs = map[string]bool{"target": true, "change": true, "note": true, "reconciled": true, "read": true, "missing": true}

func (t *Table) add(l lang, key string, u unit) {
	t.Columns = append(t.Columns, Column{Key: key, Title: l.w(key), Unit: u})
}

// note explains a row in its state from its detail (noteKeys).
func note(a *Action) string {
	var parts []string
	for _, k := range noteKeys[a.State] {
		if v := a.Detail[k]; v != "" && v != a.Error {
			parts = append(parts, v)
		}
	}
	return strings.Join(parts, "; ")
}

// planFacts are the summary sheet's lines: what the plan is, who planned and approved it, for which service.
func planFacts(p *Plan, o FileOptions) [][2]string {
	l, loc := o.lang(), o.loc()
	facts := [][2]string{
		{l.w("plan"), p.ID}, {l.w("kind"), string(p.Kind)}, {l.w("account"), p.Account}, {l.w("input"), p.Input},
		{l.w("planned"), fmt.Sprintf(l.w("by_on"), clock(p.CreatedAt, loc), p.CreatedBy, p.Host)},
		{l.w("synced"), clockOr(p.WarehouseSyncedAt, loc, l.w("never"))},
		{l.w("approved"), approvalText(p, o)},
		{l.w("tz"), zone(p.CreatedAt, loc)},
		{l.w("states"), statesText(Summarize(p), l)},
	}
	return facts
}

func clockOr(t time.Time, loc *time.Location, never string) string {
	if t.IsZero() {
		return never
	}
	return clock(t, loc)
}

func approvalText(p *Plan, o FileOptions) string {
	l := o.lang()
	switch {
	case p.Approval != nil:
		a := p.Approval
		s := fmt.Sprintf(l.w("approved_by"), clock(a.At, o.loc()), a.By, targetText(l, a.BaseURL, a.Production))
		if a.Self {
			s += l.w("self")
		}
		return s
	case !p.ApprovedAt.IsZero():
		return fmt.Sprintf(l.w("old_approval"), clock(p.ApprovedAt, o.loc()), p.ApprovedBy)
	}
	return l.w("not_approved")
}

func targetText(l lang, baseURL string, production bool) string {
	if production {
		return fmt.Sprintf(l.w("production"), baseURL)
	}
	return fmt.Sprintf(l.w("not_production"), baseURL)
}

package jobs

import (
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
	"unicode"
	"unicode/utf8"
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

// Summary is what a plan adds up to: its rows per state, and per product (or the kind's other grouping) the
// rows and the total amount, all of them and those a run still sends.
type Summary struct {
	Kind    Kind
	Rows    int
	States  map[State]int
	GroupBy string // the Current field rows are grouped by; "" = one group
	Unit    unit   // of Total; "" = the kind sums no amount
	Groups  []*Group
}

// Group is one product's (or link's) share of a plan.
type Group struct {
	Name               string
	Rows, ToSend       int
	Total, TotalToSend float64
}

// measure is how a kind's rows add up: grouped by a warehouse value, summing an amount.
type measure struct {
	group string
	unit  unit
	value func(a *Action) (float64, bool)
}

func field(name string) func(a *Action) (float64, bool) {
	return func(a *Action) (float64, bool) {
		f, err := strconv.ParseFloat(a.Request[name], 64)
		return f, err == nil
	}
}

// Summarize adds a plan up.
func Summarize(p *Plan) *Summary {
	var m measure
	if s, err := kindOf(p.Kind); err == nil {
		m = s.traits().measure
	}
	s := &Summary{Kind: p.Kind, Rows: len(p.Actions), States: map[State]int{}, GroupBy: m.group, Unit: m.unit}
	by := map[string]*Group{}
	for _, a := range p.Actions {
		s.States[a.State]++
		name := ""
		if m.group != "" {
			name = a.Current[m.group]
		}
		g := by[name]
		if g == nil {
			g = &Group{Name: name}
			by[name] = g
			s.Groups = append(s.Groups, g)
		}
		g.Rows++
		open := stateTexts[a.State].toSend
		if open {
			g.ToSend++
		}
		if m.value != nil {
			if v, ok := m.value(a); ok {
				g.Total += v
				if open {
					g.TotalToSend += v
				}
			}
		}
	}
	sort.SliceStable(s.Groups, func(i, k int) bool { return s.Groups[i].Name < s.Groups[k].Name })
	return s
}

// ToSend is the rows a run still sends or first checks.
func (s *Summary) ToSend() int {
	n := 0
	for _, g := range s.Groups {
		n += g.ToSend
	}
	return n
}

func statesText(s *Summary, l lang) string {
	var parts []string
	for _, st := range stateOrder {
		if n := s.States[st]; n > 0 {
			parts = append(parts, l.group(int64(n))+" "+l.state(st))
		}
	}
	for st, n := range s.States { // a state missing from stateOrder still shows
		if _, known := stateTexts[st]; !known {
			parts = append(parts, l.group(int64(n))+" "+string(st))
		}
	}
	return l.group(int64(s.Rows)) + ": " + strings.Join(parts, ", ")
}

// fieldOrder lists the keys used by any action: the kind's input columns first, then the rest sorted.
func fieldOrder(p *Plan, m func(*Action) map[string]string) []string {
	seen := map[string]bool{}
	for _, a := range p.Actions {
		for k := range m(a) {
			seen[k] = true
		}
	}
	var out []string
	if s, err := kindOf(p.Kind); err == nil {
		for _, c := range s.traits().columns {
			if seen[c.name] {
				out = append(out, c.name)
				delete(seen, c.name)
			}
		}
	}
	var rest []string
	for k := range seen {
		rest = append(rest, k)
	}
	sort.Strings(rest)
	return append(out, rest...)
}

// PrintPlan writes a short human summary of a plan: header and up to limit actions (0 = all).
func PrintPlan(w io.Writer, p *Plan, limit int, o FileOptions) {
	l, loc := o.lang(), o.loc()
	fmt.Fprintf(w, "plan %s: %s, %s action(s), account %s, from %s\n", p.ID, p.Kind, l.group(int64(len(p.Actions))),
		p.Account, p.Input)
	fmt.Fprintf(w, "  planned %s by %s on %s; validated against the warehouse synced %s\n",
		clock(p.CreatedAt, loc), p.CreatedBy, p.Host, clock(p.WarehouseSyncedAt, loc))
	switch {
	case p.Approval != nil:
		a := p.Approval
		self := ""
		if a.Self {
			self = ", a self-approval (BILLSYNC_ALLOW_SELF_APPROVE)"
		}
		fmt.Fprintf(w, "  approved %s by %s for %s%s\n", clock(a.At, loc), a.By, describeTarget(a.BaseURL, a.Production), self)
	case !p.ApprovedAt.IsZero():
		fmt.Fprintf(w, "  approved %s by %s, for no recorded service: it is not sent until it is approved again\n",
			clock(p.ApprovedAt, loc), p.ApprovedBy)
	}
	if len(p.SkippedLines) > 0 {
		fmt.Fprintf(w, "  left out (blank toEmail): lines %s\n", joinInts(p.SkippedLines))
	}
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "  SEQ\tLINE\tSTATE\tTARGET\tCHANGE")
	for i, a := range p.Actions {
		if limit > 0 && i == limit {
			fmt.Fprintf(tw, "  …\t\t\t%s more in the plan file\t\n", l.group(int64(len(p.Actions)-limit)))
			break
		}
		change := a.Change
		if n := note(a); n != "" {
			change += " (" + localTimes(n, loc) + ")"
		}
		fmt.Fprintf(tw, "  %d\t%d\t%s\t%s\t%s\n", a.Seq, a.Line, a.State, a.Target, change)
	}
	tw.Flush()
	PrintHeld(w, p)
}

// PrintHeld lists the rows held as repeats of earlier sends, and the rows marked to repeat one.
func PrintHeld(w io.Writer, p *Plan) {
	held := 0
	for _, a := range p.Actions {
		switch {
		case a.State == Held:
			if held++; held == 1 {
				fmt.Fprintln(w, "  HELD, not sent: billsync already sent the same change, or the service's records show it "+
					"(write yes in a row's repeat column, or plan with -again, to send it anyway):")
			}
			fmt.Fprintf(w, "    row %d, line %d (%s): repeats %s\n", a.Seq, a.Line, a.Target, a.Detail["repeatOf"])
		case a.AllowRepeat && a.Detail["repeatOf"] != "" && (a.State == Planned || a.State == NotApplied):
			fmt.Fprintf(w, "    row %d, line %d (%s): marked to repeat %s\n", a.Seq, a.Line, a.Target, a.Detail["repeatOf"])
		}
	}
}

// PrintSummary writes what a plan adds up to: rows per state, and per product the rows and amounts, all and
// still to send; an approver reads it before approving. Names are aligned left, figures right.
func PrintSummary(w io.Writer, p *Plan, o FileOptions) {
	s := Summarize(p)
	l := o.lang()
	// the rows by state as every other line counts them (apply's "plan now", job list)
	fmt.Fprintf(w, "  rows: %s\n", p.Counts())
	group := "ALL ROWS"
	switch {
	case s.GroupBy == "productName":
		group = "PRODUCT"
	case s.GroupBy != "":
		group = strings.ToUpper(strings.TrimSuffix(s.GroupBy, "Name"))
	}
	head := []string{group, "ROWS", "TO SEND"}
	switch s.Unit {
	case unitCredit:
		head = append(head, "CREDIT", "CREDIT TO SEND")
	case unitRupiah:
		head = append(head, "RUPIAH", "RUPIAH TO SEND")
	}
	lines := [][]string{head}
	var total Group
	for _, g := range s.Groups {
		name := g.Name
		if name == "" {
			name = "(all)"
		}
		lines = append(lines, summaryLine(s, l, name, g))
		total.Rows, total.ToSend = total.Rows+g.Rows, total.ToSend+g.ToSend
		total.Total, total.TotalToSend = total.Total+g.Total, total.TotalToSend+g.TotalToSend
	}
	if len(s.Groups) > 1 {
		lines = append(lines, summaryLine(s, l, "total", &total))
	}
	widths := make([]int, len(head))
	for _, ln := range lines {
		for i, c := range ln {
			widths[i] = max(widths[i], utf8.RuneCountInString(c))
		}
	}
	for _, ln := range lines {
		var b strings.Builder
		b.WriteString("  ")
		for i, c := range ln {
			pad := strings.Repeat(" ", widths[i]-utf8.RuneCountInString(c))
			if i == 0 {
				b.WriteString(c + pad)
			} else {
				b.WriteString("  " + pad + c)
			}
		}
		fmt.Fprintln(w, b.String())
	}
}

func summaryLine(s *Summary, l lang, name string, g *Group) []string {
	ln := []string{name, l.group(int64(g.Rows)), l.group(int64(g.ToSend))}
	if s.Unit != unitNone {
		ln = append(ln, l.number(strconv.FormatFloat(g.Total, 'f', -1, 64)), l.number(strconv.FormatFloat(g.TotalToSend, 'f', -1, 64)))
	}
	return ln
}

// PrintResult writes a short human summary of a run: what this run did, and the plan's rows by state.
func PrintResult(w io.Writer, r *RunResult, o FileOptions) {
	if r.RunID == 0 {
		fmt.Fprintf(w, "plan %s: nothing to do, nothing to send: %s\n", r.Plan.ID, r.Counts)
		PrintUnresolved(w, r.Plan, o)
		PrintHeld(w, r.Plan)
		return
	}
	fmt.Fprintf(w, "run %d of plan %s (run %d in the journal): %s; sent %d, reconciled %d; this run: %s\n",
		r.PlanRun, r.Plan.ID, r.RunID, r.Status, r.Sent, r.Reconciled, r.Run)
	plan := r.Counts.String()
	if r.Stopped != "" && r.Planned > 0 {
		plan = strings.Replace(plan, "still planned", "still planned (not sent: "+r.Stopped+")", 1)
	}
	fmt.Fprintf(w, "  plan now: %s\n", plan)
	if r.Stopped != "" {
		fmt.Fprintf(w, "  stopped early: %s\n", r.Stopped)
	}
	PrintHeld(w, r.Plan)
	for _, a := range r.Plan.Actions {
		switch a.State {
		case Failed, Unknown, Sent:
			fmt.Fprintf(w, "  row %d, line %d (%s): %s %s\n", a.Seq, a.Line, a.Target, a.State, localTimes(a.Error, o.loc()))
			if v := a.Detail["waiting"]; v != "" && a.State == Unknown {
				fmt.Fprintf(w, "    %s\n", v)
			}
		case Unresolved:
			printUnresolved(w, r.Plan, a, o.loc())
		}
	}
}

// PrintUnresolved lists the plan's unresolved actions with what a person needs to settle each.
func PrintUnresolved(w io.Writer, p *Plan, o FileOptions) {
	for _, a := range p.Actions {
		if a.State == Unresolved {
			printUnresolved(w, p, a, o.loc())
		}
	}
}

// printUnresolved shows a person everything needed to settle an action by hand.
func printUnresolved(w io.Writer, p *Plan, a *Action, loc *time.Location) {
	fmt.Fprintf(w, "  row %d, line %d (%s): UNRESOLVED, not sent again: %s\n", a.Seq, a.Line, a.Target,
		localTimes(a.Detail["reconciled"], loc))
	if v := a.Detail["read"]; v != "" {
		fmt.Fprintf(w, "    read:    %s\n", localTimes(v, loc))
	}
	if v := a.Detail["missing"]; v != "" {
		fmt.Fprintf(w, "    missing: %s\n", localTimes(v, loc))
	}
	fmt.Fprintf(w, "    check on the service whether %s happened, then: %s\n", a.Change, ResolveCommand(p.ID, a.Seq))
}

// PrintHistory writes who did what to a plan: planned, approved (for which service), each run and each row
// settled by hand, times in the configured zone.
func PrintHistory(w io.Writer, p *Plan, runs []Run, res []Resolution, o FileOptions) {
	loc := o.loc()
	l := o.lang()
	fmt.Fprintf(w, "history of plan %s, times in %s:\n", p.ID, zone(p.CreatedAt, loc))
	fmt.Fprintf(w, "  planned   %s by %s on %s\n", clock(p.CreatedAt, loc), p.CreatedBy, p.Host)
	for _, a := range p.Approvals { // one per service it was approved for
		self := ""
		if a.Self {
			self = ", a self-approval (BILLSYNC_ALLOW_SELF_APPROVE)"
		}
		fmt.Fprintf(w, "  approved  %s by %s on %s for %s%s\n", clock(a.At, loc), a.By, a.Host,
			describeTarget(a.BaseURL, a.Production), self)
	}
	if p.Approval == nil && !p.ApprovedAt.IsZero() {
		fmt.Fprintf(w, "  approved  %s by %s for no recorded service (approve it again for it to be sent)\n",
			clock(p.ApprovedAt, loc), p.ApprovedBy)
	}
	for _, r := range runs {
		fmt.Fprintf(w, "  applied   %s by %s on %s: run %d of the plan (run %d in the journal) to %s, %s, sent %s\n",
			clock(r.Started, loc), r.By, r.Host, r.N, r.ID, r.BaseURL, r.Status, l.group(int64(r.Sent)))
	}
	for _, x := range res {
		on := ""
		if x.Host != "" {
			on = " on " + x.Host
		}
		fmt.Fprintf(w, "  resolved  %s by %s%s: row %d as %s: %q\n", clock(x.At, loc), x.By, on, x.Seq, x.State, x.Why)
	}
}

func joinInts(ns []int) string {
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ", ")
}

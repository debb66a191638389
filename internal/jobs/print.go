package jobs

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf8"
)

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

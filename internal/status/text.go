package status

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"syscall"
	"time"
)

// alive says whether a process with pid runs on this machine (in this process's namespace: a
// status run in another container sees no daemon, and says so by the state file's times).
func alive(pid int) bool {
	if pid <= 0 {
		return false
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// WriteText writes the report for a person: every time in loc, its zone named.
func (r *Report) WriteText(w io.Writer, loc *time.Location) {
	p := printer{w: w, loc: loc, now: r.At}
	zone := loc.String()
	if abbr, _ := r.At.In(loc).Zone(); abbr != zone {
		zone += ", " + abbr
	}
	fmt.Fprintf(w, "billsync status at %s (times in %s)\n", p.at(r.At), zone)
	for _, section := range []func(printer){r.writeSyncer, r.writeAccounts, r.writeTables, r.writeDeliveries,
		r.writeJobs, r.writeAlerts, r.writeNeeds} {
		section(p)
	}
}

// printer writes one section of the text: times in loc, ages from now.
type printer struct {
	w   io.Writer
	loc *time.Location
	now time.Time
}

func (p printer) at(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.In(p.loc).Format("2006-01-02 15:04 MST")
}

func (p printer) ago(t time.Time) string { return " (" + roughly(p.now.Sub(t)) + " ago)" }

func (p printer) f(format string, args ...any) { fmt.Fprintf(p.w, format, args...) }

func (r *Report) writeSyncer(p printer) {
	p.f("\nSyncer\n")
	s := r.Syncer
	switch {
	case s.Running && !s.RunningSince.IsZero():
		p.f("  %s, pid %d: a sync runs since %s%s\n", s.Mode, s.PID, p.at(s.RunningSince), p.ago(s.RunningSince))
	case s.Running:
		p.f("  %s, pid %d, started %s\n", s.Mode, s.PID, p.at(s.StartedAt))
	case s.Mode == "once":
		p.f("  no daemon runs; the last sync with -once started %s\n", p.at(s.StartedAt))
	case s.Mode != "" && !s.StoppedAt.IsZero():
		p.f("  no daemon runs; the last one stopped %s\n", p.at(s.StoppedAt))
	case s.Mode != "":
		p.f("  no daemon runs: pid %d, started %s, ended without stopping (killed?)\n", s.PID, p.at(s.StartedAt))
	default:
		p.f("  no syncer has run with this warehouse yet\n")
	}
	switch {
	case s.NextRun.IsZero():
	case s.Running && s.Mode == "daemon":
		p.f("  next scheduled sync: %s (in %s)\n", p.at(s.NextRun), roughly(s.NextRun.Sub(r.At)))
	default:
		p.f("  BILLSYNC_SCHEDULE's next tick: %s (in %s), for a daemon to take\n", p.at(s.NextRun), roughly(s.NextRun.Sub(r.At)))
	}
}

func (r *Report) writeAccounts(p printer) {
	p.f("\nAccounts\n")
	if len(r.Accounts) == 0 {
		p.f("  none synced yet\n")
	}
	for _, a := range r.Accounts {
		if pub := a.Published; pub != nil {
			p.f("  %-12s published run %d %s, finished %s%s, %d records\n", a.Name, pub.ID, pub.Status,
				p.at(pub.FinishedAt), p.ago(pub.FinishedAt), pub.Records)
		}
		if at := a.Attempt; at != nil && (a.Published == nil || at.ID != a.Published.ID || at.Status != a.Published.Status) {
			p.f("  %-12s latest attempt %s, finished %s%s\n", a.Name, at.Status, p.at(at.FinishedAt), p.ago(at.FinishedAt))
			if at.Problem != "" {
				p.f("  %-12s   %s\n", "", at.Problem)
			}
		}
		switch at := a.Attempt; {
		case at != nil && at.LakeBehind > 0:
			p.f("  %-12s lake: behind by %s since %s: %s\n", a.Name, runs(at.LakeBehind), p.at(at.LakeBehindSince), at.LakeError)
		case at != nil && at.Lake != "":
			p.f("  %-12s lake: %s\n", a.Name, at.Lake)
		}
	}
}

func (r *Report) writeTables(p printer) {
	if len(r.Tables) == 0 {
		return
	}
	p.f("\nTables (last complete read, and the records it read)\n")
	for _, t := range r.Tables {
		mark := ""
		if t.Stale {
			mark = "  STALE"
		}
		p.f("  %-12s %-26s %s%s %9d records%s\n", t.Account, t.Entity, p.at(t.LastComplete), p.ago(t.LastComplete), t.Records, mark)
	}
}

func (r *Report) writeDeliveries(p printer) {
	p.f("\nDeliveries\n")
	if len(r.Deliveries) == 0 {
		p.f("  none configured\n")
	}
	for _, d := range r.Deliveries {
		last := "never sent"
		if d.LastState != "" {
			last = fmt.Sprintf("last: as of %s, %s %s at %s", d.LastAsOf, d.LastKind, d.LastState, p.at(d.LastAt))
		}
		next := ""
		if !d.Next.IsZero() {
			next = "next " + p.at(d.Next) + "; "
		}
		p.f("  %-14s %s%s\n", d.Name, next, last)
		if d.Error != "" {
			p.f("  %-14s   %s\n", "", d.Error)
		}
	}
}

func (r *Report) writeJobs(p printer) {
	p.f("\nJob rows waiting for a person\n")
	if len(r.Jobs) == 0 {
		p.f("  none\n")
	}
	for _, j := range r.Jobs {
		var parts []string
		if j.Unresolved > 0 {
			parts = append(parts, fmt.Sprintf("%d unresolved", j.Unresolved))
		}
		if j.Unsettled > 0 {
			parts = append(parts, fmt.Sprintf("%d sent, outcome unknown", j.Unsettled))
		}
		if j.ToSend > 0 {
			parts = append(parts, fmt.Sprintf("%d to send, not approved (syncer job approve %s, or apply)", j.ToSend, j.Plan))
		}
		p.f("  plan %s (%s, %s, by %s %s): %s\n", j.Plan, j.Kind, j.Account, j.CreatedBy, p.at(j.CreatedAt), strings.Join(parts, ", "))
	}
}

func (r *Report) writeAlerts(p printer) {
	p.f("\nAlerts active\n")
	if len(r.Alerts) == 0 {
		p.f("  none\n")
	}
	for _, a := range r.Alerts {
		p.f("  %s since %s: %s\n", a.Key, p.at(a.Since), a.What)
	}
}

func (r *Report) writeNeeds(p printer) {
	p.f("\n")
	if len(r.Needs) == 0 {
		p.f("All is well: nothing needs a person.\n")
		return
	}
	p.f("Needs a person (%d):\n", len(r.Needs))
	for _, n := range r.Needs {
		p.f("  - %s\n", n)
	}
}

// roughly is a duration as a person says it: 3d 4h, 5h 10m, 12m, 40s.
func roughly(d time.Duration) string {
	if d < 0 {
		d = -d
	}
	switch {
	case d >= 48*time.Hour:
		return fmt.Sprintf("%dd %dh", d/(24*time.Hour), d%(24*time.Hour)/time.Hour)
	case d >= time.Hour:
		return fmt.Sprintf("%dh %dm", d/time.Hour, d%time.Hour/time.Minute)
	case d >= time.Minute:
		return fmt.Sprintf("%dm", d/time.Minute)
	}
	return fmt.Sprintf("%ds", d/time.Second)
}

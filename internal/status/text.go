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
	at := func(t time.Time) string {
		if t.IsZero() {
			return "-"
		}
		return t.In(loc).Format("2006-01-02 15:04 MST")
	}
	ago := func(t time.Time) string { return " (" + roughly(r.At.Sub(t)) + " ago)" }
	zone := loc.String()
	if abbr, _ := r.At.In(loc).Zone(); abbr != zone {
		zone += ", " + abbr
	}
	fmt.Fprintf(w, "billsync status at %s (times in %s)\n", at(r.At), zone)

	fmt.Fprintln(w, "\nSyncer")
	s := r.Syncer
	switch {
	case s.Running && !s.RunningSince.IsZero():
		fmt.Fprintf(w, "  %s, pid %d: a sync runs since %s%s\n", s.Mode, s.PID, at(s.RunningSince), ago(s.RunningSince))
	case s.Running:
		fmt.Fprintf(w, "  %s, pid %d, started %s\n", s.Mode, s.PID, at(s.StartedAt))
	case s.Mode == "once":
		fmt.Fprintf(w, "  no daemon runs; the last sync with -once started %s\n", at(s.StartedAt))
	case s.Mode != "" && !s.StoppedAt.IsZero():
		fmt.Fprintf(w, "  no daemon runs; the last one stopped %s\n", at(s.StoppedAt))
	case s.Mode != "":
		fmt.Fprintf(w, "  no daemon runs: pid %d, started %s, ended without stopping (killed?)\n", s.PID, at(s.StartedAt))
	default:
		fmt.Fprintln(w, "  no syncer has run with this warehouse yet")
	}
	switch {
	case s.NextRun.IsZero():
	case s.Running && s.Mode == "daemon":
		fmt.Fprintf(w, "  next scheduled sync: %s (in %s)\n", at(s.NextRun), roughly(s.NextRun.Sub(r.At)))
	default:
		fmt.Fprintf(w, "  BILLSYNC_SCHEDULE's next tick: %s (in %s), for a daemon to take\n", at(s.NextRun), roughly(s.NextRun.Sub(r.At)))
	}

	fmt.Fprintln(w, "\nAccounts")
	if len(r.Accounts) == 0 {
		fmt.Fprintln(w, "  none synced yet")
	}
	for _, a := range r.Accounts {
		if a.Published != nil {
			p := a.Published
			fmt.Fprintf(w, "  %-12s published run %d %s, finished %s%s, %d records\n", a.Name, p.ID, p.Status,
				at(p.FinishedAt), ago(p.FinishedAt), p.Records)
		}
		if at2 := a.Attempt; at2 != nil && (a.Published == nil || at2.ID != a.Published.ID || at2.Status != a.Published.Status) {
			fmt.Fprintf(w, "  %-12s latest attempt %s, finished %s%s\n", a.Name, at2.Status, at(at2.FinishedAt), ago(at2.FinishedAt))
			if at2.Problem != "" {
				fmt.Fprintf(w, "  %-12s   %s\n", "", at2.Problem)
			}
		}
	}

	if len(r.Tables) > 0 {
		fmt.Fprintln(w, "\nTables (last complete read, and the records it read)")
		for _, t := range r.Tables {
			mark := ""
			if t.Stale {
				mark = "  STALE"
			}
			fmt.Fprintf(w, "  %-12s %-26s %s%s %9d records%s\n", t.Account, t.Entity, at(t.LastComplete), ago(t.LastComplete), t.Records, mark)
		}
	}

	fmt.Fprintln(w, "\nDeliveries")
	if len(r.Deliveries) == 0 {
		fmt.Fprintln(w, "  none configured")
	}
	for _, d := range r.Deliveries {
		last := "never sent"
		if d.LastState != "" {
			last = fmt.Sprintf("last: as of %s, %s %s at %s", d.LastAsOf, d.LastKind, d.LastState, at(d.LastAt))
		}
		next := ""
		if !d.Next.IsZero() {
			next = "next " + at(d.Next) + "; "
		}
		fmt.Fprintf(w, "  %-14s %s%s\n", d.Name, next, last)
		if d.Error != "" {
			fmt.Fprintf(w, "  %-14s   %s\n", "", d.Error)
		}
	}

	fmt.Fprintln(w, "\nJob rows waiting for a person")
	if len(r.Jobs) == 0 {
		fmt.Fprintln(w, "  none")
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
		fmt.Fprintf(w, "  plan %s (%s, %s, by %s %s): %s\n", j.Plan, j.Kind, j.Account, j.CreatedBy, at(j.CreatedAt), strings.Join(parts, ", "))
	}

	fmt.Fprintln(w, "\nAlerts active")
	if len(r.Alerts) == 0 {
		fmt.Fprintln(w, "  none")
	}
	for _, a := range r.Alerts {
		fmt.Fprintf(w, "  %s since %s: %s\n", a.Key, at(a.Since), a.What)
	}

	fmt.Fprintln(w)
	if len(r.Needs) == 0 {
		fmt.Fprintln(w, "All is well: nothing needs a person.")
		return
	}
	fmt.Fprintf(w, "Needs a person (%d):\n", len(r.Needs))
	for _, n := range r.Needs {
		fmt.Fprintf(w, "  - %s\n", n)
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

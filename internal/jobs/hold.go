package jobs

import (
	"context"
	"fmt"
	"strings"

	"github.com/billsync/billsync/internal/warehouse"
)

// syncedTraces reads the service's records of the plan's changes from the warehouse as last synced.
func (r *run) syncedTraces() (*traceSet, error) {
	if r.o.Warehouse == "" || r.s.traces().query == "" {
		return &traceSet{rule: r.s.traces()}, nil
	}
	wh, err := warehouse.OpenReadOnly(r.jctx, r.o.Warehouse)
	if err != nil {
		return nil, fmt.Errorf("compare plan %s with the service's records as synced: %w", r.p.ID, err)
	}
	defer wh.Close()
	qs := make([]request, len(r.p.Actions))
	for i, a := range r.p.Actions {
		qs[i] = a.Request
	}
	return loadTraces(r.jctx, wh, r.s.traces(), r.p.Account, qs, r.o.Now().Add(-r.o.RepeatWindow-clockMargin), r.o.Location)
}

// holdOnService holds a row, right before it is sent, when the service's records show its change in the
// repeat window: as last synced, and (for a top-up) as read now. A row marked to repeat is held only by
// records it was not planned knowing; records at or after the row's own last send are its own effect, which
// the reconciliation settles, and records this plan's actions claimed are never another's.
func (r *run) holdOnService(ctx context.Context, a *Action) (bool, error) {
	if r.s.traits().readOnly {
		return false, nil
	}
	since := r.o.Now().Add(-r.o.RepeatWindow - clockMargin)
	found := r.ts.of(a.Request)
	if fresh := r.s.fresh(); fresh != nil {
		more, err := fresh(ctx, r.rc, a.Request, since)
		if err != nil {
			return false, fmt.Errorf("read the service before sending row %d (line %d), to compare it with what the service "+
				"already shows: %w; nothing was sent for it, run apply again", a.Seq, a.Line, err)
		}
		found = append(found, more...)
	}
	f := traceFilter{claimed: claimedBy(r.p)}
	if a.AllowRepeat {
		f.before = r.p.CreatedAt.Add(clockMargin)
		f.ack = map[string]bool{}
		for _, id := range strings.Fields(a.Detail["onServiceIds"]) {
			f.ack[id] = true
		}
	}
	if a.Sends > 0 {
		send, err := r.rc.sendMoment(r.jctx, a)
		if err != nil {
			return false, err
		}
		f.after = send.at
		if !send.server.IsZero() && send.server.Sub(send.at).Abs() <= ClockBound {
			f.after = minTime(f.after, send.server)
		}
		f.after = f.after.Add(-clockMargin)
	}
	found = f.keep(found)
	if len(found) == 0 {
		return false, nil
	}
	d := holdByTraces(nil, found, r.o.RepeatWindow, r.o.Location)
	r.o.Log.Warn("job row held: the service's records show the same change", "run", r.id, "plan", r.p.ID, "seq", a.Seq,
		"line", a.Line, "on_service", d["onService"])
	return true, r.transition(a, Held, d, "")
}

// recheck reads the service once more before sending an action a person resolved as not applied: a change
// that shows now (and did not when they resolved it) holds the action, unresolved, for them to look again.
func (r *run) recheck(ctx context.Context, a *Action) (hold bool, err error) {
	v, ev, err := r.rc.check(ctx, a)
	if err != nil {
		r.o.Log.Warn("job recheck failed", "run", r.id, "plan", r.p.ID, "seq", a.Seq, "err", err)
		return true, fmt.Errorf("read the service before sending row %d, which was resolved as not applied: %w", a.Seq, err)
	}
	seen := map[string]bool{}
	for _, id := range strings.Fields(a.Detail["candidates"]) {
		seen[id] = true
	}
	var fresh []string
	for _, c := range r.rc.found {
		if !seen[c.id] {
			fresh = append(fresh, c.what)
		}
	}
	if v != applied && len(fresh) == 0 {
		return false, nil
	}
	if ev == nil {
		ev = map[string]string{}
	}
	ev["reconciled"] = fmt.Sprintf("resolved as not applied by %s, but the read before sending shows %s", a.Detail["resolvedBy"],
		strings.Join(fresh, "; "))
	ev["missing"] = "whether this is the change after all: if it is, resolve the row as applied"
	r.reconciled++
	return true, r.unresolved(a, ev)
}

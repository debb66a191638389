package jobs

import (
	"context"
	"database/sql"
	"fmt"
	"sort"
	"strings"
	"time"
)

// The service's own records of a change, beside billsync's journal. The journal remembers only what billsync
// sent from this journal: a journal lost (deleted, restored from an old backup, a new machine) or a change made
// by hand in the service's dashboard leaves it blind. So a row is also compared with what the service itself
// shows, as last synced into the warehouse (at planning and again before sending) and, for a top-up, as a
// fresh read of the customer's credit history right before it is sent. A matching record in the repeat
// window holds the row, named (id, amount or value, time), whatever the journal remembers.

// trace is one record of the service that shows the change a row makes.
type trace struct {
	id    string
	at    time.Time // the record's own time (created, or when a sync saw the change), as the service dates it
	hi    time.Time // the latest it can be: later than at only for a time written without a zone
	what  string    // for people, without the time: "credit entry 65f… of 1000 (MERCHANT_TOPUP)"
	where string    // "in the warehouse, synced 2026-11-02 08:00 WIB", "in the service's credit history, read …"
}

// traceRow is one row of a kind's trace query: the key it was looked up by, the record, its time and four
// texts the kind compares.
type traceRow struct {
	key, id string
	at      time.Time
	f       [4]string
}

// traceRule is a kind's traceOf over the journal's requests, as the engine holds it (kind.traces).
type traceRule struct {
	kind  Kind                                       // whose rule it is
	query string                                     // section of queries/warehouse.sql; "" when none can show it
	key   func(q request) string                     // what the query looks a row up by
	match func(q request, t traceRow) (string, bool) // whether the record shows q's change, and how to name it
	none  string                                     // why no synced record can show the change (query "")
}

// traceSet is the synced records of a plan's rows in the repeat window, by key.
type traceSet struct {
	rule  traceRule
	byKey map[string][]traceRow
	where string
}

// loadTraces reads, from the warehouse wh (opened read-only), the records of the account that may show the
// change of one of the requests, created (or seen) since a time.
func loadTraces(ctx context.Context, wh *sql.DB, rule traceRule, account string, qs []request, since time.Time,
	loc *time.Location) (*traceSet, error) {
	ts := &traceSet{rule: rule, byKey: map[string][]traceRow{}}
	if ts.rule.query == "" || wh == nil || len(qs) == 0 {
		return ts, nil
	}
	var synced sql.NullTime
	if err := wh.QueryRowContext(ctx, warehouseSQL.Get("last_sync"), account).Scan(&synced); err != nil {
		return nil, fmt.Errorf("warehouse: last sync: %w", err)
	}
	ts.where = "in the warehouse, synced " + stamp(synced.Time.In(orUTC(loc)))
	seen := map[string]bool{}
	var keys []string
	for _, q := range qs {
		if k := ts.rule.key(q); k != "" && !seen[k] {
			seen[k] = true
			keys = append(keys, k)
		}
	}
	err := queryEach(ctx, wh, warehouseSQL.Get(ts.rule.query), func(r *sql.Rows) error {
		var t traceRow
		if err := r.Scan(&t.key, &t.id, &t.at, &t.f[0], &t.f[1], &t.f[2], &t.f[3]); err != nil {
			return err
		}
		ts.byKey[t.key] = append(ts.byKey[t.key], t)
		return nil
	}, account, since.UTC(), jsonList(keys))
	if err != nil {
		return nil, fmt.Errorf("warehouse: %s (the service's own records of earlier %s changes): %w", ts.rule.query, rule.kind, err)
	}
	return ts, nil
}

// of lists the synced records that show q's change.
func (ts *traceSet) of(q request) []trace {
	if ts == nil || ts.rule.query == "" {
		return nil
	}
	var out []trace
	for _, t := range ts.byKey[ts.rule.key(q)] {
		if what, ok := ts.rule.match(q, t); ok {
			out = append(out, trace{id: t.id, at: t.at, hi: t.at, what: what, where: ts.where})
		}
	}
	return out
}

// traceFilter is what of the service's records a row of a plan may not be held by.
type traceFilter struct {
	// before: a row marked to repeat (repeat = yes, -again) repeats what was there when it was planned: only
	// records dated surely after this (billsync's clock at planning, plus clockMargin) hold it. Zero: none is
	// acknowledged so.
	before time.Time
	// after: records that may be dated at or after this are the row's own effect (its last send, less
	// clockMargin); the reconciliation settles those, and a person's resolution, never the repeat check. Zero:
	// the row was never sent.
	after time.Time
	// claimed: records this plan's actions were found to have made; ack: the records a row marked to repeat
	// was planned knowing (its detail's onServiceIds), whatever their dates say.
	claimed, ack map[string]bool
}

// keep drops the records the filter says cannot hold the row, and sorts the rest oldest first.
func (f traceFilter) keep(ts []trace) []trace {
	var out []trace
	seen := map[string]bool{} // a record read from the warehouse and from the service is named once
	for _, t := range ts {
		switch {
		case seen[t.id+"\n"+t.what] || f.claimed[t.id] || f.ack[t.id]:
		case !f.before.IsZero() && !t.at.After(f.before):
		case !f.after.IsZero() && !t.hi.Before(f.after):
		default:
			seen[t.id+"\n"+t.what] = true
			out = append(out, t)
		}
	}
	sort.SliceStable(out, func(i, k int) bool { return out[i].at.Before(out[k].at) })
	return out
}

// traceText names the records for people, times in loc: "credit entry 65f… of 1000 (MERCHANT_TOPUP) at
// 2026-11-01 07:00 WIB (the warehouse, synced …)".
func traceText(ts []trace, loc *time.Location) string {
	parts := make([]string, len(ts))
	for i, t := range ts {
		parts[i] = fmt.Sprintf("%s at %s (%s)", t.what, t.at.In(orUTC(loc)).Format("2006-01-02 15:04 MST"), t.where)
	}
	return strings.Join(parts, "; ")
}

func traceIDs(ts []trace) string {
	ids := make([]string, len(ts))
	for i, t := range ts {
		ids[i] = t.id
	}
	return strings.Join(ids, " ")
}

// holdByTraces adds what the service's records show to a row's detail d (nil: not held by the journal): the
// records, and, when they hold the row, why and how to send it anyway.
func holdByTraces(d map[string]string, ts []trace, window time.Duration, loc *time.Location) map[string]string {
	if len(ts) == 0 {
		return d
	}
	if d == nil {
		d = map[string]string{}
	}
	text := traceText(ts, loc)
	if d["repeatOf"] != "" {
		d["repeatOf"] += "; " + text
	} else {
		d["repeatOf"] = text
	}
	d["onService"], d["onServiceIds"] = traceText(ts, loc), traceIDs(ts)
	if d["held"] == "" {
		d["held"] = serviceHeld(window)
	}
	return d
}

// claimedBy lists the records the plan's actions were found to have made (their reconciliation claimed them).
func claimedBy(p *Plan) map[string]bool {
	out := map[string]bool{}
	for _, a := range p.Actions {
		if id := a.Detail["claimed"]; id != "" {
			out[id] = true
		}
	}
	return out
}

func orUTC(loc *time.Location) *time.Location {
	if loc == nil {
		return time.UTC
	}
	return loc
}

// freshTracer reads the service now, cheaply, right before a row is sent, and returns its records of q's
// change created since a time (spec.fresh).
type freshTracer func(ctx context.Context, rc *reconciler, q request, since time.Time) ([]trace, error)

// windowText says a window in days when it is whole days.
func windowText(w time.Duration) string {
	if w%(24*time.Hour) == 0 {
		return fmt.Sprintf("%d days", w/(24*time.Hour))
	}
	return w.String()
}

// serviceHeld says why a row the service's records (and not billsync's journal) hold is not sent.
func serviceHeld(window time.Duration) string {
	return fmt.Sprintf("the service's own records show the same change within %s, which billsync's journal does not "+
		"account for (a lost or restored journal, or a change made in the service's dashboard): not sent; to send it "+
		"anyway write yes in its repeat column and plan the file again, or plan the whole file with -again", windowText(window))
}

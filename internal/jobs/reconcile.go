package jobs

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/billsync/billsync/internal/api"
	"github.com/billsync/billsync/internal/config"
	"github.com/billsync/billsync/internal/warehouse"
)

// verdict is what reading the service says about an action whose outcome was unknown.
//
// The rule: an unknown outcome may be sent again only when a complete read proves it did not happen: every
// page of the window read (the count the service reports matched, no page skipped or repeated), every time
// parsed, the identifying fields compared. List order and sortOrder are never relied on. Anything short of
// that is inconclusive: the action becomes unresolved and waits for a person (Journal.Resolve).
type verdict int

const (
	undetermined verdict = iota // the read failed (service unreachable): left unknown, read again next run
	applied                     // the change is there
	absent                      // a complete read proves the change is not there: sending it is safe
	inconclusive                // read, but it cannot prove either: unresolved, never sent again automatically
	// waiting: not found, but the settle interval since the send is not over: the service may still show it.
	// Left unknown, read again by a later run; never sent, never unresolved.
	waiting
)

// clockMargin widens "since the send" for clocks that disagree by a little (the Date header has seconds).
const clockMargin = time.Minute

// DefaultSettle is how long after a send a read that does not find the change is not taken as proof of its
// absence: a service may show a write in its lists some time after it made it. It is BILLSYNC_JOB_SETTLE's
// default (config.Jobs).
var DefaultSettle = config.Defaults[config.Jobs]().JobSettle

// ClockBound is how far the service's clock (its Date header) may be from billsync's for the times of its
// records to be placed against a send: further, and a read that depends on them is inconclusive.
const ClockBound = 5 * time.Minute

// scanPages bounds how far a reconciliation pages through a list; a longer list is inconclusive.
const scanPages = 2000

// readAttempts is how often a list is read again when the read came out inconsistent (records moved
// between pages while paging).
const readAttempts = 3

// reconciler reads the service to settle unknown outcomes.
type reconciler struct {
	j *Journal
	p *Plan
	// read is the kind's own reconciliation (spec.reconcile); settles says whether absence waits for the
	// settle interval (traits.settles).
	read    func(rc *reconciler, ctx context.Context, a *Action) (verdict, map[string]string, error)
	settles bool
	c       *api.Client
	now     func() time.Time // billsync's clock
	settle  time.Duration
	loc     *time.Location // zone of the times in messages (BILLSYNC_TZ)

	lists map[string]*listRead // one complete read of a list per batch of reconciliations, dropped after every send

	// found is what the last check read that may be the action's change (matched, after or around the
	// send, not another action's): a person's resolution may not contradict it.
	found []candidate
}

// candidate is a record a read found that may be the action's change.
type candidate struct {
	id   string
	what string // for people: "entry 65f… of 2500 at 2026-11-01 10:00 WIB"
}

// forget drops what was read, because a send may have changed it.
func (rc *reconciler) forget() { rc.lists = nil }

// list is the complete read of a list that rc.lists keeps (what names it), reading it when there is none.
func (rc *reconciler) list(what string, page func(n int) (*api.ListPage, error)) (*listRead, error) {
	if l := rc.lists[what]; l != nil {
		return l, nil
	}
	l, err := readAll(what, page)
	if err != nil {
		return nil, err
	}
	if rc.lists == nil {
		rc.lists = map[string]*listRead{}
	}
	rc.lists[what] = l
	return l, nil
}

// check settles a by the kind's own reconciliation. A read that finds nothing concludes absence only once
// the settle interval since the send is over (measured on billsync's clock); before, it is waiting.
func (rc *reconciler) check(ctx context.Context, a *Action) (verdict, map[string]string, error) {
	rc.found = nil
	v, ev, err := rc.read(rc, ctx, a)
	if err != nil || v != absent || !rc.settles {
		return v, ev, err
	}
	send, err := rc.sendMoment(ctx, a)
	if err != nil {
		return undetermined, ev, err
	}
	ev["settleInterval"] = rc.settle.String()
	if due := send.at.Add(rc.settle); rc.now().Before(due) {
		ev["waiting"] = fmt.Sprintf("not found yet, %s after the send; billsync concludes it is absent only %s after the send "+
			"(the service may show a write late): run apply again after %s", rc.now().Sub(send.at).Round(time.Second), rc.settle,
			rc.local(due))
		ev["checkAfter"] = due.UTC().Format(time.RFC3339)
		return waiting, ev, nil
	}
	return absent, ev, nil
}

// local shows a time in the zone people read (BILLSYNC_TZ).
func (rc *reconciler) local(t time.Time) string {
	loc := rc.loc
	if loc == nil {
		loc = time.UTC
	}
	return t.In(loc).Format("2006-01-02 15:04:05 MST")
}

// sent is the moment of an action's last send: billsync's clock, and the service's Date known then.
type sent struct {
	at     time.Time // billsync's clock (recorded_at), journaled before the request left
	server time.Time // the Date of the answer before the send; zero when none
	after  time.Time // the next transition, journaled after the answer (or its absence); zero when none
}

// when is the send's moment in words, in the zone people read: between the journal's times before and
// after it, never one instant (sentWhen).
func (s sent) when(loc *time.Location) string { return lang("en").sentWhen(s.at, s.after, loc) }

// since says from when the read counted records as the send's: the send's moment and the margin for clocks.
func (rc *reconciler) since(send sent, pl placed) string {
	return fmt.Sprintf("since the send (%s; records from %s on counted, %s before it for the clocks)",
		send.when(rc.loc), rc.local(pl.since), clockMargin)
}

func (rc *reconciler) sendMoment(ctx context.Context, a *Action) (sent, error) {
	var at, server, after sql.NullTime
	if err := rc.j.db.QueryRowContext(ctx, journalSQL.Get("last_send"), rc.p.ID, a.ID).Scan(&at, &server, &after); err != nil {
		return sent{}, fmt.Errorf("job journal: send time of action %d: %w", a.Seq, err)
	}
	if !at.Valid {
		return sent{}, fmt.Errorf("action %d was never journaled as sent", a.Seq)
	}
	return sent{at: at.Time, server: server.Time, after: after.Time}, nil
}

// placed is where a read stands against billsync's clock: since is the earliest time, by the service's clock,
// the action's effect can carry; serverNow the service's clock as the read's last answer gave it. doubt says
// why times cannot be placed at all.
type placed struct {
	since, serverNow time.Time
	doubt            string
}

// place anchors the send on billsync's clock and carries it to the service's by the Date of the answer
// just read, which must agree with billsync's clock within ClockBound (as must the Date journaled with
// the send, when there is one). Call it right after the read.
func (rc *reconciler) place(send sent) placed {
	now, date := rc.now(), rc.c.LastDate()
	if date.IsZero() {
		return placed{serverNow: now, doubt: "the service's answer carried no Date header: its clock cannot be compared with billsync's"}
	}
	skew := date.Sub(now)
	if skew.Abs() > ClockBound {
		return placed{serverNow: now, doubt: fmt.Sprintf("the service's clock (Date %s) is %s off billsync's (%s), more than the %s "+
			"within which the times of its records can be placed against the send", date.UTC().Format(time.RFC3339), skew.Abs().Round(time.Second),
			now.UTC().Format(time.RFC3339), ClockBound)}
	}
	since := send.at.Add(skew)
	// The Date known at the send, when it agrees with billsync's clock, may place the send a little earlier
	// on the service's clock; one that does not agree is one wild answer, and is not used.
	if !send.server.IsZero() && send.server.Sub(send.at).Abs() <= ClockBound {
		since = minTime(since, send.server)
	}
	return placed{since: since.Add(-clockMargin), serverNow: date}
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

// moment reads a record's time and judges it by the sync's rule (warehouse.ImplausibleTime): ok is false
// with a doubt for a time that is unreadable or implausible.
func (pl placed) moment(what, field string, raw json.RawMessage) (moment, string) {
	at, ok := parseMoment(raw)
	if !ok {
		return moment{}, fmt.Sprintf("%s has %s %s, which is not a time", what, field, string(raw))
	}
	for _, t := range []time.Time{at.lo, at.hi} {
		if msg := warehouse.ImplausibleTime(field, string(raw), t, pl.serverNow); msg != "" {
			return moment{}, what + ": " + msg
		}
	}
	return at, ""
}

func (rc *reconciler) claimed(ctx context.Context) (map[string]bool, error) {
	out := map[string]bool{}
	err := queryEach(ctx, rc.j.db, journalSQL.Get("claimed_ids"), func(r *sql.Rows) error {
		var id string
		err := r.Scan(&id)
		out[id] = true
		return err
	}, rc.p.Account, string(rc.p.Kind))
	if err != nil {
		return nil, fmt.Errorf("job journal: claimed records: %w", err)
	}
	return out, nil
}

// listRead is one complete read of a paged list, or why it is not complete.
type listRead struct {
	what       string
	items      []json.RawMessage
	pages      int
	total      int64  // what the service said, -1 when it did not
	incomplete string // "" when the read is complete
}

func (l *listRead) summary() string {
	s := fmt.Sprintf("%s: %d page(s), %d record(s)", l.what, l.pages, len(l.items))
	if l.total >= 0 {
		s += fmt.Sprintf(" (the service reported %d)", l.total)
	}
	return s
}

// readAll reads every page of a list. It is complete when the pages end (no more, or an empty page), no
// record was seen twice, and the distinct records number what the service reported; a read that moved under
// it is read again, up to readAttempts times.
func readAll(what string, page func(n int) (*api.ListPage, error)) (*listRead, error) {
	var l *listRead
	for attempt := 0; attempt < readAttempts; attempt++ {
		l = &listRead{what: what, total: -1}
		seen := map[string]bool{}
		dups := 0
		ended := false
		for n := 1; n <= scanPages; n++ {
			lp, err := page(n)
			if err != nil {
				return nil, fmt.Errorf("read %s page %d: %w", what, n, err)
			}
			l.pages = n
			l.total = lp.Total
			fresh := 0
			for _, raw := range lp.Items {
				var id struct {
					ID json.RawMessage `json:"id"`
				}
				key := string(raw)
				if json.Unmarshal(raw, &id) == nil && len(id.ID) > 0 && string(id.ID) != "null" {
					key = string(id.ID)
				}
				if seen[key] {
					dups++
					continue
				}
				seen[key] = true
				fresh++
				l.items = append(l.items, raw)
			}
			if len(lp.Items) == 0 || !lp.HasMore {
				ended = true
				break
			}
			if fresh == 0 { // a page of nothing new: the service ignores page, or the list loops
				break
			}
		}
		switch {
		case !ended && l.pages == scanPages:
			l.incomplete = fmt.Sprintf("the list did not end within %d pages", scanPages)
			return l, nil
		case !ended:
			l.incomplete = fmt.Sprintf("page %d held only records already read, yet the service said more follow", l.pages)
			return l, nil
		case l.total >= 0 && int64(len(l.items)) != l.total:
			l.incomplete = fmt.Sprintf("%d distinct records were read but the service reported %d (records moved while paging)",
				len(l.items), l.total)
		case dups > 0:
			l.incomplete = fmt.Sprintf("%d record(s) came twice (records moved while paging)", dups)
		default:
			return l, nil
		}
	}
	return l, nil
}

// moment is a time read from the service: exact, or (written without a zone) somewhere in [lo, hi].
type moment struct{ lo, hi time.Time }

// zoneSpan is how far a wall time without a zone can be from UTC: UTC-12 to UTC+14.
const (
	zoneEast = 14 * time.Hour
	zoneWest = 12 * time.Hour
)

// parseMoment reads a time as ISO 8601 in any of the forms services write (Z or an offset with or without a
// colon, with or without fractions), or epoch milliseconds. A time without a zone is placed nowhere more
// exactly than the span of all zones.
func parseMoment(raw json.RawMessage) (moment, bool) {
	var ms int64
	if err := json.Unmarshal(raw, &ms); err == nil && ms > 0 {
		t := time.UnixMilli(ms)
		return moment{t, t}, true
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return moment{}, false
	}
	s = strings.TrimSpace(s)
	if ms, err := strconv.ParseInt(s, 10, 64); err == nil && ms > 1e11 {
		t := time.UnixMilli(ms)
		return moment{t, t}, true
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999Z0700", "2006-01-02 15:04:05.999999999Z07:00",
		"2006-01-02 15:04:05.999999999Z0700"} {
		if t, err := time.Parse(layout, s); err == nil {
			return moment{t, t}, true
		}
	}
	for _, layout := range []string{"2006-01-02T15:04:05.999999999", "2006-01-02 15:04:05.999999999"} {
		if t, err := time.Parse(layout, s); err == nil {
			return moment{t.Add(-zoneEast), t.Add(zoneWest)}, true
		}
	}
	return moment{}, false
}

// when places a moment against the send: after it, before it, or either.
func (m moment) when(since time.Time) string {
	switch {
	case !m.lo.Before(since):
		return "after"
	case m.hi.Before(since):
		return "before"
	}
	return "either"
}

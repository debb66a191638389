package jobs

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"github.com/billsync/billsync/internal/config"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/billsync/billsync/internal/api"
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

// settles names the kinds whose reconciliation concludes absence from a read (and then sends again), so
// the settle interval holds for them; the others set absolute values or change nothing.
var settles = map[Kind]bool{CreditTopup: true, EmailFix: true, InvoiceCreate: true}

// scanPages bounds how far a reconciliation pages through a list; a longer list is inconclusive.
const scanPages = 2000

// readAttempts is how often a list is read again when the read came out inconsistent (records moved
// between pages while paging).
const readAttempts = 3

// reconciler reads the service to settle unknown outcomes.
type reconciler struct {
	j      *Journal
	p      *Plan
	s      *kindSpec
	c      *api.Client
	now    func() time.Time // billsync's clock
	settle time.Duration
	loc    *time.Location // zone of the times in messages (BILLSYNC_TZ)

	customers *listRead // e-mail fix: one complete read per batch of reconciliations, dropped after every send

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
func (rc *reconciler) forget() { rc.customers = nil }

// check settles a by the kind's own reconciliation. A read that finds nothing concludes absence only once
// the settle interval since the send is over (measured on billsync's clock); before, it is waiting.
func (rc *reconciler) check(ctx context.Context, a *Action) (verdict, map[string]string, error) {
	rc.found = nil
	v, ev, err := rc.s.reconcile(rc, ctx, a)
	if err != nil || v != absent || !settles[rc.p.Kind] {
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

// resendSafe is the reconciliation of a kind whose send may simply go again: it reads nothing.
func resendSafe(why string) func(*reconciler, context.Context, *Action) (verdict, map[string]string, error) {
	return func(*reconciler, context.Context, *Action) (verdict, map[string]string, error) {
		return absent, map[string]string{"reconciled": why}, nil
	}
}

// sent is the moment of an action's last send: billsync's clock, and the service's Date known then.
type sent struct {
	at     time.Time // billsync's clock (recorded_at)
	server time.Time // the Date of the answer before the send; zero when none
}

func (rc *reconciler) sendMoment(ctx context.Context, a *Action) (sent, error) {
	var at, server sql.NullTime
	if err := rc.j.db.QueryRowContext(ctx, journalSQL["last_send"], rc.p.ID, a.ID).Scan(&at, &server); err != nil {
		return sent{}, fmt.Errorf("job journal: send time of action %d: %w", a.Seq, err)
	}
	if !at.Valid {
		return sent{}, fmt.Errorf("action %d was never journaled as sent", a.Seq)
	}
	return sent{at: at.Time, server: server.Time}, nil
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
	err := queryEach(ctx, rc.j.db, journalSQL["claimed_ids"], func(r *sql.Rows) error {
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

type ledgerEntry struct {
	ID         string          `json:"id"`
	CreatedAt  json.RawMessage `json:"createdAt"`
	Credit     api.Float       `json:"credit"`
	Debit      api.Float       `json:"debit"`
	Amount     api.Float       `json:"amount"` // some answers carry one signed amount instead of credit and debit
	ProductID  string          `json:"productId"`
	CustomerID string          `json:"customerId"`
}

// topup looks for the top-up's ledger entry in the customer's whole credit history. Every entry must be
// provably this customer's (the spec gives each a customerId and a productId), readable once (no key
// twice) and carry a plausible time; anything else makes the read inconclusive, whatever it found.
// Entries that other journaled top-ups of the same customer, product and amount account for are not
// counted.
func (rc *reconciler) topup(ctx context.Context, a *Action) (verdict, map[string]string, error) {
	send, err := rc.sendMoment(ctx, a)
	if err != nil {
		return undetermined, nil, err
	}
	claimed, err := rc.claimed(ctx)
	if err != nil {
		return undetermined, nil, err
	}
	cust, prod := a.Request["customerId"], a.Request["productId"]
	amount, _ := strconv.ParseFloat(a.Request["amount"], 64)
	// No filters and no sort: the whole history is read and every entry compared here, so nothing depends on
	// how the service filters or orders it.
	l, err := readAll("credit history of customer "+cust, func(n int) (*api.ListPage, error) {
		return rc.c.CreditHistory(ctx, cust, url.Values{"page": {strconv.Itoa(n)}, "limit": {"100"}})
	})
	if err != nil {
		return undetermined, nil, err
	}
	pl := rc.place(send)
	type found struct {
		id string
		at time.Time
	}
	var hits []found
	var doubts []string
	if pl.doubt != "" {
		doubts = append(doubts, pl.doubt)
	}
	foreign := map[string]int{}
	for i, raw := range l.items {
		if key, dup := api.RepeatedKey(raw); dup {
			doubts = append(doubts, fmt.Sprintf("entry %d gives %q twice: it has no single reading", i+1, key))
			continue
		}
		var e ledgerEntry
		if err := json.Unmarshal(raw, &e); err != nil {
			doubts = append(doubts, fmt.Sprintf("entry %d cannot be read: %v", i+1, err))
			continue
		}
		name := "entry " + e.ID
		if e.ID == "" {
			name = fmt.Sprintf("entry %d", i+1)
		}
		switch {
		case e.CustomerID == "":
			doubts = append(doubts, name+" does not say whose it is (no customerId)")
			continue
		case e.CustomerID != cust:
			foreign[e.CustomerID]++
			continue
		case e.ProductID == "":
			doubts = append(doubts, name+" does not say its product (no productId)")
			continue
		}
		at, doubt := pl.moment(name, "createdAt", e.CreatedAt)
		if doubt != "" {
			doubts = append(doubts, doubt)
			continue
		}
		credit, debit := e.Credit, e.Debit
		if !credit.Valid && e.Amount.Valid {
			credit = api.Float{Value: max(e.Amount.Value, 0), Valid: true}
			debit = api.Float{Value: max(-e.Amount.Value, 0), Valid: true}
		}
		if e.ProductID != prod || claimed[e.ID] {
			continue
		}
		if credit.Valid && (credit.Value != amount || debit.Value != 0) {
			continue
		}
		if pl.doubt != "" {
			// times cannot be placed against the send: any such entry may be the change
			rc.found = append(rc.found, candidate{e.ID, fmt.Sprintf("entry %s of %s at %s", e.ID, a.Request["amount"], rc.local(at.lo))})
			continue
		}
		switch at.when(pl.since) {
		case "before":
			continue
		case "either":
			doubts = append(doubts, fmt.Sprintf("entry %s of %s at %s has no time zone: it may be before or after the send at %s",
				e.ID, a.Request["amount"], string(e.CreatedAt), pl.since.UTC().Format(time.RFC3339)))
			rc.found = append(rc.found, candidate{e.ID, fmt.Sprintf("entry %s of %s at %s (no time zone)", e.ID, a.Request["amount"],
				string(e.CreatedAt))})
			continue
		}
		if !credit.Valid {
			doubts = append(doubts, fmt.Sprintf("entry %s at %s lacks credit", e.ID, string(e.CreatedAt)))
			rc.found = append(rc.found, candidate{e.ID, fmt.Sprintf("entry %s at %s (amount not shown)", e.ID, rc.local(at.lo))})
			continue
		}
		hits = append(hits, found{e.ID, at.lo})
	}
	if len(foreign) > 0 {
		var who []string
		for c, n := range foreign {
			who = append(who, fmt.Sprintf("%d of customer %s", n, c))
		}
		sort.Strings(who)
		doubts = append([]string{fmt.Sprintf("the credit history of customer %s holds entries of other customers (%s): the service's "+
			"answer is not this customer's history", cust, strings.Join(who, ", "))}, doubts...)
	}
	var others int
	if err := rc.j.db.QueryRowContext(ctx, journalSQL["other_topups_since"], rc.p.Account, rc.p.ID, a.ID,
		cust, prod, a.Request["amount"], send.at.Add(-clockMargin)).Scan(&others); err != nil {
		return undetermined, nil, fmt.Errorf("job journal: other top-ups: %w", err)
	}
	ev := map[string]string{"read": l.summary(), "sentAt": send.at.UTC().Format(time.RFC3339)}
	sort.Slice(hits, func(i, k int) bool { return hits[i].at.Before(hits[k].at) })
	if len(hits) > others {
		for _, h := range hits {
			rc.found = append(rc.found, candidate{h.id, fmt.Sprintf("entry %s of %s at %s", h.id, a.Request["amount"], rc.local(h.at))})
		}
	}
	if l.incomplete != "" {
		doubts = append([]string{l.incomplete}, doubts...)
	}
	if len(doubts) > 0 {
		ev["reconciled"] = fmt.Sprintf("cannot prove whether the top-up of %s was applied", a.Request["amount"])
		ev["missing"] = strings.Join(doubts, "; ")
		return inconclusive, ev, nil
	}
	if len(hits) > others {
		// The oldest unaccounted entry since the send, by its own time (never by list position).
		ev["reconciled"] = "ledger entry found in the credit history"
		ev["claimed"], ev["ledgerCreatedAt"] = hits[0].id, hits[0].at.UTC().Format(time.RFC3339Nano)
		return applied, ev, nil
	}
	ev["reconciled"] = fmt.Sprintf("no unaccounted ledger entry of %s for product %s since %s in the complete history",
		a.Request["amount"], prod, pl.since.UTC().Format(time.RFC3339))
	return absent, ev, nil
}

// email reads every customer: the planned customer carrying toEmail means applied, still carrying fromEmail
// means absent; anything else needs a person.
func (rc *reconciler) email(ctx context.Context, a *Action) (verdict, map[string]string, error) {
	if rc.customers == nil {
		l, err := readAll("customer list", func(n int) (*api.ListPage, error) {
			return rc.c.List(ctx, "/hl/v1/customer", url.Values{"page": {strconv.Itoa(n)}, "pageSize": {"100"}})
		})
		if err != nil {
			return undetermined, nil, err
		}
		rc.customers = l
	}
	l := rc.customers
	ev := map[string]string{"read": l.summary()}
	ids := map[string]bool{}
	for _, id := range strings.Fields(a.Current["customerId"]) {
		ids[id] = true
	}
	var still, now, doubts []string
	seen := 0
	for i, raw := range l.items {
		if key, dup := api.RepeatedKey(raw); dup {
			doubts = append(doubts, fmt.Sprintf("customer %d of the list gives %q twice: it has no single reading", i+1, key))
			continue
		}
		var c struct {
			ID    string `json:"id"`
			Email string `json:"email"`
		}
		if err := json.Unmarshal(raw, &c); err != nil || c.ID == "" {
			doubts = append(doubts, fmt.Sprintf("customer %d of the list does not say who it is (no readable id)", i+1))
			continue
		}
		if !ids[c.ID] {
			continue
		}
		seen++
		switch {
		case strings.EqualFold(c.Email, a.Request["toEmail"]):
			now = append(now, c.ID)
		case strings.EqualFold(c.Email, a.Request["fromEmail"]):
			still = append(still, c.ID)
		}
	}
	for _, id := range now {
		rc.found = append(rc.found, candidate{id, "customer " + id + " has " + a.Request["toEmail"]})
	}
	if l.incomplete != "" {
		doubts = append([]string{l.incomplete}, doubts...)
	}
	switch {
	case len(doubts) > 0:
		ev["reconciled"] = "cannot prove whether the e-mail was changed"
		ev["missing"] = strings.Join(doubts, "; ")
		return inconclusive, ev, nil
	case len(now) > 0:
		ev["reconciled"] = "customer " + now[0] + " has the new e-mail"
		return applied, ev, nil
	case len(still) > 0:
		ev["reconciled"] = "customer " + still[0] + " still has the old e-mail"
		return absent, ev, nil
	case seen == 0:
		ev["reconciled"] = "cannot prove whether the e-mail was changed"
		ev["missing"] = "customer " + a.Current["customerId"] + " is not in the customer list"
		return inconclusive, ev, nil
	}
	ev["reconciled"] = "cannot prove whether the e-mail was changed"
	ev["missing"] = fmt.Sprintf("the customer has neither %s nor %s now", a.Request["fromEmail"], a.Request["toEmail"])
	return inconclusive, ev, nil
}

// invoice looks, in the whole invoice list, for an invoice with the same customer e-mail, name, description
// and amount created since the send and not already attributed to another action.
func (rc *reconciler) invoice(ctx context.Context, a *Action) (verdict, map[string]string, error) {
	send, err := rc.sendMoment(ctx, a)
	if err != nil {
		return undetermined, nil, err
	}
	claimed, err := rc.claimed(ctx)
	if err != nil {
		return undetermined, nil, err
	}
	amount := invoiceAmount(a.Request)
	l, err := readAll("invoice list", func(n int) (*api.ListPage, error) {
		return rc.c.List(ctx, "/hl/v1/invoice", url.Values{"page": {strconv.Itoa(n)}, "pageSize": {"100"}})
	})
	if err != nil {
		return undetermined, nil, err
	}
	pl := rc.place(send)
	since := pl.since
	type found struct {
		id string
		at time.Time
	}
	var hits []found
	var doubts []string
	if pl.doubt != "" {
		doubts = append(doubts, pl.doubt)
	}
	for i, raw := range l.items {
		if key, dup := api.RepeatedKey(raw); dup {
			doubts = append(doubts, fmt.Sprintf("invoice %d of the list gives %q twice: it has no single reading", i+1, key))
			continue
		}
		var inv struct {
			ID          string          `json:"id"`
			Amount      api.Int         `json:"amount"`
			CreatedAt   json.RawMessage `json:"createdAt"`
			Description *string         `json:"description"`
			Name        *string         `json:"name"`
			Customer    *struct {
				Email *string `json:"email"`
			} `json:"customer"`
		}
		if err := json.Unmarshal(raw, &inv); err != nil {
			doubts = append(doubts, fmt.Sprintf("invoice %d of the list cannot be read: %v", i+1, err))
			continue
		}
		// Every time in the read must be plausible, the invoice ours or not: the sync refuses the same page.
		at, doubt := pl.moment("invoice "+inv.ID, "createdAt", inv.CreatedAt)
		if doubt != "" {
			doubts = append(doubts, doubt)
			continue
		}
		if claimed[inv.ID] {
			continue
		}
		// Compare what the invoice shows; a field it does not show cannot rule it out.
		var lacks []string
		same := func(name string, ok, present bool) bool {
			if !present {
				lacks = append(lacks, name)
				return true
			}
			return ok
		}
		email := ""
		if inv.Customer != nil && inv.Customer.Email != nil {
			email = *inv.Customer.Email
		}
		if !same("amount", inv.Amount.Value == amount, inv.Amount.Valid) ||
			!same("description", inv.Description != nil && *inv.Description == a.Request["description"], inv.Description != nil) ||
			!same("name", inv.Name != nil && *inv.Name == a.Request["name"], inv.Name != nil) ||
			!same("customer e-mail", strings.EqualFold(email, a.Request["email"]), email != "") {
			continue
		}
		if pl.doubt != "" {
			rc.found = append(rc.found, candidate{inv.ID, fmt.Sprintf("invoice %s created %s", inv.ID, rc.local(at.lo))})
			continue
		}
		switch at.when(since) {
		case "before":
			continue
		case "either":
			doubts = append(doubts, fmt.Sprintf("invoice %s at %s has no time zone: it may be before or after the send", inv.ID,
				string(inv.CreatedAt)))
			rc.found = append(rc.found, candidate{inv.ID, fmt.Sprintf("invoice %s created %s (no time zone)", inv.ID, string(inv.CreatedAt))})
			continue
		}
		rc.found = append(rc.found, candidate{inv.ID, fmt.Sprintf("invoice %s created %s", inv.ID, rc.local(at.lo))})
		if len(lacks) > 0 {
			doubts = append(doubts, fmt.Sprintf("invoice %s lacks %s", inv.ID, strings.Join(lacks, " and ")))
			continue
		}
		hits = append(hits, found{inv.ID, at.lo})
	}
	ev := map[string]string{"read": l.summary(), "sentAt": send.at.UTC().Format(time.RFC3339)}
	if l.incomplete != "" {
		doubts = append([]string{l.incomplete}, doubts...)
	}
	if len(hits) > 0 && len(doubts) == 0 {
		sort.Slice(hits, func(i, k int) bool { return hits[i].at.Before(hits[k].at) })
		ev["reconciled"], ev["claimed"], ev["invoiceId"] = "invoice found in the invoice list", hits[0].id, hits[0].id
		return applied, ev, nil
	}
	if len(doubts) > 0 {
		ev["reconciled"] = "cannot prove whether the invoice was created"
		ev["missing"] = strings.Join(doubts, "; ")
		return inconclusive, ev, nil
	}
	ev["reconciled"] = "no matching invoice created since " + since.UTC().Format(time.RFC3339) + " in the complete invoice list"
	return absent, ev, nil
}

// payment reads the payment request: the edit sets absolute values, so it is applied when they are there,
// and sending it again is harmless when they are not.
func (rc *reconciler) payment(ctx context.Context, a *Action) (verdict, map[string]string, error) {
	raw, err := rc.c.Detail(ctx, "/hl/v1/payment/"+url.PathEscape(a.Request["id"]))
	if err != nil {
		return undetermined, nil, fmt.Errorf("read payment request %s: %w", a.Request["id"], err)
	}
	var d struct {
		Name        string  `json:"name"`
		Amount      api.Int `json:"amount"`
		Description string  `json:"description"`
	}
	if err := json.Unmarshal(raw, &d); err != nil {
		return undetermined, nil, fmt.Errorf("payment request %s: %w", a.Request["id"], err)
	}
	ev := map[string]string{"read": "payment request " + a.Request["id"]}
	if d.Name == a.Request["name"] && strconv.FormatInt(d.Amount.Value, 10) == a.Request["amount"] &&
		d.Description == a.Request["description"] {
		ev["reconciled"] = "the payment request carries the new values"
		rc.found = append(rc.found, candidate{a.Request["id"], "payment request " + a.Request["id"] + " carries the new values"})
		return applied, ev, nil
	}
	ev["reconciled"] = "the payment request does not carry the new values; the edit sets absolute values, so it is sent again"
	return absent, ev, nil
}

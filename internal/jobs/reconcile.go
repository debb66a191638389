package jobs

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/billsync/billsync/internal/api"
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
)

// clockMargin widens "since the send" for clocks that disagree by a little (the Date header has seconds).
const clockMargin = time.Minute

// scanPages bounds how far a reconciliation pages through a list; a longer list is inconclusive.
const scanPages = 2000

// readAttempts is how often a list is read again when the read came out inconsistent (records moved
// between pages while paging).
const readAttempts = 3

// reconciler reads the service to settle unknown outcomes.
type reconciler struct {
	j *Journal
	p *Plan
	s *kindSpec
	c *api.Client

	customers *listRead // e-mail fix: one complete read per batch of reconciliations, dropped after every send
}

// forget drops what was read, because a send may have changed it.
func (rc *reconciler) forget() { rc.customers = nil }

// check settles a by the kind's own reconciliation.
func (rc *reconciler) check(ctx context.Context, a *Action) (verdict, map[string]string, error) {
	return rc.s.reconcile(rc, ctx, a)
}

// resendSafe is the reconciliation of a kind whose send may simply go again: it reads nothing.
func resendSafe(why string) func(*reconciler, context.Context, *Action) (verdict, map[string]string, error) {
	return func(*reconciler, context.Context, *Action) (verdict, map[string]string, error) {
		return absent, map[string]string{"reconciled": why}, nil
	}
}

// since is the earliest time the action's effect can carry: its last send by the service's clock.
func (rc *reconciler) since(ctx context.Context, a *Action) (time.Time, error) {
	var t sql.NullTime
	if err := rc.j.db.QueryRowContext(ctx, journalSQL["last_sent_at"], rc.p.ID, a.ID).Scan(&t); err != nil {
		return time.Time{}, fmt.Errorf("job journal: send time of action %d: %w", a.Seq, err)
	}
	if !t.Valid {
		return time.Time{}, fmt.Errorf("action %d was never journaled as sent", a.Seq)
	}
	return t.Time.Add(-clockMargin), nil
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
	ID        string          `json:"id"`
	CreatedAt json.RawMessage `json:"createdAt"`
	Credit    api.Float       `json:"credit"`
	Debit     api.Float       `json:"debit"`
	Amount    api.Float       `json:"amount"` // some answers carry one signed amount instead of credit and debit
	ProductID string          `json:"productId"`
}

// topup looks for the top-up's ledger entry in the customer's whole credit history. Entries that other
// journaled top-ups of the same customer, product and amount account for are not counted.
func (rc *reconciler) topup(ctx context.Context, a *Action) (verdict, map[string]string, error) {
	since, err := rc.since(ctx, a)
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
	type found struct {
		id string
		at time.Time
	}
	var hits []found
	var doubts []string
	for i, raw := range l.items {
		var e ledgerEntry
		if err := json.Unmarshal(raw, &e); err != nil {
			doubts = append(doubts, fmt.Sprintf("entry %d cannot be read: %v", i+1, err))
			continue
		}
		credit, debit := e.Credit, e.Debit
		if !credit.Valid && e.Amount.Valid {
			credit = api.Float{Value: max(e.Amount.Value, 0), Valid: true}
			debit = api.Float{Value: max(-e.Amount.Value, 0), Valid: true}
		}
		if e.ProductID != "" && e.ProductID != prod || claimed[e.ID] {
			continue
		}
		if credit.Valid && (credit.Value != amount || debit.Value != 0) {
			continue
		}
		// A candidate by what it shows; whatever it does not show is a doubt.
		var lacks []string
		if e.ProductID == "" {
			lacks = append(lacks, "productId")
		}
		if !credit.Valid {
			lacks = append(lacks, "credit")
		}
		at, ok := parseMoment(e.CreatedAt)
		if !ok {
			doubts = append(doubts, fmt.Sprintf("entry %s has createdAt %s, which is not a time", e.ID, string(e.CreatedAt)))
			continue
		}
		switch at.when(since) {
		case "before":
			continue
		case "either":
			doubts = append(doubts, fmt.Sprintf("entry %s of %s at %s has no time zone: it may be before or after the send at %s",
				e.ID, a.Request["amount"], string(e.CreatedAt), since.UTC().Format(time.RFC3339)))
			continue
		}
		if len(lacks) > 0 {
			doubts = append(doubts, fmt.Sprintf("entry %s at %s lacks %s", e.ID, string(e.CreatedAt), strings.Join(lacks, " and ")))
			continue
		}
		hits = append(hits, found{e.ID, at.lo})
	}
	var others int
	if err := rc.j.db.QueryRowContext(ctx, journalSQL["other_topups_since"], rc.p.Account, rc.p.ID, a.ID,
		cust, prod, a.Request["amount"], since).Scan(&others); err != nil {
		return undetermined, nil, fmt.Errorf("job journal: other top-ups: %w", err)
	}
	ev := map[string]string{"read": l.summary()}
	if len(hits) > others {
		// The oldest unaccounted entry since the send, by its own time (never by list position).
		sort.Slice(hits, func(i, k int) bool { return hits[i].at.Before(hits[k].at) })
		ev["reconciled"] = "ledger entry found in the credit history"
		ev["claimed"], ev["ledgerCreatedAt"] = hits[0].id, hits[0].at.UTC().Format(time.RFC3339Nano)
		return applied, ev, nil
	}
	if l.incomplete != "" {
		doubts = append([]string{l.incomplete}, doubts...)
	}
	if len(doubts) > 0 {
		ev["reconciled"] = fmt.Sprintf("cannot prove whether the top-up of %s was applied", a.Request["amount"])
		ev["missing"] = strings.Join(doubts, "; ")
		return inconclusive, ev, nil
	}
	ev["reconciled"] = fmt.Sprintf("no unaccounted ledger entry of %s for product %s since %s in the complete history",
		a.Request["amount"], prod, since.UTC().Format(time.RFC3339))
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
	var still, now []string
	seen := 0
	for _, raw := range l.items {
		var c struct{ ID, Email string }
		if err := json.Unmarshal(raw, &c); err != nil || !ids[c.ID] {
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
	switch {
	case len(now) > 0:
		ev["reconciled"] = "customer " + now[0] + " has the new e-mail"
		return applied, ev, nil
	case l.incomplete != "":
		ev["reconciled"] = "cannot prove whether the e-mail was changed"
		ev["missing"] = l.incomplete
		return inconclusive, ev, nil
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
	since, err := rc.since(ctx, a)
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
	type found struct {
		id string
		at time.Time
	}
	var hits []found
	var doubts []string
	for i, raw := range l.items {
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
		at, ok := parseMoment(inv.CreatedAt)
		if !ok {
			doubts = append(doubts, fmt.Sprintf("invoice %s has createdAt %s, which is not a time", inv.ID, string(inv.CreatedAt)))
			continue
		}
		switch at.when(since) {
		case "before":
			continue
		case "either":
			doubts = append(doubts, fmt.Sprintf("invoice %s at %s has no time zone: it may be before or after the send", inv.ID,
				string(inv.CreatedAt)))
			continue
		}
		if len(lacks) > 0 {
			doubts = append(doubts, fmt.Sprintf("invoice %s lacks %s", inv.ID, strings.Join(lacks, " and ")))
			continue
		}
		hits = append(hits, found{inv.ID, at.lo})
	}
	ev := map[string]string{"read": l.summary()}
	if len(hits) > 0 {
		sort.Slice(hits, func(i, k int) bool { return hits[i].at.Before(hits[k].at) })
		ev["reconciled"], ev["claimed"], ev["invoiceId"] = "invoice found in the invoice list", hits[0].id, hits[0].id
		return applied, ev, nil
	}
	if l.incomplete != "" {
		doubts = append([]string{l.incomplete}, doubts...)
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
		return applied, ev, nil
	}
	ev["reconciled"] = "the payment request does not carry the new values; the edit sets absolute values, so it is sent again"
	return absent, ev, nil
}

package jobs

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/billsync/billsync/internal/api"
)

// CreditTopup adds credit to customers: POST /credit/v1/credit/customer/add-credit.
const CreditTopup Kind = "credit-topup"

// creditTopup adds an amount of a credit-usage product's credit to a customer. Its success carries the
// customer's new balance, which the credit report reads from the journal.
type creditTopup struct{}

// topupArgs is a row of a credit-topup file. A row naming the customer by e-mail has its id once checked;
// the journal keeps the id only.
type topupArgs struct {
	CustomerID    string `json:"customerId"`
	CustomerEmail string `json:"customerEmail,omitempty"`
	ProductID     string `json:"productId"`
	Amount        whole  `json:"amount"`
}

func (creditTopup) spec() spec[topupArgs] {
	return spec[topupArgs]{name: CreditTopup, traits: traits{
		columns: []column{
			{"customerId", false, "the customer's id (or give customerEmail instead)"},
			{"customerEmail", false, "the customer's e-mail, when the file has no customerId; must match one customer"},
			{"productId", true, "a credit-usage product (subType credit_usage)"},
			{"amount", true, "credit to add: a whole number above zero"},
		},
		oneOf:           [][]string{{"customerId", "customerEmail"}},
		results:         []string{"balance", "message"},
		units:           map[string]unit{"amount": unitCredit, "balance": unitCredit},
		group:           "productName",
		unit:            unitCredit,
		settles:         true,
		journalsBalance: true,
	},
		amount:    func(a topupArgs) float64 { return float64(a.Amount) },
		reconcile: creditTopup{}.reconcile,
		traces:    creditTopup{}.traces(),
		fresh:     creditTopup{}.freshTraces,
	}
}

func (creditTopup) parse(r *rowReader) (topupArgs, bool) {
	a := topupArgs{ProductID: r.text("productId"), Amount: r.whole("amount")}
	if id := r.get("customerId"); id != "" || !r.has("customerEmail") {
		a.CustomerID = r.text("customerId")
	} else {
		a.CustomerEmail = r.email("customerEmail")
	}
	return a, true
}

func (a topupArgs) refs(k *keys) {
	if a.CustomerID != "" {
		k.customerIDs = append(k.customerIDs, a.CustomerID)
	}
	if a.CustomerEmail != "" {
		k.emails = append(k.emails, a.CustomerEmail)
	}
	k.productIDs = append(k.productIDs, a.ProductID)
	k.balances = true
}

func (creditTopup) check(a topupArgs, w *world, r *rowReader) (topupArgs, described) {
	c, ok := resolveCustomer(&a, w, r)
	p, pok := w.products[a.ProductID]
	switch {
	case !pok:
		r.fail("productId", "no product %q in the warehouse (synced %s)", a.ProductID, stamp(w.syncedAt))
	case !p.creditUsage():
		r.fail("productId", "product %s (%s) is %s/%s, not a credit-usage product", p.id, p.name, p.typ, orNull(p.subType))
	case p.status == "deleted":
		r.fail("productId", "product %s (%s) is deleted", p.id, p.name)
	}
	if !ok || !pok {
		return a, described{}
	}
	bal := cleanNumber(w.balances[[2]string{c.id, p.id}])
	after := "?"
	if b, err := strconv.ParseFloat(bal, 64); err == nil {
		after = strconv.FormatFloat(b+float64(a.Amount), 'f', -1, 64)
	}
	return a, described{r.lang.f("target.customer_of", c.id, c.name, p.name),
		r.lang.f("change.balance", r.lang.number(bal), r.lang.number(after), r.lang.number(a.Amount.String())),
		map[string]string{"balance": bal, "customerName": c.name, "customerEmail": c.email, "productName": p.name}}
}

func (a topupArgs) unique() []dupKey {
	return []dupKey{{"productId", "a top-up of customer " + a.CustomerID + " for product " + a.ProductID}}
}

func (a topupArgs) repeatKey() string {
	return fmt.Sprintf("customer %s product %s amount %s", a.CustomerID, a.ProductID, a.Amount.String())
}

func (creditTopup) send(ctx context.Context, c *api.Client, a topupArgs) (map[string]string, error) {
	out, err := c.AddCredit(ctx, api.AddCreditRequest{CustomerID: a.CustomerID, ProductID: a.ProductID, Amount: int64(a.Amount)})
	if err != nil {
		return nil, err
	}
	res := map[string]string{"message": out.Message}
	if out.CustomerBalance.Valid {
		res["balance"] = strconv.FormatInt(out.CustomerBalance.Value, 10)
	}
	return res, nil
}

// resolveCustomer completes a's customer id from its e-mail when needed.
func resolveCustomer(a *topupArgs, w *world, r *rowReader) (customer, bool) {
	if email := a.CustomerEmail; email != "" {
		cs := w.customersByEmail[strings.ToLower(email)]
		switch len(cs) {
		case 0:
			r.fail("customerEmail", "no customer has the e-mail %q in the warehouse (synced %s)", email, stamp(w.syncedAt))
			return customer{}, false
		case 1:
			a.CustomerEmail, a.CustomerID = "", cs[0].id
			return cs[0], true
		default:
			r.fail("customerEmail", "%d customers share the e-mail %q: give customerId instead", len(cs), email)
			return customer{}, false
		}
	}
	c, ok := w.customersByID[a.CustomerID]
	if !ok {
		r.fail("customerId", "no customer %q in the warehouse (synced %s)", a.CustomerID, stamp(w.syncedAt))
	}
	return c, ok
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

// credits are the entry's credit and debit, from its one signed amount when it carries that instead.
func (e ledgerEntry) credits() (credit, debit api.Float) {
	credit, debit = e.Credit, e.Debit
	if !credit.Valid && e.Amount.Valid {
		credit = api.Float{Value: max(e.Amount.Value, 0), Valid: true}
		debit = api.Float{Value: max(-e.Amount.Value, 0), Valid: true}
	}
	return credit, debit
}

// reconcile looks for the top-up's ledger entry in the customer's whole credit history. Every entry must be
// provably this customer's (the spec gives each a customerId and a productId), readable once (no key
// twice) and carry a plausible time; anything else makes the read inconclusive, whatever it found.
// Entries that other journaled top-ups of the same customer, product and amount account for are not
// counted.
func (creditTopup) reconcile(rc *reconciler, ctx context.Context, q topupArgs, a *Action) (verdict, map[string]string, error) {
	send, err := rc.sendMoment(ctx, a)
	if err != nil {
		return undetermined, nil, err
	}
	claimed, err := rc.claimed(ctx)
	if err != nil {
		return undetermined, nil, err
	}
	// No filters and no sort: the whole history is read and every entry compared here, so nothing depends on
	// how the service filters or orders it.
	l, err := readAll("credit history of customer "+q.CustomerID, func(n int) (*api.ListPage, error) {
		return rc.c.CreditHistory(ctx, q.CustomerID, url.Values{"page": {strconv.Itoa(n)}, "limit": {"100"}})
	})
	if err != nil {
		return undetermined, nil, err
	}
	sc := ledgerScan{rc: rc, q: q, send: send, pl: rc.place(send), claimed: claimed, foreign: map[string]int{}}
	if sc.pl.doubt != "" {
		sc.doubts = append(sc.doubts, sc.pl.doubt)
	}
	for i, raw := range l.items {
		sc.entry(i, raw)
	}
	var others int
	if err := rc.j.db.QueryRowContext(ctx, journalSQL.Get("other_topups_since"), rc.p.Account, rc.p.ID, a.ID,
		q.CustomerID, q.ProductID, q.Amount.String(), send.at.Add(-clockMargin)).Scan(&others); err != nil {
		return undetermined, nil, fmt.Errorf("job journal: other top-ups: %w", err)
	}
	v, ev := sc.conclude(l, others)
	return v, ev, nil
}

// ledgerScan is one reconciliation's reading of a customer's credit history, entry by entry.
type ledgerScan struct {
	rc      *reconciler
	q       topupArgs
	send    sent
	pl      placed
	claimed map[string]bool
	hits    []ledgerHit    // entries since the send that may be this top-up, unaccounted for
	doubts  []string       // why the read cannot prove either way
	foreign map[string]int // entries of other customers, by customer
}

type ledgerHit struct {
	id string
	at time.Time
}

// entry judges the i-th entry of the history: another customer's, unreadable, not this top-up's, a doubt,
// a candidate or a hit.
func (sc *ledgerScan) entry(i int, raw json.RawMessage) {
	if key, dup := api.RepeatedKey(raw); dup {
		sc.doubts = append(sc.doubts, fmt.Sprintf("entry %d gives %q twice: it has no single reading", i+1, key))
		return
	}
	var e ledgerEntry
	if err := json.Unmarshal(raw, &e); err != nil {
		sc.doubts = append(sc.doubts, fmt.Sprintf("entry %d cannot be read: %v", i+1, err))
		return
	}
	name := "entry " + e.ID
	if e.ID == "" {
		name = fmt.Sprintf("entry %d", i+1)
	}
	switch {
	case e.CustomerID == "":
		sc.doubts = append(sc.doubts, name+" does not say whose it is (no customerId)")
		return
	case e.CustomerID != sc.q.CustomerID:
		sc.foreign[e.CustomerID]++
		return
	case e.ProductID == "":
		sc.doubts = append(sc.doubts, name+" does not say its product (no productId)")
		return
	}
	at, doubt := sc.pl.moment(name, "createdAt", e.CreatedAt)
	if doubt != "" {
		sc.doubts = append(sc.doubts, doubt)
		return
	}
	credit, debit := e.credits()
	if e.ProductID != sc.q.ProductID || sc.claimed[e.ID] {
		return
	}
	if credit.Valid && (credit.Value != float64(sc.q.Amount) || debit.Value != 0) {
		return
	}
	sc.placeEntry(e, at, credit)
}

// placeEntry places an entry of the top-up's product and amount against the send.
func (sc *ledgerScan) placeEntry(e ledgerEntry, at moment, credit api.Float) {
	rc, amount := sc.rc, sc.q.Amount.String()
	if sc.pl.doubt != "" {
		// times cannot be placed against the send: any such entry may be the change
		rc.found = append(rc.found, candidate{e.ID, fmt.Sprintf("entry %s of %s at %s", e.ID, amount, rc.local(at.lo))})
		return
	}
	switch at.when(sc.pl.since) {
	case "before":
		return
	case "either":
		sc.doubts = append(sc.doubts, fmt.Sprintf("entry %s of %s at %s has no time zone: it may be before or after the send (%s)",
			e.ID, amount, string(e.CreatedAt), sc.send.when(rc.loc)))
		rc.found = append(rc.found, candidate{e.ID, fmt.Sprintf("entry %s of %s at %s (no time zone)", e.ID, amount,
			string(e.CreatedAt))})
		return
	}
	if !credit.Valid {
		sc.doubts = append(sc.doubts, fmt.Sprintf("entry %s at %s lacks credit", e.ID, string(e.CreatedAt)))
		rc.found = append(rc.found, candidate{e.ID, fmt.Sprintf("entry %s at %s (amount not shown)", e.ID, rc.local(at.lo))})
		return
	}
	sc.hits = append(sc.hits, ledgerHit{e.ID, at.lo})
}

// conclude is the verdict of the read l, given the other journaled top-ups (others) its entries may be.
func (sc *ledgerScan) conclude(l *listRead, others int) (verdict, map[string]string) {
	rc, amount := sc.rc, sc.q.Amount.String()
	doubts := sc.doubts
	if len(sc.foreign) > 0 {
		var who []string
		for c, n := range sc.foreign {
			who = append(who, fmt.Sprintf("%d of customer %s", n, c))
		}
		sort.Strings(who)
		doubts = append([]string{fmt.Sprintf("the credit history of customer %s holds entries of other customers (%s): the service's "+
			"answer is not this customer's history", sc.q.CustomerID, strings.Join(who, ", "))}, doubts...)
	}
	ev := map[string]string{"read": l.summary(), "sentAt": sc.send.at.UTC().Format(time.RFC3339)}
	hits := sc.hits
	sort.Slice(hits, func(i, k int) bool { return hits[i].at.Before(hits[k].at) })
	if len(hits) > others {
		for _, h := range hits {
			rc.found = append(rc.found, candidate{h.id, fmt.Sprintf("entry %s of %s at %s", h.id, amount, rc.local(h.at))})
		}
	}
	if l.incomplete != "" {
		doubts = append([]string{l.incomplete}, doubts...)
	}
	if len(doubts) > 0 {
		ev["reconciled"] = fmt.Sprintf("cannot prove whether the top-up of %s was applied", amount)
		ev["missing"] = strings.Join(doubts, "; ")
		return inconclusive, ev
	}
	if len(hits) > others {
		// The oldest unaccounted entry since the send, by its own time (never by list position).
		ev["reconciled"] = "ledger entry found in the credit history"
		ev["claimed"], ev["ledgerCreatedAt"] = hits[0].id, hits[0].at.UTC().Format(time.RFC3339Nano)
		return applied, ev
	}
	ev["reconciled"] = fmt.Sprintf("no unaccounted ledger entry of %s for product %s %s in the complete history",
		amount, sc.q.ProductID, rc.since(sc.send, sc.pl))
	return absent, ev
}

// traces: the customer's credit entries of the same product crediting the same amount (debit none or zero),
// created in the window. The entry's type is not compared: the spec does not say which type add-credit
// writes (observed MERCHANT_TOPUP; a top-up in the dashboard may carry another), nor its wallet.
func (creditTopup) traces() traceOf[topupArgs] {
	return traceOf[topupArgs]{query: "topup_traces", key: func(a topupArgs) string { return a.CustomerID },
		match: func(a topupArgs, t traceRow) (string, bool) {
			return topupEntry(a, t.id, t.f[0], t.f[1], t.f[2], t.f[3])
		}}
}

// topupEntry says whether a credit entry (its product, credit, debit and type as text) is a top-up of q's
// product and amount, and names it.
func topupEntry(q topupArgs, id, product, credit, debit, typ string) (string, bool) {
	if product != q.ProductID {
		return "", false
	}
	c, err := strconv.ParseFloat(credit, 64)
	if err != nil || c != float64(q.Amount) {
		return "", false
	}
	if d, err := strconv.ParseFloat(cleanNumber(debit), 64); err != nil || d != 0 {
		return "", false
	}
	what := fmt.Sprintf("credit entry %s of %s", id, q.Amount.String())
	if typ != "" {
		what += " (" + typ + ")"
	}
	return what, true
}

// freshTraces reads the customer's whole credit history now (one read per customer until the next send) and
// returns the entries of q's product and amount created since a time: what the warehouse may not have yet.
// A read that fails or does not complete is an error (the row is not sent); an entry that is another
// customer's, says no product, or has no readable time cannot be this top-up's repeat and is passed over.
func (creditTopup) freshTraces(ctx context.Context, rc *reconciler, q topupArgs, since time.Time) ([]trace, error) {
	cust := q.CustomerID
	l, err := rc.list("credit history of customer "+cust, func(n int) (*api.ListPage, error) {
		return rc.c.CreditHistory(ctx, cust, url.Values{"page": {strconv.Itoa(n)}, "limit": {"100"}})
	})
	if err != nil {
		return nil, err
	}
	if l.incomplete != "" {
		return nil, fmt.Errorf("%s: %s", l.summary(), l.incomplete)
	}
	where := "in the service's credit history, read " + rc.local(rc.now())
	var out []trace
	for _, raw := range l.items {
		if _, dup := api.RepeatedKey(raw); dup {
			continue
		}
		var e ledgerEntry
		var typ struct {
			Type string `json:"type"`
		}
		if json.Unmarshal(raw, &e) != nil || e.ID == "" || e.CustomerID != cust {
			continue
		}
		_ = json.Unmarshal(raw, &typ)
		at, ok := parseMoment(e.CreatedAt)
		if !ok || at.hi.Before(since) {
			continue
		}
		credit, debit := e.credits()
		if !credit.Valid {
			continue
		}
		what, ok := topupEntry(q, e.ID, e.ProductID, strconv.FormatFloat(credit.Value, 'f', -1, 64),
			strconv.FormatFloat(debit.Value, 'f', -1, 64), typ.Type)
		if ok {
			out = append(out, trace{id: e.ID, at: at.lo, hi: at.hi, what: what, where: where})
		}
	}
	return out, nil
}

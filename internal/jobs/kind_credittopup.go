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

func (creditTopup) name() Kind { return CreditTopup }

func (creditTopup) traits() traits {
	return traits{
		columns: []column{
			{"customerId", false, "the customer's id (or give customerEmail instead)"},
			{"customerEmail", false, "the customer's e-mail, when the file has no customerId; must match one customer"},
			{"productId", true, "a credit-usage product (subType credit_usage)"},
			{"amount", true, "credit to add: a whole number above zero"},
		},
		oneOf:           [][]string{{"customerId", "customerEmail"}},
		results:         []string{"balance", "message"},
		units:           map[string]unit{"amount": unitCredit, "balance": unitCredit},
		measure:         measure{group: "productName", unit: unitCredit, value: field("amount")},
		settles:         true,
		journalsBalance: true,
	}
}

func (creditTopup) parse(r *rowReader, _ *PlanOptions) request {
	q := request{"productId": r.text("productId"), "amount": r.posInt("amount")}
	if id := r.get("customerId"); id != "" || !r.has("customerEmail") {
		q["customerId"] = r.text("customerId")
	} else {
		q["customerEmail"] = r.email("customerEmail")
	}
	return q
}

func (creditTopup) keys(q request, k *keys) {
	if q["customerId"] != "" {
		k.customerIDs = append(k.customerIDs, q["customerId"])
	}
	if q["customerEmail"] != "" {
		k.emails = append(k.emails, q["customerEmail"])
	}
	k.productIDs = append(k.productIDs, q["productId"])
	k.balances = true
}

func (creditTopup) check(q request, w *world, r *rowReader) (string, string, map[string]string) {
	c, ok := resolveCustomer(q, w, r)
	p, pok := w.products[q["productId"]]
	switch {
	case !pok:
		r.fail("productId", "no product %q in the warehouse (synced %s)", q["productId"], stamp(w.syncedAt))
	case !p.creditUsage():
		r.fail("productId", "product %s (%s) is %s/%s, not a credit-usage product", p.id, p.name, p.typ, orNull(p.subType))
	case p.status == "deleted":
		r.fail("productId", "product %s (%s) is deleted", p.id, p.name)
	}
	if !ok || !pok {
		return "", "", nil
	}
	bal := cleanNumber(w.balances[[2]string{c.id, p.id}])
	amount, _ := strconv.ParseInt(q["amount"], 10, 64)
	after := "?"
	if b, err := strconv.ParseFloat(bal, 64); err == nil {
		after = strconv.FormatFloat(b+float64(amount), 'f', -1, 64)
	}
	return r.lang.f("target.customer_of", c.id, c.name, p.name),
		r.lang.f("change.balance", r.lang.number(bal), r.lang.number(after), r.lang.number(q["amount"])),
		map[string]string{"balance": bal, "customerName": c.name, "customerEmail": c.email, "productName": p.name}
}

func (creditTopup) dupKeys(q request) []dupKey {
	return []dupKey{{"productId", "a top-up of customer " + q["customerId"] + " for product " + q["productId"]}}
}

func (creditTopup) repeatKey(q request) string {
	return fmt.Sprintf("customer %s product %s amount %s", q["customerId"], q["productId"], q["amount"])
}

func (creditTopup) send(ctx context.Context, c *api.Client, q request) (map[string]string, error) {
	amount, _ := strconv.ParseInt(q["amount"], 10, 64)
	out, err := c.AddCredit(ctx, api.AddCreditRequest{CustomerID: q["customerId"], ProductID: q["productId"], Amount: amount})
	if err != nil {
		return nil, err
	}
	res := map[string]string{"message": out.Message}
	if out.CustomerBalance.Valid {
		res["balance"] = strconv.FormatInt(out.CustomerBalance.Value, 10)
	}
	return res, nil
}

// resolveCustomer completes q's customerId from customerEmail when needed.
func resolveCustomer(q request, w *world, r *rowReader) (customer, bool) {
	if email := q["customerEmail"]; email != "" {
		cs := w.customersByEmail[strings.ToLower(email)]
		switch len(cs) {
		case 0:
			r.fail("customerEmail", "no customer has the e-mail %q in the warehouse (synced %s)", email, stamp(w.syncedAt))
			return customer{}, false
		case 1:
			delete(q, "customerEmail")
			q["customerId"] = cs[0].id
			return cs[0], true
		default:
			r.fail("customerEmail", "%d customers share the e-mail %q: give customerId instead", len(cs), email)
			return customer{}, false
		}
	}
	c, ok := w.customersByID[q["customerId"]]
	if !ok {
		r.fail("customerId", "no customer %q in the warehouse (synced %s)", q["customerId"], stamp(w.syncedAt))
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

// reconcile looks for the top-up's ledger entry in the customer's whole credit history. Every entry must be
// provably this customer's (the spec gives each a customerId and a productId), readable once (no key
// twice) and carry a plausible time; anything else makes the read inconclusive, whatever it found.
// Entries that other journaled top-ups of the same customer, product and amount account for are not
// counted.
func (creditTopup) reconcile(rc *reconciler, ctx context.Context, a *Action) (verdict, map[string]string, error) {
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
			doubts = append(doubts, fmt.Sprintf("entry %s of %s at %s has no time zone: it may be before or after the send (%s)",
				e.ID, a.Request["amount"], string(e.CreatedAt), send.when(rc.loc)))
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
	if err := rc.j.db.QueryRowContext(ctx, journalSQL.Get("other_topups_since"), rc.p.Account, rc.p.ID, a.ID,
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
	ev["reconciled"] = fmt.Sprintf("no unaccounted ledger entry of %s for product %s %s in the complete history",
		a.Request["amount"], prod, rc.since(send, pl))
	return absent, ev, nil
}

// traces: the customer's credit entries of the same product crediting the same amount (debit none or zero),
// created in the window. The entry's type is not compared: the spec does not say which type add-credit
// writes (observed MERCHANT_TOPUP; a top-up in the dashboard may carry another), nor its wallet.
func (creditTopup) traces() traceRule {
	return traceRule{query: "topup_traces", key: func(q request) string { return q["customerId"] },
		match: func(q request, t traceRow) (string, bool) {
			return topupEntry(q, t.id, t.f[0], t.f[1], t.f[2], t.f[3])
		}}
}

// topupEntry says whether a credit entry (its product, credit, debit and type as text) is a top-up of q's
// product and amount, and names it.
func topupEntry(q request, id, product, credit, debit, typ string) (string, bool) {
	if product != q["productId"] {
		return "", false
	}
	amount, err1 := strconv.ParseFloat(q["amount"], 64)
	c, err2 := strconv.ParseFloat(credit, 64)
	if err1 != nil || err2 != nil || c != amount {
		return "", false
	}
	if d, err := strconv.ParseFloat(cleanNumber(debit), 64); err != nil || d != 0 {
		return "", false
	}
	what := fmt.Sprintf("credit entry %s of %s", id, q["amount"])
	if typ != "" {
		what += " (" + typ + ")"
	}
	return what, true
}

// freshTraces reads the customer's whole credit history now (one read per customer until the next send) and
// returns the entries of q's product and amount created since a time: what the warehouse may not have yet.
// A read that fails or does not complete is an error (the row is not sent); an entry that is another
// customer's, says no product, or has no readable time cannot be this top-up's repeat and is passed over.
func (creditTopup) freshTraces(ctx context.Context, rc *reconciler, q request, since time.Time) ([]trace, error) {
	cust := q["customerId"]
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
		credit, debit := e.Credit, e.Debit
		if !credit.Valid && e.Amount.Valid {
			credit = api.Float{Value: max(e.Amount.Value, 0), Valid: true}
			debit = api.Float{Value: max(-e.Amount.Value, 0), Valid: true}
		}
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

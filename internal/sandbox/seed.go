package sandbox

import (
	"container/heap"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math"
	"slices"
)

// Record counts at Scale 1 (about 10,000 records in all).
const (
	baseCustomers   = 2000
	baseProducts    = 300
	basePayReqs     = 1500
	baseInvoices    = 1500
	baseLinkUnpaid  = 250 // unpaid membership/generic-link checkouts, beside open invoices and requests
	baseReviews     = 1500
	baseLedgerCusts = 200
	baseLicenses    = 200
	baseCoupons     = 50
	historyDays     = 400
)

func scaled(base int, scale float64, least int) int {
	return max(int(math.Round(float64(base)*scale)), least)
}

// seed fills an empty world with the history of the historyDays before now.
func (w *world) seed(scale float64) {
	start := w.now - historyDays*day
	w.bulk = true
	defer func() { w.bulk = false }()
	w.userID = w.newID()
	sum := sha256.Sum256(binary.BigEndian.AppendUint64([]byte("billsync-sandbox-checkout"), uint64(w.seedValue)))
	w.secret = sum[:]

	// Customers and products first: everything else points at them.
	custs := make([]*customer, 0, scaled(baseCustomers, scale, 20))
	for i := 0; i < cap(custs); i++ {
		c := w.genCustomer(w.between(start, w.now-1))
		custs = append(custs, c)
		w.addCustomer(c)
	}
	nprod := scaled(baseProducts, scale, 2*len(productTypes))
	for i := 0; i < nprod; i++ {
		typ := productTypes[i%len(productTypes)]
		if i >= 2*len(productTypes) {
			typ = productTypes[w.rng.IntN(len(productTypes))]
		}
		p := w.genProduct(w.between(start, w.now-1), typ)
		if i < 2*len(productTypes) && (typ == "saas" || typ == "membership") {
			p.subType, p.status = "credit_usage", "active" // at least one credit product of each kind
		}
		w.addProduct(p)
	}
	w.seedCoupons(scaled(baseCoupons, scale, 6), start)
	w.seedRuleCoupons()
	w.seedLicenses(scaled(baseLicenses, scale, 4), start)

	var hooks []*webhook
	for i, n := 0, scaled(basePayReqs, scale, 10); i < n; i++ {
		c := w.randomCustomer()
		at := w.between(max(start, c.createdAt), w.now-1)
		p := w.genPayReq(at, c)
		w.addPayReq(p)
		hooks = w.settleSeeded(&unpaid{id: w.newID(), createdAt: at, typ: "payment_request", amount: p.amount, cust: p.cust, pr: p}, p.expiredAt, hooks)
	}
	for i, n := 0, scaled(baseInvoices, scale, 10); i < n; i++ {
		c := w.randomCustomer()
		at := w.between(max(start, c.createdAt), w.now-1)
		inv := w.genInvoice(at, c)
		w.addInvoice(inv)
		hooks = w.settleSeeded(&unpaid{id: inv.txID, createdAt: at, typ: "invoice", amount: inv.amount, cust: inv.cust, inv: inv}, inv.expiredAt, hooks)
	}
	for i, n := 0, scaled(baseLinkUnpaid, scale, 5); i < n; i++ {
		p := w.randomProduct("membership", "generic_link")
		c := w.randomCustomer()
		at := w.between(max(start, p.createdAt, c.createdAt), w.now-1)
		typ := "generic_link"
		if p.typ == "membership" {
			typ = "membership_payment"
		}
		u := &unpaid{id: w.newID(), createdAt: at, typ: typ, amount: p.amount, cust: c, prod: p}
		if w.rng.IntN(5) == 0 {
			u.payAt = w.now + w.rng.Int64N(30*day)
		}
		w.addUnpaid(u)
	}
	for i, n := 0, scaled(baseReviews, scale, 10); i < n; i++ {
		c, p := w.randomCustomer(), w.randomProduct()
		at := w.between(max(start, c.createdAt, p.createdAt), w.now-1)
		w.reviews.items = append(w.reviews.items, w.genReview(at, c, p))
	}
	w.seedLedger(scaled(baseLedgerCusts, scale, 3), start)
	for _, c := range custs {
		if w.rng.IntN(40) == 0 {
			hooks = append(hooks, w.memberEvent(eventMemberExpired, w.between(c.createdAt, w.now-1), c))
		}
	}
	w.seedWebhooks(hooks)
	w.customers.sort()
	w.products.sort()
	w.payReqs.sort()
	w.invoices.sort()
	w.unpaids.sort()
	w.reviews.sort()
	w.ledger.sort()
	for _, c := range collections {
		if c.seed != nil {
			c.seed(w, scale, start)
		}
	}
}

// settleSeeded decides the fate of a link opened in the past: paid, closed, or still open.
func (w *world) settleSeeded(u *unpaid, exp int64, hooks []*webhook) []*webhook {
	payAt := w.payOutcome(u.createdAt, exp)
	switch {
	case payAt != 0 && payAt < w.now:
		w.markPaid(u)
		hooks = append(hooks, w.paidEvent(u, payAt))
	case exp < w.now:
		w.markClosed(u)
	default:
		u.payAt, u.expireAt = payAt, exp
		w.addUnpaid(u)
		w.linkUnpaid(u)
		if at := u.createdAt + day; at < w.now && w.rng.IntN(2) == 0 {
			hooks = append(hooks, w.reminderEvent(u, at))
		}
	}
	return hooks
}

func (w *world) linkUnpaid(u *unpaid) {
	if u.inv != nil {
		u.inv.unpaid = u
	}
	if u.pr != nil {
		u.pr.unpaid = u
	}
}

func (w *world) markPaid(u *unpaid) {
	switch {
	case u.inv != nil:
		u.inv.status, u.inv.txStatus, u.inv.unpaid = "paid", "paid", nil
	case u.pr != nil:
		u.pr.status, u.pr.unpaid = "paid", nil
	}
}

func (w *world) markClosed(u *unpaid) {
	switch {
	case u.inv != nil:
		u.inv.status, u.inv.unpaid = "closed", nil
	case u.pr != nil:
		u.pr.status, u.pr.unpaid = "closed", nil
	}
}

func (u *unpaid) describe() (name, typ string) {
	switch {
	case u.inv != nil:
		return u.inv.name, "invoice"
	case u.pr != nil:
		return u.pr.name, "payment_request"
	default:
		return u.prod.name, u.prod.typ
	}
}

func (w *world) paidEvent(u *unpaid, at int64) *webhook {
	name, typ := u.describe()
	return w.paymentEvent(eventReceived, at, u.id, u.linkID(), u.cust, u.amount, name, typ, "paid")
}

func (w *world) reminderEvent(u *unpaid, at int64) *webhook {
	name, typ := u.describe()
	return w.paymentEvent(eventReminder, at, u.id, u.linkID(), u.cust, u.amount, name, typ, "created")
}

func (w *world) seedCoupons(n int, start int64) {
	for i := 0; i < n; i++ {
		c := &coupon{id: w.newID(), code: fmt.Sprintf("%03d%s", w.rng.IntN(1000), upper(w.slug(4))), createdAt: w.between(start, w.now-1)}
		if _, dup := w.couponBy[c.code]; dup {
			continue
		}
		if w.rng.IntN(2) == 0 {
			c.discountType, c.value = "percentage", int64(5*(1+w.rng.IntN(10)))
		} else {
			c.discountType, c.value = "fixed", int64(5000*(1+w.rng.IntN(100)))
		}
		if w.rng.IntN(2) == 0 {
			c.hasMin, c.minPurchase = true, int64(50000*(1+w.rng.IntN(40)))
		}
		c.eligible = w.pick([]string{"all", "all", "new", "existing"})
		switch r := w.rng.IntN(10); {
		case r < 2:
			c.expiresAt = w.between(c.createdAt, w.now-1)
		case r < 7:
			c.expiresAt = w.now + day*int64(1+w.rng.IntN(180))
		}
		if w.rng.IntN(5) < 2 {
			c.prod = w.randomProduct()
		}
		w.coupons = append(w.coupons, c)
		w.couponBy[c.code] = c
	}
}

// RuleCoupons are fixed coupons, one per reason a coupon may not apply that the random ones do not cover.
// They use no randomness, so every other seeded record is as before.
var RuleCoupons = map[string]string{
	"NONAKTIF10":   "inactive",
	"BELUMMULAI10": "not yet active",
	"KURSUSSAJA10": "product types saas and membership excluded",
	"HABIS10":      "usage limit reached",
}

func (w *world) seedRuleCoupons() {
	for _, code := range []string{"NONAKTIF10", "BELUMMULAI10", "KURSUSSAJA10", "HABIS10"} {
		sum := sha256.Sum256([]byte("rule coupon " + code))
		var id ID
		copy(id[:], sum[:16])
		c := &coupon{id: id, code: code, discountType: "percentage", value: 10, eligible: "all", createdAt: w.now - day}
		switch code {
		case "NONAKTIF10":
			c.inactive = true
		case "BELUMMULAI10":
			c.startsAt = w.now + 30*day
		case "KURSUSSAJA10":
			c.excludedTypes = []string{"saas", "membership"}
		case "HABIS10":
			c.usageLimit, c.used = 100, 100
		}
		w.coupons = append(w.coupons, c)
		w.couponBy[code] = c
	}
}

func upper(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'a' <= c && c <= 'z' {
			b[i] = c - 32
		}
	}
	return string(b)
}

func (w *world) seedLicenses(n int, start int64) {
	for i := 0; i < n; i++ {
		p := w.randomProduct("saas")
		l := &license{
			code: upper(fmt.Sprintf("LIC-%s-%s-%s", w.slug(4), w.slug(4), w.slug(4))), prod: p,
			cust: w.randomCustomer(), status: "ACTIVE", createdAt: w.between(max(start, p.createdAt), w.now-1),
		}
		if w.rng.IntN(5) == 0 {
			l.status = "INACTIVE"
		}
		l.updatedAt = w.between(l.createdAt, w.now-1)
		w.licenses = append(w.licenses, l)
		w.licenseBy[licenseKey{l.code, p.id}] = l
	}
}

// seedLedger gives n customers about ten movements each, in time order.
func (w *world) seedLedger(n int, start int64) {
	type move struct {
		at   int64
		c    *customer
		p    *product
		seqn int
	}
	var moves []move
	chosen := map[*customer]bool{}
	for i := 0; i < n; i++ {
		c := w.randomCustomer()
		if chosen[c] {
			continue
		}
		chosen[c] = true
		p := w.creditProducts[w.rng.IntN(len(w.creditProducts))]
		from := max(start, c.createdAt, p.createdAt)
		for j, k := 0, 4+w.rng.IntN(13); j < k; j++ {
			moves = append(moves, move{w.between(from, w.now-1), c, p, len(moves)})
		}
	}
	slices.SortFunc(moves, func(a, b move) int {
		if a.at != b.at {
			return int(min(max(a.at-b.at, -1), 1))
		}
		return a.seqn - b.seqn
	})
	for _, m := range moves {
		w.ledgerMove(m.at, m.c, m.p)
	}
}

// seedWebhooks stores past deliveries settled, and the last hour's still pending.
func (w *world) seedWebhooks(hooks []*webhook) {
	slices.SortStableFunc(hooks, func(a, b *webhook) int {
		return int(min(max(a.createdAt-b.createdAt, -1), 1))
	})
	for _, h := range hooks {
		if h.createdAt < w.now-hour {
			for h.nextDelivery != 0 && h.nextDelivery < w.now {
				w.deliver(h, h.nextDelivery)
			}
		}
		w.addWebhook(h)
	}
	// addWebhook queued every pending delivery; keep the heap valid after the bulk load.
	heap.Init(&w.due)
}

package sandbox

import (
	"container/heap"
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"math"
)

// How credit moves once the clock runs (Advance). The seeded history is left as it was drawn
// (ledgerMove at random times); from the first Advance every ledger entry has a cause the spec
// gives it (doc.go, "Credit"), and the causes that pass through this API leave their trace here:
//
//   - TOPUP: a customer who has run out buys credit through an immutable checkout of the
//     credit-usage product (endpoint 15 with creditAmount): an unpaid transaction naming the
//     customer and the product, then, once paid, the entry and a payment.received webhook.
//   - MERCHANT_TOPUP: add-credit (endpoint 16), or rarely the merchant's dashboard (no trace).
//   - TRIAL_TOPUP: a customer's first use of a credit-usage product.
//   - EXPIRE_VOID: when an entry's expiredAt passes with part of it unspent (oldest credit is
//     spent first).
//   - CREDIT_USAGE: the merchant's product spends credit outside this API, at each customer's
//     own pace: heavy-tailed, a few customers daily, most rarely.
const (
	// A new holder's mean time between uses is log-uniform between these: about one customer
	// in eight uses credit more than daily, half less than weekly.
	usageGapMin = 12 * hour
	usageGapMax = 90 * day
	// One use spends 0.5-1.5 times the customer's usual amount, itself log-uniform between these.
	usageSpendMin = 1000
	usageSpendMax = 50000
	// A customer who finds no credit left buys more with this chance (else tries again at its
	// next use); the checkout is paid with the second chance within checkoutPayWithin, else it
	// lapses after checkoutLife.
	topupBuyChance    = 0.7
	checkoutPaidRate  = 0.8
	checkoutPayWithin = 6 * hour
	checkoutLife      = day
	// A new customer is a credit-product user starting a trial with this chance, within a day.
	newCustomerTrial = 0.1
)

// creditEvolution lists the credit happenings not tied to a customer's own schedule, in events
// per day at Scale 1, like the world's evolution table.
var creditEvolution = []struct {
	kind dueKind
	rate float64
}{
	{dueTrial, 0.5},     // an existing customer without credit starts using a credit product
	{dueDashboard, 0.2}, // the merchant's dashboard adds credit to a holder
}

// onCredit runs f with the credit model's random stream in place of the world's: whatever the
// credit model draws (ids of its entries and checkouts included) leaves every other record the
// evolution makes as it would be without it.
func (w *world) onCredit(f func()) {
	main := w.rng
	w.rng = w.crng
	defer func() { w.rng = main }()
	f()
}

// creditHappenings queues the credit happenings of the next dms.
func (w *world) creditHappenings(t0, dms int64, scale float64) {
	for _, ev := range creditEvolution {
		k := fmt.Sprintf("credit/%d", ev.kind)
		exp := ev.rate*float64(dms)/float64(day)*scale + w.carry[k]
		n := int(math.Floor(exp))
		w.carry[k] = exp - float64(n)
		for range n {
			w.queueCredit(dueItem{at: t0 + 1 + w.rng.Int64N(dms), kind: ev.kind})
		}
	}
}

// creditUser is what the simulation keeps of a customer who holds a ledger.
type creditUser struct {
	gap     int64 // mean time between uses (ms)
	spend   int64 // usual amount of one use
	nextUse int64 // due time of the next use; a queued use at another time is stale
	buying  bool  // a top-up checkout is open
}

// profile derives a customer's pace and spend from the seed and its id, without drawing from
// the world's random stream: a property of the customer, the same whenever it is first needed.
func (w *world) profile(c *customer) *creditUser {
	h := fnv.New64a()
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], uint64(w.seedValue))
	h.Write(b[:])
	h.Write(c.id[:])
	x := h.Sum64()
	u1 := float64(x>>32) / (1 << 32)
	u2 := float64(x&0xffffffff) / (1 << 32)
	logUniform := func(lo, hi float64, u float64) float64 {
		return math.Exp(math.Log(lo) + u*(math.Log(hi)-math.Log(lo)))
	}
	return &creditUser{
		gap:   int64(logUniform(float64(usageGapMin), float64(usageGapMax), u1)),
		spend: int64(logUniform(usageSpendMin, usageSpendMax, u2)),
	}
}

// startCredit hands the seeded ledger to the credit model at the first Advance. A customer who
// already holds a ledger keeps the pace its history shows (its entries' mean gap, within the
// bounds of the pace of new users): people keep their habits, and the history a merchant's
// warehouse holds says something about what comes next. Every entry whose expiry is still
// ahead gets its EXPIRE_VOID check.
func (w *world) startCredit() {
	w.creditLive = true
	w.users = map[ID]*creditUser{}
	for _, c := range w.ledgerCusts {
		u := w.profile(c)
		list := w.ledgerBy[c.id]
		u.gap = min(max((w.now-list[0].createdAt)/int64(len(list)), usageGapMin), usageGapMax)
		w.users[c.id] = u
		w.nextUse(c, u, w.now)
	}
	for _, l := range w.ledger.items {
		if l.credit > 0 && l.expiredAt > w.now {
			w.queueCredit(dueItem{at: l.expiredAt, kind: dueVoid, l: l})
		}
	}
}

// nextUse schedules c's next use after `at`: uses come at random at the customer's pace.
func (w *world) nextUse(c *customer, u *creditUser, at int64) {
	u.nextUse = at + max(int64(w.rng.ExpFloat64()*float64(u.gap)), 60_000)
	w.queueCredit(dueItem{at: u.nextUse, kind: dueUse, c: c})
}

func (w *world) queueCredit(it dueItem) { heap.Push(&w.due, it) }

// creditAdded keeps the model up to date with an entry added after startCredit, whatever added
// it (evolution, add-credit, faults): a new holder starts using credit, a credit entry expires.
func (w *world) creditAdded(l *ledgerEntry, first bool) {
	if !w.creditLive {
		return
	}
	if first {
		w.queueCredit(dueItem{at: l.createdAt, kind: dueUse, c: l.cust})
	}
	if l.credit > 0 && l.expiredAt > 0 {
		w.queueCredit(dueItem{at: l.expiredAt, kind: dueVoid, l: l})
	}
}

// settleCredit applies one due credit item at it.at.
func (w *world) settleCredit(it dueItem) {
	switch it.kind {
	case dueUse:
		u := w.users[it.c.id]
		switch {
		case u == nil: // a new holder: its pace is its own
			u = w.profile(it.c)
			w.users[it.c.id] = u
		case u.nextUse != it.at:
			return // superseded
		default:
			w.use(it.at, it.c, u)
		}
		w.nextUse(it.c, u, it.at)
	case dueVoid:
		w.expire(it.at, it.l)
	case dueTrial:
		c := it.c
		if c == nil { // an existing customer
			c = w.randomCustomer()
		}
		if len(w.ledgerBy[c.id]) == 0 {
			w.trial(it.at, c)
		}
	case dueDashboard:
		w.dashboardTopup(it.at)
	}
}

// use spends credit on the product the customer last moved, or starts buying when none is left.
func (w *world) use(at int64, c *customer, u *creditUser) {
	list := w.ledgerBy[c.id]
	p := list[len(list)-1].prod
	bal := w.balance[balanceKey{c.id, p.id}]
	if bal > 0 {
		spend := min(max(int64(float64(u.spend)*(0.5+w.rng.Float64())), 1), bal)
		w.addLedger(w.newLedger(at, c, p, "CREDIT_USAGE", 0, spend))
		bal -= spend
	}
	if bal == 0 && !u.buying && w.rng.Float64() < topupBuyChance {
		w.openTopup(at, c, p, u)
	}
}

// openTopup is the checkout a customer opens to buy credit: an open transaction of the product
// until it is paid (the TOPUP, with a payment.received webhook) or lapses.
func (w *world) openTopup(at int64, c *customer, p *product, u *creditUser) {
	typ := "generic_link"
	if p.typ == "membership" {
		typ = "membership_payment"
	}
	credit := int64(10000 * (1 + w.rng.IntN(100)))
	t := &unpaid{id: w.newID(), createdAt: at, typ: typ, amount: credit, cust: c, prod: p, credit: credit, buyer: u,
		expireAt: at + checkoutLife}
	if w.rng.Float64() < checkoutPaidRate {
		t.payAt = at + 1 + w.rng.Int64N(checkoutPayWithin)
	}
	u.buying = true
	w.addUnpaid(t)
}

// creditPaid settles a paid top-up checkout: it leaves the unpaid list, its payment.received
// webhook names the customer and the product, and the credit it bought is booked.
func (w *world) creditPaid(t *unpaid, at int64) {
	w.dropUnpaid(t)
	h := w.paidEvent(t, at)
	h.credit = true
	w.addWebhook(h)
	t.buyer.buying = false
	w.addLedger(w.newLedger(at, t.cust, t.prod, "TOPUP", t.credit, 0))
}

// expire voids what is left of l at its expiredAt: credit is spent oldest first, so what is left
// of l is the credit up to and including it less everything debited, within l's own amount.
func (w *world) expire(at int64, l *ledgerEntry) {
	var credits, debits int64
	seen := false
	for _, e := range w.ledgerBy[l.cust.id] {
		if e.prod != l.prod {
			continue
		}
		if !seen {
			credits += e.credit
		}
		debits += e.debit
		seen = seen || e == l
	}
	left := min(max(credits-debits, 0), l.credit, w.balance[balanceKey{l.cust.id, l.prod.id}])
	if left > 0 {
		w.addLedger(w.newLedger(at, l.cust, l.prod, "EXPIRE_VOID", 0, left))
	}
}

// trial gives a customer's first use of a credit-usage product its trial credit.
func (w *world) trial(at int64, c *customer) {
	var active []*product
	for _, p := range w.creditProducts {
		if p.status == "active" {
			active = append(active, p)
		}
	}
	if len(active) == 0 {
		return
	}
	p := active[w.rng.IntN(len(active))]
	w.addLedger(w.newLedger(at, c, p, "TRIAL_TOPUP", int64(1000*(1+w.rng.IntN(10))), 0))
}

// dashboardTopup is the merchant adding credit from its dashboard: no trace in this API.
func (w *world) dashboardTopup(at int64) {
	if len(w.ledgerCusts) == 0 {
		return
	}
	c := w.ledgerCusts[w.rng.IntN(len(w.ledgerCusts))]
	list := w.ledgerBy[c.id]
	w.addLedger(w.newLedgerTopup(at, c, list[len(list)-1].prod, int64(10000*(1+w.rng.IntN(100)))))
}

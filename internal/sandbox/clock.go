package sandbox

import (
	"container/heap"
	"fmt"
	"math"
	"slices"
	"time"
)

// Advance moves the simulated clock forward by d and lets the world evolve on
// the way: deterministic for a given seed and sequence of calls and writes.
func (s *Server) Advance(d time.Duration) {
	if d <= 0 {
		return
	}
	s.mu.Lock()
	s.gen++
	defer s.mu.Unlock()
	s.w.advance(d.Milliseconds(), s.opts.Scale)
}

// evolution lists what happens on its own, in events per day at Scale 1.
var evolution = []struct {
	kind string
	rate float64
}{
	{"customer", 5},
	{"invoice", 4},
	{"payment_request", 3},
	{"link_checkout", 1.5},
	{"review", 4},
	{"member_expired", 0.5},
	{"email_change", 0.2},
	{"payment_request_delete", 0.3},
	{"review_delete", 0.2},
	{"product_inactive", 0.1},
}

type happening struct {
	at   int64
	kind string
	seq  int
}

func (w *world) advance(dms int64, scale float64) {
	if !w.creditLive {
		w.onCredit(w.startCredit)
	}
	t0, t1 := w.now, w.now+dms
	w.onCredit(func() { w.creditHappenings(t0, dms, scale) })
	var hs []happening
	for _, ev := range evolution {
		exp := ev.rate*float64(dms)/float64(day)*scale + w.carry[ev.kind]
		n := int(math.Floor(exp))
		w.carry[ev.kind] = exp - float64(n)
		for i := 0; i < n; i++ {
			hs = append(hs, happening{at: t0 + 1 + w.rng.Int64N(dms), kind: ev.kind, seq: len(hs)})
		}
	}
	slices.SortFunc(hs, func(a, b happening) int {
		if a.at != b.at {
			return int(min(max(a.at-b.at, -1), 1))
		}
		return a.seq - b.seq
	})
	for _, h := range hs {
		w.settleDue(h.at)
		w.now = max(w.now, h.at)
		w.happen(h.kind, w.now)
	}
	w.settleDue(t1)
	w.now = max(w.now, t1)
	for _, c := range collections {
		if c.evolve != nil {
			c.evolve(w, t0, dms, scale)
		}
	}
}

// settleDue applies payments, expiries and deliveries due up to t, in time order.
func (w *world) settleDue(t int64) {
	for w.due.Len() > 0 && w.due[0].at <= t {
		it := heap.Pop(&w.due).(dueItem)
		w.now = max(w.now, it.at)
		switch it.kind {
		case duePay:
			u := it.u
			if u.gone || u.payAt != it.at {
				continue // edited or already settled
			}
			if u.credit > 0 {
				w.onCredit(func() { w.creditPaid(u, it.at) })
				continue
			}
			w.markPaid(u)
			w.dropUnpaid(u)
			w.addWebhook(w.paidEvent(u, it.at))
		case dueExpire:
			u := it.u
			if u.gone || u.expireAt != it.at {
				continue
			}
			w.markClosed(u)
			w.dropUnpaid(u)
			if u.buyer != nil {
				u.buyer.buying = false
			}
		case dueDelivery:
			h := it.h
			if h.nextDelivery != it.at {
				continue
			}
			if h.credit {
				w.onCredit(func() { w.deliver(h, it.at) })
			} else {
				w.deliver(h, it.at)
			}
			if h.nextDelivery != 0 {
				heap.Push(&w.due, dueItem{at: h.nextDelivery, kind: dueDelivery, h: h})
			}
		default:
			w.onCredit(func() { w.settleCredit(it) })
		}
	}
}

func (w *world) happen(kind string, at int64) {
	switch kind {
	case "customer":
		c := w.spawnCustomer(at)
		if w.crng.Float64() < newCustomerTrial {
			w.queueCredit(dueItem{at: at + 1 + w.crng.Int64N(day), kind: dueTrial, c: c})
		}
	case "invoice":
		w.spawnInvoice(at)
	case "payment_request":
		w.spawnPayReq(at)
	case "link_checkout":
		w.spawnLinkCheckout(at)
	case "review":
		w.spawnReview(at)
	case "member_expired":
		w.spawnMemberEvent(at)
	case "email_change":
		c := w.randomCustomer()
		to := fmt.Sprintf("%s.baru%d@%s", asciiFold(c.name), w.rng.IntN(10000), w.pick(mailDomains))
		if len(w.custByEmail[to]) == 0 {
			w.renameCustomer(c, to, at)
		}
	case "payment_request_delete":
		if n := w.payReqs.len(); n > 0 {
			w.deletePayReq(w.payReqs.items[w.rng.IntN(n)])
		}
	case "review_delete":
		if n := w.reviews.len(); n > 0 {
			w.reviews.remove(w.reviews.items[w.rng.IntN(n)])
		}
	case "product_inactive":
		if p := w.randomProduct(); p != nil && p.status == "active" && !p.creditUsage() {
			p.status = "inactive"
		}
	}
}

func (w *world) deletePayReq(p *payReq) {
	w.payReqs.remove(p)
	delete(w.prByID, p.id)
	if p.unpaid != nil {
		w.dropUnpaid(p.unpaid)
	}
}

// Spawners create one new record at `at`, used by Advance and by the
// insert-while-paging fault.

func (w *world) spawnCustomer(at int64) *customer {
	c := w.genCustomer(at)
	c.updatedAt = at
	w.addCustomer(c)
	return c
}

// openInvoice stores a new invoice with its open transaction and reminder webhook.
func (w *world) openInvoice(inv *invoice) {
	w.addInvoice(inv)
	u := &unpaid{id: inv.txID, createdAt: inv.createdAt, typ: "invoice", amount: inv.amount, cust: inv.cust, inv: inv,
		payAt: w.payOutcome(inv.createdAt, inv.expiredAt), expireAt: inv.expiredAt}
	w.addUnpaid(u)
	w.linkUnpaid(u)
	w.addWebhook(w.reminderEvent(u, inv.createdAt))
}

func (w *world) spawnInvoice(at int64) {
	w.openInvoice(w.genInvoice(at, w.randomCustomer()))
}

func (w *world) spawnPayReq(at int64) {
	p := w.genPayReq(at, w.randomCustomer())
	w.addPayReq(p)
	u := &unpaid{id: w.newID(), createdAt: at, typ: "payment_request", amount: p.amount, cust: p.cust, pr: p,
		payAt: w.payOutcome(at, p.expiredAt), expireAt: p.expiredAt}
	w.addUnpaid(u)
	w.linkUnpaid(u)
}

func (w *world) spawnLinkCheckout(at int64) {
	p := w.randomProduct("membership", "generic_link")
	if p == nil {
		return
	}
	typ := "generic_link"
	if p.typ == "membership" {
		typ = "membership_payment"
	}
	u := &unpaid{id: w.newID(), createdAt: at, typ: typ, amount: p.amount, cust: w.randomCustomer(), prod: p}
	if w.rng.IntN(2) == 0 {
		u.payAt = at + 1 + w.rng.Int64N(3*day)
	}
	w.addUnpaid(u)
}

func (w *world) spawnReview(at int64) {
	w.reviews.insert(w.genReview(at, w.randomCustomer(), w.randomProduct()))
}

// spawnLedger moves c's credit on the product c already uses, or a random one, the way the
// seeded history was drawn (ledgerMove); the insert-while-paging fault uses it.
func (w *world) spawnLedger(at int64, c *customer) {
	p := w.creditProducts[w.rng.IntN(len(w.creditProducts))]
	if list := w.ledgerBy[c.id]; len(list) > 0 {
		p = list[len(list)-1].prod
	}
	w.ledgerMove(at, c, p)
}

func (w *world) spawnMemberEvent(at int64) {
	w.addWebhook(w.memberEvent(eventMemberExpired, at, w.randomCustomer()))
}

// genProductActive is a new active product; name, when given, leads its name.
func (w *world) genProductActive(at int64, typ, name string) *product {
	p := w.genProduct(at, typ)
	p.status = "active"
	if name != "" {
		p.name = name + " " + p.name
	}
	return p
}

// SetClock sets the simulated clock, the service's, to t. Forward it is Advance (the world
// evolves on the way); back it is a service whose clock an operator corrected: nothing happens
// on the way, and from then on the service dates new records, changes, ledger entries and
// deliveries by the earlier clock, before those it dated by the reading it had (the lists,
// the credit history and the webhook history keep their own orders). What was due by the
// earlier reading (a payment, an expiry, a delivery's retry) happens when the clock reaches it
// again.
func (s *Server) SetClock(t time.Time) {
	ms := t.UnixMilli()
	s.mu.Lock()
	if d := ms - s.w.now; d > 0 {
		s.mu.Unlock()
		s.Advance(time.Duration(d) * time.Millisecond)
		return
	}
	defer s.mu.Unlock()
	s.gen++
	if n := s.w.webhooks.len(); n > 0 && ms < s.w.now {
		s.w.hookFloor = ms
	}
	s.w.now = ms
}

package sandbox

import (
	"slices"
	"testing"
	"time"
)

// TestCreditMovesForAReason: once the clock runs, every ledger entry has the cause the simulator's
// reading of the spec gives it (doc.go, "Credit"), and those that pass through the API leave
// their trace: a TOPUP is a paid checkout of the product by that customer, an EXPIRE_VOID comes
// at an entry's expiredAt and voids no more than is left, a TRIAL_TOPUP is a customer's first
// entry; usage is the customers' own, heavy-tailed.
func TestCreditMovesForAReason(t *testing.T) {
	s, _ := newTest(t, Options{Scale: 1, Seed: 42})
	w := s.w
	seeded := map[*ledgerEntry]bool{}
	for _, l := range w.ledger.items {
		seeded[l] = true
	}
	start := w.now
	// A trial of long ago that expires in two days: its holder has not used credit since, so
	// it keeps that pace (one use in 90 days) and the trial is still there when it expires.
	var rare *customer
	for _, c := range w.customers.items {
		if len(w.ledgerBy[c.id]) == 0 && c.createdAt < start-300*day {
			rare = c
			break
		}
	}
	lot := w.newLedger(start-300*day, rare, w.creditProducts[0], "TRIAL_TOPUP", 5000, 0)
	lot.expiredAt = start + 2*day
	w.addLedger(lot)
	const days = 30
	movers := make([]map[ID]bool, days)
	for d := range days {
		s.Advance(24 * time.Hour)
		movers[d] = map[ID]bool{}
		for _, l := range w.ledger.items {
			if !seeded[l] && l.createdAt > w.now-day {
				movers[d][l.cust.id] = true
			}
		}
	}
	paid := map[[3]any]bool{} // customer, product, time of a payment.received webhook
	for _, h := range w.webhooks.items {
		if h.event == eventReceived {
			paid[[3]any{h.data.custID, h.data.linkID, h.data.at}] = true
		}
	}
	types := map[string]int{}
	uses := map[ID]int{}
	voided := false
	for _, l := range w.ledger.items {
		if l.cust == rare && l.typ == "EXPIRE_VOID" && l.createdAt == lot.expiredAt && l.debit > 0 {
			voided = true
		}
		if seeded[l] || l == lot {
			continue
		}
		types[l.typ]++
		list := w.ledgerBy[l.cust.id]
		switch l.typ {
		case "TOPUP":
			if !paid[[3]any{l.cust.id, l.prod.id, l.createdAt}] {
				t.Errorf("TOPUP %s of customer %s at %d: no payment of product %s by that customer then", l.id, l.cust.id, l.createdAt, l.prod.id)
			}
		case "EXPIRE_VOID":
			i := slices.IndexFunc(list, func(e *ledgerEntry) bool {
				return e.prod == l.prod && e.credit > 0 && e.expiredAt == l.createdAt && e.credit >= l.debit
			})
			if i < 0 {
				t.Errorf("EXPIRE_VOID %s of customer %s at %d: no entry of that product expired then with that much credit", l.id, l.cust.id, l.createdAt)
			}
		case "TRIAL_TOPUP":
			if list[0] != l {
				t.Errorf("TRIAL_TOPUP %s is not customer %s's first entry", l.id, l.cust.id)
			}
		case "CREDIT_USAGE":
			uses[l.cust.id]++
		case "MERCHANT_TOPUP":
		default:
			t.Errorf("entry %s has type %q", l.id, l.typ)
		}
		if l.createdAt <= start {
			t.Errorf("entry %s at %d, before the clock ran from %d", l.id, l.createdAt, start)
		}
	}
	for k, b := range w.balance {
		if b < 0 {
			t.Errorf("balance of %v is %d", k, b)
		}
	}
	if !voided {
		t.Errorf("the trial of customer %s expiring at %d left no EXPIRE_VOID: %v", rare.id, lot.expiredAt, w.ledgerBy[rare.id])
	}
	for _, typ := range []string{"TOPUP", "TRIAL_TOPUP", "CREDIT_USAGE", "MERCHANT_TOPUP"} {
		if types[typ] == 0 {
			t.Errorf("no %s in %d days: %v", typ, days, types)
		}
	}
	counts := make([]int, 0, len(uses))
	total := 0
	for _, n := range uses {
		counts = append(counts, n)
		total += n
	}
	slices.Sort(counts)
	slices.Reverse(counts)
	top := 0
	for _, n := range counts[:len(counts)/10] {
		top += n
	}
	if 4*top < total {
		t.Errorf("usage is not heavy-tailed: the busiest tenth of %d users made %d of %d uses", len(counts), top, total)
	}
	perDay := make([]int, days)
	for d := range days {
		perDay[d] = len(movers[d])
	}
	t.Logf("%d days at scale 1: entries %v; %d of %d holders used credit, the busiest tenth made %d of %d uses; customers with a new entry per day %v",
		days, types, len(uses), len(w.ledgerCusts), top, total, perDay)
}

package sandbox

import (
	"cmp"
	"net/http"
	"slices"
	"time"
)

// A service whose clock, identity or timing is off, as a write's lost answer meets it: the Date header
// runs ahead or behind (on every answer, or on one), the credit history answers entries of another
// customer, the entry add-credit writes carries its time in epoch seconds or shows up late.

// wildDateDefault is how far the wild_date fault moves a Date when WildDateSeconds is 0.
const wildDateDefault = 3 * 365 * 24 * time.Hour

// dateHeader is the Date of an answer: the simulated clock, moved by DateOffsetSeconds, and by
// WildDateSeconds when the answer's fault plan is wild_date.
func (s *Server) dateHeader(p *faultPlan) string {
	s.faults.mu.Lock()
	f := s.faults.f
	s.faults.mu.Unlock()
	t := s.Now().Add(time.Duration(f.DateOffsetSeconds) * time.Second)
	if p != nil && p.kind == FaultWildDate {
		wild := time.Duration(f.WildDateSeconds) * time.Second
		if wild == 0 {
			wild = wildDateDefault
		}
		t = t.Add(wild)
	}
	return t.Format(http.TimeFormat)
}

// topupFaults marks a ledger entry add-credit is writing with the faults configured now. Called under mu.
func (s *Server) topupFaults(l *ledgerEntry) {
	s.faults.mu.Lock()
	f := s.faults.f
	s.faults.mu.Unlock()
	l.epochSecs = f.TopupEpochSeconds
	if f.TopupVisibleAfterMs > 0 {
		l.visibleAt = l.createdAt + f.TopupVisibleAfterMs
	}
}

// historyOf is the ledger a credit-history answer for cust lists, oldest first: cust's own, or under the
// foreign_credit and other_customer_credit faults another customer's with it or instead. The other customer
// is the one whose entry is the latest in the whole ledger (a top-up just written for a neighbour row of the
// same job, typically). Called under mu.
func (s *Server) historyOf(cust *customer, kind FaultKind) []*ledgerEntry {
	own := s.w.ledgerBy[cust.id]
	if kind != FaultForeignCredit && kind != FaultOtherCustomerCredit {
		return own
	}
	var other *customer
	for i := s.w.ledger.len() - 1; i >= 0 && other == nil; i-- {
		if c := s.w.ledger.items[i].cust; c != cust {
			other = c
		}
	}
	if other == nil {
		return own
	}
	if kind == FaultOtherCustomerCredit {
		return s.w.ledgerBy[other.id]
	}
	out := append(append([]*ledgerEntry(nil), own...), s.w.ledgerBy[other.id]...)
	slices.SortStableFunc(out, func(a, b *ledgerEntry) int {
		if c := cmp.Compare(a.createdAt, b.createdAt); c != 0 {
			return c
		}
		return cmp.Compare(a.id.String(), b.id.String())
	})
	return out
}

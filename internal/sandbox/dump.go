package sandbox

import "encoding/json"

// Collections that Dump knows.
var Collections = []string{
	"customers", "products", "payment_requests", "invoices", "unpaid_transactions", "reviews",
	"credit_ledger", "webhook_deliveries", "licenses", "coupons",
}

// Dump returns every record of a collection exactly as its list endpoint
// serves it, in list order, without paging: the ground truth for tests.
// Products are in the search shape (with variants), webhook deliveries in
// ascending createdAt, credit_ledger across all customers newest first.
// Licenses and coupons, which no list serves, carry the fields the write
// endpoints evaluate. An unknown collection gives nil.
func (s *Server) Dump(collection string) []json.RawMessage {
	s.mu.RLock()
	defer s.mu.RUnlock()
	w := s.w
	e := getEnc(w, false)
	defer putEnc(e)
	var out []json.RawMessage
	add := func(write func()) {
		e.b = e.b[:0]
		write()
		out = append(out, json.RawMessage(append([]byte(nil), e.b...)))
	}
	switch collection {
	case "customers":
		dumpDesc(&w.customers, add, e.customer)
	case "products":
		dumpDesc(&w.products, add, func(p *product) { e.product(p, true) })
	case "payment_requests":
		dumpDesc(&w.payReqs, add, e.payReqItem)
	case "invoices":
		dumpDesc(&w.invoices, add, e.invoice)
	case "unpaid_transactions":
		dumpDesc(&w.unpaids, add, e.unpaid)
	case "reviews":
		dumpDesc(&w.reviews, add, e.review)
	case "credit_ledger":
		dumpDesc(&w.ledger, add, e.ledger)
	case "webhook_deliveries":
		for _, h := range w.webhooks.items {
			add(func() { e.webhook(h) })
		}
	case "licenses":
		for _, l := range w.licenses {
			add(func() { e.license(l) })
		}
	case "coupons":
		for _, c := range w.coupons {
			add(func() { e.couponDump(c) })
		}
	}
	return out
}

func dumpDesc[T keyed](c *sortedColl[T], add func(func()), write func(T)) {
	for i := 0; i < c.len(); i++ {
		v := c.desc(i)
		add(func() { write(v) })
	}
}

package sandbox

import "encoding/json"

// Dump returns every record of a collection exactly as its list endpoint
// serves it, in list order, without paging: the ground truth for tests.
// Products are in the search shape (with variants), webhook deliveries in
// ascending createdAt, credit_ledger across all customers newest first.
// Licenses and coupons, which no list serves, carry the fields the write
// endpoints evaluate. An unknown collection gives nil. Collections
// (collections.go) names them.
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
	for _, c := range collections {
		if c.name == collection {
			c.dump(w, e, add)
		}
	}
	return out
}

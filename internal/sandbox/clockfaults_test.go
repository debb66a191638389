package sandbox

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestClockIdentityTimingFaults: the faults of a service whose clock, identity or timing is off do what
// they say, and only that: Date moved on every answer or on one; another customer's entries with or
// instead of the customer's; the entry add-credit writes in epoch seconds, or shown only after a delay on
// the simulated clock (its balance at once); a record giving its id twice.
func TestClockIdentityTimingFaults(t *testing.T) {
	s, ts := newTest(t, Options{})
	l := dumped(t, s, "credit_ledger")[0]
	cust, prod := str(l["customerId"]), str(l["productId"])
	history := "/credit/v1/credit/customer/paginate-credit-history/" + cust + "?limit=100"
	date := func(r reply) time.Time {
		t.Helper()
		d, err := http.ParseTime(r.header.Get("Date"))
		if err != nil {
			t.Fatalf("Date %q: %v", r.header.Get("Date"), err)
		}
		return d
	}
	owners := func(r reply) map[string]int {
		out := map[string]int{}
		for _, e := range items(mustOK(t, r)) {
			out[str(e["customerId"])]++
		}
		return out
	}

	if d := date(get(t, ts, history)); !d.Equal(s.Now().Truncate(time.Second)) {
		t.Errorf("Date %v, want the simulated clock %v", d, s.Now())
	}
	mustSet := func(f Faults) {
		t.Helper()
		if err := s.SetFaults(f); err != nil {
			t.Fatal(err)
		}
	}
	mustSet(Faults{DateOffsetSeconds: -3600})
	if d := date(get(t, ts, history)); !d.Equal(s.Now().Truncate(time.Second).Add(-time.Hour)) {
		t.Errorf("Date %v with an offset of -1h, want %v", d, s.Now().Add(-time.Hour))
	}
	mustSet(Faults{})
	if err := s.FailNext(FaultWildDate, 1, "/credit/"); err != nil {
		t.Fatal(err)
	}
	wild, calm := date(get(t, ts, history)), date(get(t, ts, history))
	if wild.Sub(s.Now()) < 365*24*time.Hour || calm.Sub(s.Now()).Abs() > time.Second {
		t.Errorf("one wild Date: %v then %v (clock %v)", wild, calm, s.Now())
	}

	own := owners(get(t, ts, history))
	if len(own) != 1 || own[cust] == 0 {
		t.Fatalf("the history of %s holds %v", cust, own)
	}
	mustSet(Faults{ForeignCredit: 1})
	if mixed := owners(get(t, ts, history)); len(mixed) != 2 || mixed[cust] != own[cust] {
		t.Errorf("foreign_credit: %v, want the customer's %d entries and another's", mixed, own[cust])
	}
	mustSet(Faults{OtherCustomerCredit: 1})
	if other := owners(get(t, ts, history)); len(other) != 1 || other[cust] != 0 {
		t.Errorf("other_customer_credit: %v, want another customer's entries only", other)
	}

	mustSet(Faults{TopupEpochSeconds: true, TopupVisibleAfterMs: 10_000})
	before := len(items(mustOK(t, get(t, ts, history))))
	mustOK(t, post(t, ts, "/credit/v1/credit/customer/add-credit", map[string]any{"customerId": cust, "productId": prod, "amount": 5}))
	if n := len(items(mustOK(t, get(t, ts, history)))); n != before {
		t.Errorf("the new entry shows at once: %d entries, want %d", n, before)
	}
	s.Advance(10 * time.Second)
	es := items(mustOK(t, get(t, ts, history)))
	if len(es) != before+1 {
		t.Fatalf("10 s later %d entries, want %d", len(es), before+1)
	}
	seconds := 0
	for _, e := range es {
		if v, ok := e["createdAt"].(float64); ok && int64(v) < 1e10 {
			seconds++
		}
	}
	if seconds != 1 {
		t.Errorf("%d entries with createdAt in epoch seconds, want the new one only", seconds)
	}

	mustSet(Faults{RepeatedKey: 1})
	r := get(t, ts, history)
	if key := repeated(r.body); key != "id" {
		t.Errorf("repeated_key: the page repeats %q, want id", key)
	}
}

// repeated is "id" when the first record of a page gives its id twice, "" otherwise.
func repeated(body []byte) string {
	s := string(body)
	at := strings.Index(s, `{"id":"`)
	if at < 0 {
		return ""
	}
	rec := s[at : at+strings.Index(s[at:], "}")]
	if strings.Count(rec, `"id":"`) == 2 {
		return "id"
	}
	return ""
}

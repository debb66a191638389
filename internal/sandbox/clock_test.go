package sandbox

import (
	"bytes"
	"fmt"
	"net/http"
	"testing"
	"time"
)

func TestClockAndDateHeader(t *testing.T) {
	s, ts := newTest(t, Options{Admin: true})
	r := get(t, ts, "/hl/v1/customer")
	if d, err := http.ParseTime(r.header.Get("Date")); err != nil || !d.Equal(testNow) {
		t.Errorf("Date header %q, want the simulated %v", r.header.Get("Date"), testNow)
	}
	s.Advance(90 * time.Minute)
	if got := s.Now(); !got.Equal(testNow.Add(90 * time.Minute)) {
		t.Errorf("Now %v after 90 minutes", got)
	}
	mustOK(t, do(t, ts, "POST", "/__sandbox/advance?hours=2", "", nil))
	mustOK(t, do(t, ts, "POST", "/__sandbox/advance?minutes=30", "", nil))
	m := mustOK(t, do(t, ts, "GET", "/__sandbox/now", "", nil))
	if num(m["nowMs"]) != testNow.Add(4*time.Hour).UnixMilli() {
		t.Errorf("admin now %v, want %v", m["nowMs"], testNow.Add(4*time.Hour).UnixMilli())
	}
	if r := do(t, ts, "POST", "/__sandbox/advance?hours=-1", "", nil); r.status != http.StatusBadRequest {
		t.Errorf("negative advance: %d", r.status)
	}
	if r := do(t, ts, "GET", "/__sandbox/whatever", "", nil); r.status != http.StatusNotFound {
		t.Errorf("unknown admin path: %d", r.status)
	}
}

// TestAdvanceEvolves: a month passes and the world changes the way the brief lists.
func TestAdvanceEvolves(t *testing.T) {
	s, ts := newTest(t, Options{Scale: 0.2})
	before := map[string][]map[string]any{}
	for _, c := range Collections {
		before[c] = dumped(t, s, c)
	}
	activeInv := map[string]bool{}
	for _, i := range before["invoices"] {
		if i["status"] == "active" {
			activeInv[str(i["id"])] = true
		}
	}
	s.Advance(30 * 24 * time.Hour)
	after := map[string][]map[string]any{}
	for _, c := range Collections {
		after[c] = dumped(t, s, c)
	}
	byID := func(list []map[string]any) map[string]map[string]any {
		out := map[string]map[string]any{}
		for _, m := range list {
			out[str(m["id"])] = m
		}
		return out
	}
	t.Run("new records", func(t *testing.T) {
		for _, c := range []string{"customers", "invoices", "reviews", "credit_ledger", "webhook_deliveries"} {
			old := byID(before[c])
			fresh := 0
			for _, m := range after[c] {
				if _, ok := old[str(m["id"])]; !ok {
					fresh++
				}
			}
			if fresh == 0 {
				t.Errorf("%s: nothing new after 30 days", c)
			}
		}
	})
	t.Run("invoices paid and closed leave the unpaid list", func(t *testing.T) {
		inv := byID(after["invoices"])
		unpaid := map[string]bool{}
		for _, u := range after["unpaid_transactions"] {
			unpaid[str(u["paymentLinkId"])] = true
		}
		paid, closed := 0, 0
		for id := range activeInv {
			switch i := inv[id]; i["status"] {
			case "paid":
				paid++
				if i["transactions"].([]any)[0].(map[string]any)["status"] != "paid" || unpaid[id] {
					t.Errorf("paid invoice %s: transaction %v, still unpaid %v", id, i["transactions"], unpaid[id])
				}
			case "closed":
				closed++
				if unpaid[id] {
					t.Errorf("closed invoice %s still unpaid", id)
				}
			}
		}
		if paid == 0 || closed == 0 {
			t.Errorf("of %d active invoices %d paid, %d closed", len(activeInv), paid, closed)
		}
		received := 0
		for _, h := range after["webhook_deliveries"][len(before["webhook_deliveries"]):] {
			if h["type"] == eventReceived {
				received++
			}
		}
		if received < paid {
			t.Errorf("%d payment.received webhooks for %d paid invoices", received, paid)
		}
	})
	t.Run("deliveries settle", func(t *testing.T) {
		old := byID(before["webhook_deliveries"])
		changed := 0
		for _, h := range after["webhook_deliveries"] {
			if o, ok := old[str(h["id"])]; ok && o["status"] == "PENDING" && h["status"] != "PENDING" {
				changed++
				if h["updatedAt"] == nil || h["responsePayload"] == nil {
					t.Errorf("settled delivery without updatedAt/responsePayload: %v", h)
				}
			}
		}
		if changed == 0 {
			t.Error("no pending delivery settled")
		}
	})
	t.Run("hard deletes and e-mail changes", func(t *testing.T) {
		gone := 0
		now := byID(after["payment_requests"])
		for _, p := range before["payment_requests"] {
			if _, ok := now[str(p["id"])]; !ok {
				gone++
			}
		}
		renamed := 0
		cs := byID(after["customers"])
		for _, c := range before["customers"] {
			if cs[str(c["id"])]["email"] != c["email"] {
				renamed++
			}
		}
		if gone == 0 || renamed == 0 {
			t.Errorf("%d payment requests deleted, %d customers renamed", gone, renamed)
		}
	})
	t.Run("ledger stays non-negative", func(t *testing.T) {
		bal := map[string]int64{}
		l := after["credit_ledger"]
		for i := len(l) - 1; i >= 0; i-- {
			k := str(l[i]["customerId"]) + str(l[i]["productId"])
			if bal[k] += num(l[i]["credit"]) - num(l[i]["debit"]); bal[k] < 0 {
				t.Fatalf("balance of %s negative", k)
			}
		}
	})
	t.Run("lists stay newest first", func(t *testing.T) {
		m := mustOK(t, get(t, ts, "/hl/v1/invoice?pageSize=100"))
		prev := int64(1 << 62)
		for _, it := range items(m) {
			if num(it["createdAt"]) > prev {
				t.Fatal("invoice list out of order after Advance")
			}
			prev = num(it["createdAt"])
		}
	})
}

// TestDeterminism: the same seed, scale, clock and calls give the same bytes.
func TestDeterminism(t *testing.T) {
	paths := []string{"/hl/v1/customer?pageSize=100", "/hl/v1/invoice?page=2&pageSize=50", "/hl/v1/payment", "/hl/v1/product?search=a",
		"/hl/v1/transactions/unpaid?pageSize=100", "/hl/v1/reviews", "/hl/v2/webhooks/new-history?limit=50", "/hl/v1/product/type/saas"}
	run := func(seed int64) [][]byte {
		s, ts := newTest(t, Options{Seed: seed, Scale: 0.1})
		var out [][]byte
		collect := func() {
			for _, p := range paths {
				out = append(out, get(t, ts, p).body)
			}
			for _, c := range Collections {
				for _, raw := range s.Dump(c) {
					out = append(out, raw)
				}
			}
		}
		collect()
		post(t, ts, "/hl/v1/invoice/create", map[string]any{"name": "A", "email": "a@example.com", "mobile": "62", "redirectUrl": "https://x",
			"description": "d", "expiredAt": "2025-09-10T00:00:00Z", "items": []any{map[string]any{"quantity": 1, "rate": 1000, "description": "x"}}})
		s.Advance(72 * time.Hour)
		collect()
		return out
	}
	a, b, c := run(11), run(11), run(12)
	if len(a) != len(b) {
		t.Fatalf("%d vs %d responses for the same seed", len(a), len(b))
	}
	for i := range a {
		if !bytes.Equal(a[i], b[i]) {
			t.Fatalf("response %d differs between two runs of seed 11", i)
		}
	}
	same := 0
	for i := range paths {
		if bytes.Equal(a[i], c[i]) {
			same++
		}
	}
	if same > 0 {
		t.Errorf("%d responses identical across seeds 11 and 12", same)
	}
}

func TestSeedSizes(t *testing.T) {
	s, _ := newTest(t, Options{Scale: 1})
	want := map[string][2]int{
		"customers": {1800, 2200}, "products": {270, 330}, "payment_requests": {1400, 1600}, "invoices": {1400, 1600},
		"unpaid_transactions": {500, 1100}, "reviews": {1400, 1600}, "credit_ledger": {1400, 2600}, "webhook_deliveries": {1200, 2600},
		"licenses": {180, 220}, "coupons": {40, 55},
	}
	total := 0
	for c, r := range want {
		n := len(s.Dump(c))
		total += n
		if n < r[0] || n > r[1] {
			t.Errorf("%s: %d records at scale 1, want %d..%d", c, n, r[0], r[1])
		}
	}
	if total < 9000 || total > 14000 {
		t.Errorf("%d records at scale 1, want about 10,000", total)
	}
	types := map[string]int{}
	for _, p := range dumped(t, s, "products") {
		types[str(p["type"])]++
	}
	if len(types) != len(productTypes) {
		t.Errorf("%d product types, want all %d: %v", len(types), len(productTypes), types)
	}
	emails := map[string]int{}
	malformed := 0
	for _, c := range dumped(t, s, "customers") {
		e := str(c["email"])
		emails[lower(e)]++
		if !contains(e, "@") || contains(e, " ") {
			malformed++
		}
	}
	dups := 0
	for _, n := range emails {
		if n > 1 {
			dups++
		}
	}
	if dups == 0 || malformed == 0 {
		t.Errorf("%d duplicate and %d malformed e-mails; the data-quality report needs some", dups, malformed)
	}
}

func lower(s string) string { return string(bytes.ToLower([]byte(s))) }

// TestConcurrentUse runs readers, writers and the clock together (meaningful under -race).
func TestConcurrentUse(t *testing.T) {
	s, ts := newTest(t, Options{})
	l := dumped(t, s, "credit_ledger")[0]
	done := make(chan struct{})
	for g := 0; g < 4; g++ {
		go func() {
			defer func() { done <- struct{}{} }()
			for i := 0; i < 20; i++ {
				get(t, ts, "/hl/v1/invoice?sort=active&page=2")
				post(t, ts, "/credit/v1/credit/customer/add-credit", map[string]any{"customerId": l["customerId"], "productId": l["productId"], "amount": 1})
				s.Advance(time.Hour)
			}
		}()
	}
	for g := 0; g < 4; g++ {
		<-done
	}
	if got := s.Now(); !got.Equal(testNow.Add(80 * time.Hour).Add(80 * time.Millisecond)) {
		t.Errorf("clock %v after 80 one-hour advances and 80 writes", got)
	}
}

// TestSetClockBack: the service's clock 48 hours ahead, then set right (PUT /__sandbox/clock):
// the world evolves from the earlier time, and what it dates then lands before what it dated
// ahead, each history still in createdAt order: deliveries unique and ascending (the webhook
// cursor's order), every customer's credit entries ascending (the credit history's).
func TestSetClockBack(t *testing.T) {
	s, ts := newTest(t, Options{Scale: 1, Admin: true})
	s.Advance(48 * time.Hour)
	ahead := s.Now()
	hooks, entries := s.w.webhooks.len(), s.w.ledger.len()
	seen := map[any]bool{}
	for _, h := range s.w.webhooks.items {
		seen[h] = true
	}
	for _, l := range s.w.ledger.items {
		seen[l] = true
	}
	if r := do(t, ts, "PUT", "/__sandbox/clock?now=yesterday", "", nil); r.status != http.StatusBadRequest {
		t.Errorf("a clock set to %q: %d, want 400", "yesterday", r.status)
	}
	m := mustOK(t, do(t, ts, "PUT", "/__sandbox/clock?now="+testNow.Format(time.RFC3339), "", nil))
	if got := s.Now(); !got.Equal(testNow) || str(m["messages"]) != "clock set" {
		t.Fatalf("the clock set back reads %v (%v), want %v", got, m, testNow)
	}
	s.Advance(36 * time.Hour)
	var earlierHooks, earlierEntries int // new, dated before the clock's reading when it was set back
	for _, h := range s.w.webhooks.items {
		if !seen[h] && h.createdAt < ahead.UnixMilli() {
			earlierHooks++
		}
	}
	for i := 1; i < s.w.webhooks.len(); i++ {
		if a, b := s.w.webhooks.items[i-1].createdAt, s.w.webhooks.items[i].createdAt; a >= b {
			t.Fatalf("deliveries %d and %d dated %d, %d: want unique and ascending", i-1, i, a, b)
		}
	}
	for id, list := range s.w.ledgerBy {
		for i := 1; i < len(list); i++ {
			if list[i-1].createdAt > list[i].createdAt {
				t.Fatalf("customer %s: credit entries %d and %d out of createdAt order", id, i-1, i)
			}
		}
	}
	for _, l := range s.w.ledger.items {
		if !seen[l] && l.createdAt < ahead.UnixMilli() {
			earlierEntries++
		}
	}
	if s.w.webhooks.len() <= hooks || s.w.ledger.len() <= entries || earlierHooks == 0 || earlierEntries == 0 {
		t.Fatalf("a day after the clock was set back from %v: %d deliveries (%d before), %d dated by the earlier clock; "+
			"%d credit entries (%d before), %d dated by it: the test proves nothing", ahead, s.w.webhooks.len(), hooks, earlierHooks,
			s.w.ledger.len(), entries, earlierEntries)
	}
	// the webhook history over HTTP, paged by its cursor from the start: every delivery, ascending
	n, after, last := 0, int64(0), int64(0)
	for {
		p := mustOK(t, get(t, ts, fmt.Sprintf("/hl/v2/webhooks/new-history?limit=50&startingAfter=%d", after)))
		data, _ := p["data"].([]any)
		for _, d := range data {
			created, err := time.Parse(time.RFC3339, str(d.(map[string]any)["createdAt"]))
			if err != nil {
				t.Fatal(err)
			}
			at := created.UnixMilli()
			if at <= last {
				t.Fatalf("the history lists %d after %d", at, last)
			}
			last = at
			n++
		}
		if p["hasMore"] != true || len(data) == 0 {
			break
		}
		after = num(p["nextStartingAfter"])
	}
	if n != s.w.webhooks.len() {
		t.Errorf("the history paged by its cursor lists %d deliveries, the service holds %d", n, s.w.webhooks.len())
	}
	// forward, SetClock is Advance
	s.SetClock(s.Now().Add(time.Hour))
	if got := s.Now(); !got.Equal(testNow.Add(37 * time.Hour)) {
		t.Errorf("the clock set an hour forward reads %v", got)
	}
}

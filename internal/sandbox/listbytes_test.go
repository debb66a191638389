package sandbox

import (
	"crypto/sha256"
	"fmt"
	"hash"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// listBytesFaults are the faults whose effect on a GET this guard captures: every kind a GET can
// meet except those that hijack the connection or sleep (reset, truncate_drop, slow), which write
// nothing a recorder can hold.
var listBytesFaults = []FaultKind{
	FaultNone, FaultRateLimit, FaultServerError, FaultTruncate, FaultStringNumbers, FaultInsertWhilePaging,
	FaultDuplicatePage, FaultEndlessList, FaultSamePageForever, FaultInflatedPageCount,
	FaultConflictingDuplicate, FaultCursorLoop, FaultEndlessCredit, FaultEpochSeconds, FaultEpochZero,
	FaultEpochMicros, FaultFutureTime, FaultRedirect, FaultEchoKey500, FaultHasMoreString, FaultNullData,
	FaultUnannouncedEndless, FaultDotIDs, FaultDateAhead, FaultRepeatedKey, FaultWildDate,
	FaultForeignCredit, FaultOtherCustomerCredit, FaultEchoKeyRecord, FaultInvalidUTF8,
}

// listBytesCollections are the collections whose Dump the guard holds: those there were when its
// hashes were taken (a collection declared since adds its own bytes, which the guard cannot know).
var listBytesCollections = []string{
	"customers", "products", "payment_requests", "invoices", "unpaid_transactions", "reviews",
	"credit_ledger", "webhook_deliveries", "licenses", "coupons",
}

// listBytesPaths are every list the simulator serves with each filter it takes, and a few bad requests.
func listBytesPaths() []string {
	paths := []string{
		"/hl/v1/customer", "/hl/v1/invoice", "/hl/v1/payment", "/hl/v1/product", "/hl/v1/product?search=kelas",
		"/hl/v1/product?search=%20ZAKAT%20", "/hl/v1/transactions/unpaid", "/hl/v1/reviews",
	}
	for _, s := range []string{"active", "paid", "close", "closed"} {
		paths = append(paths, "/hl/v1/invoice?sort="+s, "/hl/v1/payment?status="+s)
	}
	for _, typ := range productTypes {
		paths = append(paths, "/hl/v1/product/type/"+typ)
	}
	return paths
}

// listBytesRun is the whole HTTP output of one sandbox under one order and fault, hashed: every list
// paged under several sizes, the other GET endpoints, bad requests, then the same after the world
// has evolved, and every collection's Dump.
func listBytesRun(t *testing.T, order ListOrder, fault FaultKind) string {
	s, err := New(Options{Seed: 11, Scale: 0.03, Now: testNow, ListOrder: order, Admin: true})
	if err != nil {
		t.Fatal(err)
	}
	if fault != FaultNone {
		if err := s.FailNext(fault, 1<<30, "/"); err != nil {
			t.Fatal(err)
		}
	}
	h := sha256.New()
	get := func(path string) {
		req := httptest.NewRequest(http.MethodGet, "http://sandbox.test"+path, nil)
		req.Header.Set("Authorization", "Bearer "+DefaultKey)
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, req)
		fmt.Fprintf(h, "%s %d", path, rec.Code)
		for _, k := range []string{"Content-Type", "Content-Length", "Date", "Retry-After", "Location", "Allow"} {
			fmt.Fprintf(h, " %s=%q", k, rec.Header().Get(k))
		}
		fmt.Fprintf(h, "\n%s\n", rec.Body.Bytes())
	}
	round := func() {
		for _, p := range listBytesPaths() {
			sep := "?"
			if strings.Contains(p, "?") {
				sep = "&"
			}
			get(p)
			for page := 1; page <= 4; page++ {
				get(fmt.Sprintf("%s%spage=%d&pageSize=7", p, sep, page))
			}
			get(p + sep + "page=0&pageSize=0")
			get(p + sep + "page=1&pageSize=1000")
			get(p + sep + "page=2&pageSize=30")
			get(p + sep + "page=999&pageSize=100")
		}
		for _, p := range []string{
			"/hl/v1/invoice?sort=bogus", "/hl/v1/payment?status=bogus", "/hl/v1/product/type/bogus",
			"/hl/v1/customer?page=abc", "/hl/v1/reviews?pageSize=x", "/hl/v1/nothing", "/hl/v1/product/type/",
		} {
			get(p)
		}
		s.mu.RLock()
		cust := s.w.ledgerCusts[0].id.String()
		prod := s.w.products.items[0].id.String()
		pr := s.w.payReqs.items[0].id.String()
		s.mu.RUnlock()
		get("/credit/v1/credit/customer/paginate-credit-history/" + cust + "?limit=3&page=2")
		get("/hl/v1/product/" + prod)
		get("/hl/v1/payment/" + pr)
		get("/hl/v2/webhooks/new-history?limit=5")
		get("/hl/v2/webhooks/new-history?limit=5&startingAfter=0")
	}
	round()
	s.Advance(50 * time.Hour)
	round()
	for _, c := range listBytesCollections {
		fmt.Fprintf(h, "dump %s\n", c)
		for _, raw := range s.Dump(c) {
			h.Write(raw)
			h.Write([]byte{'\n'})
		}
	}
	return sum(h)
}

func sum(h hash.Hash) string { return fmt.Sprintf("%x", h.Sum(nil)) }

// TestListBytes holds the simulator's output byte for byte: every list endpoint, under every list
// order and every list fault, before and after the world evolves, and every collection's Dump. The
// hashes in testdata/listbytes.golden were taken before the collections became declarations; a
// change of any byte a client or a downstream golden could see fails here.
func TestListBytes(t *testing.T) {
	var b strings.Builder
	for _, o := range ListOrders {
		for _, f := range listBytesFaults {
			name := string(f)
			if name == "" {
				name = "none"
			}
			fmt.Fprintf(&b, "%s %s %s\n", o, name, listBytesRun(t, o, f))
		}
	}
	path := filepath.Join("testdata", "listbytes.golden")
	if *update {
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("golden %s: %v", path, err)
	}
	got := strings.Split(b.String(), "\n")
	for i, w := range strings.Split(string(want), "\n") {
		if i >= len(got) || got[i] != w {
			t.Errorf("line %d: got %q, want %q", i+1, slices.Concat(got[i:min(i+1, len(got))]), w)
		}
	}
	if len(got) != len(strings.Split(string(want), "\n")) {
		t.Errorf("%d lines, want %d", len(got), len(strings.Split(string(want), "\n")))
	}
}

package sandbox

import (
	"fmt"
	"net/http"
	"slices"
	"testing"
)

// TestListOrders: under every order each paged list returns every record of
// the ground truth exactly once, in the order's sequence, the same on every
// walk; shuffle differs from newest first and is deterministic.
func TestListOrders(t *testing.T) {
	lists := []struct {
		path, coll, totalKey string
		keep                 func(map[string]any) bool
		updatedKey           string // field whose value orders OrderUpdated; "" = not checked
	}{
		{"/hl/v1/customer", "customers", "totalCustomer", nil, "updatedAt"},
		{"/hl/v1/invoice", "invoices", "total", nil, ""},
		{"/hl/v1/invoice?sort=paid", "invoices", "total", func(m map[string]any) bool { return m["status"] == "paid" }, ""},
		{"/hl/v1/payment", "payment_requests", "", nil, ""},
		{"/hl/v1/transactions/unpaid", "unpaid_transactions", "total", nil, ""},
		{"/hl/v1/reviews", "reviews", "total", nil, "updatedAt"},
		{"/hl/v1/product", "products", "total", nil, ""},
		{"/hl/v1/product?search=a", "products", "total", nil, ""},
		{"/hl/v1/product/type/course", "products", "total", func(m map[string]any) bool { return m["type"] == "course" && m["status"] != "deleted" }, ""},
	}
	newest := map[string][]string{}
	for _, order := range ListOrders {
		s, ts := newTest(t, Options{Scale: 0.05, ListOrder: order})
		getter := func(p string) map[string]any { return mustOK(t, get(t, ts, p)) }
		for _, tc := range lists {
			t.Run(fmt.Sprintf("%s %s", order, tc.path), func(t *testing.T) {
				var want []string
				for _, m := range dumped(t, s, tc.coll) {
					if tc.keep == nil || tc.keep(m) {
						want = append(want, str(m["id"]))
					}
				}
				if tc.path == "/hl/v1/product?search=a" {
					want = nil // checked against newest first below
				}
				got := pageAll(t, getter, tc.path, 7, tc.totalKey)
				if again := pageAll(t, getter, tc.path, 13, tc.totalKey); !slices.Equal(got, again) {
					t.Fatal("two walks with different page sizes disagree: the order is not stable")
				}
				if len(got) < 2 {
					t.Fatalf("only %d records prove nothing", len(got))
				}
				switch order {
				case OrderNewest:
					newest[tc.path] = got
					if want != nil && !slices.Equal(got, want) {
						t.Fatal("newest first differs from the ground truth's order")
					}
					return
				case OrderShuffle:
					if len(got) > 5 && slices.Equal(got, newest[tc.path]) {
						t.Fatal("shuffle returned newest first")
					}
				}
				if !slices.Equal(sorted(got), sorted(newest[tc.path])) {
					t.Fatalf("%d records, newest first had %d: not the same set", len(got), len(newest[tc.path]))
				}
				if order == OrderUpdated && tc.updatedKey != "" {
					m := map[string]int64{}
					for _, r := range dumped(t, s, tc.coll) {
						m[str(r["id"])] = max(num(r[tc.updatedKey]), num(r["createdAt"]))
					}
					for i := 1; i < len(got); i++ {
						if m[got[i]] > m[got[i-1]] {
							t.Fatalf("item %d changed at %d after item %d at %d", i, m[got[i]], i-1, m[got[i-1]])
						}
					}
					if tc.coll == "customers" && slices.Equal(got, newest[tc.path]) {
						t.Fatal("recently updated first is newest first")
					}
				}
			})
		}
	}

	t.Run("shuffle is the same on every server of the same seed", func(t *testing.T) {
		walk := func() []string {
			_, ts := newTest(t, Options{Scale: 0.05, ListOrder: OrderShuffle})
			return pageAll(t, func(p string) map[string]any { return mustOK(t, get(t, ts, p)) }, "/hl/v1/customer", 50, "totalCustomer")
		}
		if !slices.Equal(walk(), walk()) {
			t.Error("two servers of seed 7 shuffle differently")
		}
	})
}

// TestListOrderAdmin: the order is set through the admin path and checked.
func TestListOrderAdmin(t *testing.T) {
	_, ts := newTest(t, Options{Scale: 0.05, Admin: true})
	first := func() string { return str(items(mustOK(t, get(t, ts, "/hl/v1/customer?pageSize=1")))[0]["id"]) }
	before := first()
	if r := do(t, ts, http.MethodPut, "/__sandbox/list-order?order=shuffle", "", nil); r.status != 200 {
		t.Fatalf("PUT list-order: %d %s", r.status, r.body)
	}
	if got := str(mustOK(t, get(t, ts, "/__sandbox/list-order"))["order"]); got != "shuffle" {
		t.Errorf("GET list-order: %q", got)
	}
	if first() == before {
		t.Error("shuffle kept the newest customer first")
	}
	r := do(t, ts, http.MethodPut, "/__sandbox/list-order?order=oldest", "", nil)
	if r.status != 400 || !contains(string(r.body), "newest, updated, shuffle") {
		t.Errorf("bad order: %d %s", r.status, r.body)
	}
	if _, err := New(Options{ListOrder: "sideways"}); err == nil {
		t.Error("New accepted list order sideways")
	}
}

func sorted(s []string) []string {
	c := slices.Clone(s)
	slices.Sort(c)
	return c
}

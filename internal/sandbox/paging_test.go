package sandbox

import (
	"fmt"
	"net/url"
	"slices"
	"testing"
)

// pageAll walks a paged list and returns the ids in order, checking the
// envelope's arithmetic on every page.
func pageAll(t *testing.T, get func(string) map[string]any, path string, size int, totalKey string) []string {
	t.Helper()
	var ids []string
	for page := 1; ; page++ {
		m := get(fmt.Sprintf("%s%spage=%d&pageSize=%d", path, sepFor(path), page, size))
		total := num(m[totalKey])
		if totalKey == "" {
			total = -1
		}
		pc, ps := num(m["pageCount"]), num(m["pageSize"])
		if ps != int64(size) || num(m["page"]) != int64(page) {
			t.Fatalf("%s page %d: pageSize %d page %v", path, page, ps, m["page"])
		}
		if total >= 0 && pc != (total+ps-1)/ps {
			t.Fatalf("%s: pageCount %d for total %d size %d", path, pc, total, ps)
		}
		its := items(m)
		for _, it := range its {
			ids = append(ids, str(it["id"]))
		}
		if m["hasMore"] != (int64(page) < pc) {
			t.Fatalf("%s page %d: hasMore %v with pageCount %d", path, page, m["hasMore"], pc)
		}
		if m["hasMore"] == false {
			if int64(page) <= pc && len(its) == 0 && pc > 0 {
				t.Fatalf("%s: last page %d empty", path, page)
			}
			return ids
		}
		if len(its) != size {
			t.Fatalf("%s page %d: %d items, want a full page of %d", path, page, len(its), size)
		}
	}
}

func sepFor(path string) string {
	if contains(path, "?") {
		return "&"
	}
	return "?"
}

// TestPagingEveryRecordOnce: with nothing changing, paging each list returns
// every record of the ground truth exactly once, in order.
func TestPagingEveryRecordOnce(t *testing.T) {
	s, ts := newTest(t, Options{Scale: 0.1})
	getter := func(p string) map[string]any { return mustOK(t, get(t, ts, p)) }
	tests := []struct {
		path, coll, totalKey string
		keep                 func(map[string]any) bool
	}{
		{"/hl/v1/customer", "customers", "totalCustomer", nil},
		{"/hl/v1/invoice", "invoices", "total", nil},
		{"/hl/v1/invoice?sort=paid", "invoices", "total", func(m map[string]any) bool { return m["status"] == "paid" }},
		{"/hl/v1/invoice?sort=close", "invoices", "total", func(m map[string]any) bool { return m["status"] == "closed" }},
		{"/hl/v1/payment", "payment_requests", "", nil},
		{"/hl/v1/payment?status=active", "payment_requests", "", func(m map[string]any) bool { return m["status"] == "unpaid" }},
		{"/hl/v1/transactions/unpaid", "unpaid_transactions", "total", nil},
		{"/hl/v1/reviews", "reviews", "total", nil},
		{"/hl/v1/product", "products", "total", nil},
		{"/hl/v1/product/type/course", "products", "total", func(m map[string]any) bool { return m["type"] == "course" && m["status"] != "deleted" }},
	}
	for _, tc := range tests {
		for _, size := range []int{7, 100} {
			t.Run(fmt.Sprintf("%s size %d", tc.path, size), func(t *testing.T) {
				var want []string
				for _, m := range dumped(t, s, tc.coll) {
					if tc.keep == nil || tc.keep(m) {
						want = append(want, str(m["id"]))
					}
				}
				got := pageAll(t, getter, tc.path, size, tc.totalKey)
				if !slices.Equal(got, want) {
					t.Fatalf("paged %d ids, ground truth %d; differ", len(got), len(want))
				}
				if len(want) == 0 {
					t.Fatal("empty collection proves nothing")
				}
			})
		}
	}
}

func TestPageParameters(t *testing.T) {
	_, ts := newTest(t, Options{MaxPageSize: 25})
	tests := []struct {
		query              string
		page, size, nItems int64
		hasMore            bool
	}{
		{"", 1, 10, 10, true},
		{"?pageSize=1000", 1, 25, 25, true},
		{"?pageSize=0", 1, 10, 10, true},
		{"?pageSize=-3&page=0", 1, 10, 10, true},
		{"?page=9999", 9999, 10, 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.query, func(t *testing.T) {
			m := mustOK(t, get(t, ts, "/hl/v1/customer"+tc.query))
			if num(m["page"]) != tc.page || num(m["pageSize"]) != tc.size || int64(len(items(m))) != tc.nItems || m["hasMore"] != tc.hasMore {
				t.Errorf("page %v pageSize %v items %d hasMore %v", m["page"], m["pageSize"], len(items(m)), m["hasMore"])
			}
		})
	}
}

func TestWebhookCursor(t *testing.T) {
	s, ts := newTest(t, Options{})
	want := dumped(t, s, "webhook_deliveries")
	var got []map[string]any
	cursor := ""
	for i := 0; ; i++ {
		p := "/hl/v2/webhooks/new-history?limit=50"
		if cursor != "" {
			p += "&startingAfter=" + url.QueryEscape(cursor)
		}
		m := mustOK(t, get(t, ts, p))
		page := items(m)
		got = append(got, page...)
		if m["hasMore"] == false {
			if m["nextStartingAfter"] != nil {
				t.Fatalf("last page: nextStartingAfter %v, want null", m["nextStartingAfter"])
			}
			break
		}
		next, ok := m["nextStartingAfter"].(string)
		if !ok || len(page) != 50 {
			t.Fatalf("page %d: nextStartingAfter %#v (want a string), %d items", i, m["nextStartingAfter"], len(page))
		}
		if last := page[len(page)-1]; fmt.Sprint(isoToMs(t, str(last["createdAt"]))) != next {
			t.Fatalf("nextStartingAfter %s is not the last record's createdAt %s", next, last["createdAt"])
		}
		cursor = next
	}
	if len(got) != len(want) || len(want) < 50 {
		t.Fatalf("cursor walk got %d records, ground truth %d", len(got), len(want))
	}
	prev := int64(0)
	for i := range got {
		if got[i]["id"] != want[i]["id"] {
			t.Fatalf("record %d: %v, want %v", i, got[i]["id"], want[i]["id"])
		}
		ms := isoToMs(t, str(got[i]["createdAt"]))
		if ms <= prev {
			t.Fatalf("record %d createdAt %d not after %d", i, ms, prev)
		}
		prev = ms
	}
	t.Run("limit capped at 50, default 10", func(t *testing.T) {
		if n := len(items(mustOK(t, get(t, ts, "/hl/v2/webhooks/new-history?limit=500")))); n != 50 {
			t.Errorf("limit=500 gave %d", n)
		}
		if n := len(items(mustOK(t, get(t, ts, "/hl/v2/webhooks/new-history")))); n != 10 {
			t.Errorf("default gave %d", n)
		}
	})
}

func TestCreditHistoryPagingAndFilters(t *testing.T) {
	s, ts := newTest(t, Options{})
	ledger := dumped(t, s, "credit_ledger")
	byCust := map[string][]map[string]any{}
	for _, l := range ledger {
		byCust[str(l["customerId"])] = append(byCust[str(l["customerId"])], l)
	}
	var cust string
	for c, ls := range byCust {
		if len(ls) > len(byCust[cust]) {
			cust = c
		}
	}
	entries := byCust[cust]
	base := "/credit/v1/credit/customer/paginate-credit-history/" + cust
	t.Run("pages cover the ledger newest first", func(t *testing.T) {
		var got []string
		for page := 1; ; page++ {
			m := mustOK(t, get(t, ts, fmt.Sprintf("%s?limit=3&page=%d", base, page)))
			if num(m["total"]) != int64(len(entries)) || num(m["limit"]) != 3 || num(m["totalPages"]) != int64((len(entries)+2)/3) {
				t.Fatalf("envelope %v", m)
			}
			its := items(m)
			if len(its) == 0 {
				break
			}
			for _, it := range its {
				got = append(got, str(it["id"]))
			}
		}
		var want []string
		for _, e := range entries {
			want = append(want, str(e["id"]))
		}
		if !slices.Equal(got, want) {
			t.Errorf("got %v\nwant %v", got, want)
		}
	})
	t.Run("pageSize alias and asc order", func(t *testing.T) {
		m := mustOK(t, get(t, ts, base+"?pageSize=2&sortOrder=asc&sortField=datetime"))
		its := items(m)
		if num(m["limit"]) != 2 || len(its) != 2 || its[0]["id"] != entries[len(entries)-1]["id"] {
			t.Errorf("limit %v, first %v, want oldest %v", m["limit"], its[0]["id"], entries[len(entries)-1]["id"])
		}
	})
	t.Run("filters", func(t *testing.T) {
		first := entries[len(entries)-1]
		day := str(first["createdAt"])[:10]
		ms := isoToMs(t, str(first["createdAt"]))
		for _, q := range []string{
			"type=" + str(first["type"]), "walletType=" + str(first["walletType"]), "productId=" + str(first["productId"]),
			"startDate=" + day + "&endDate=" + day, fmt.Sprintf("startDate=%d&endDate=%d", ms, ms),
			"startDate=" + url.QueryEscape(str(first["createdAt"])) + "&endDate=" + url.QueryEscape(str(first["createdAt"])),
		} {
			m := mustOK(t, get(t, ts, base+"?limit=100&"+q))
			found := false
			for _, it := range items(m) {
				found = found || it["id"] == first["id"]
			}
			if !found || num(m["total"]) < 1 || num(m["total"]) > int64(len(entries)) {
				t.Errorf("%s: total %v, oldest entry found %v", q, m["total"], found)
			}
		}
		m := mustOK(t, get(t, ts, base+"?type=NO_SUCH_TYPE"))
		if num(m["total"]) != 0 || len(items(m)) != 0 {
			t.Errorf("unknown type filter: total %v", m["total"])
		}
	})
	t.Run("existing customer without ledger", func(t *testing.T) {
		for _, c := range dumped(t, s, "customers") {
			if _, has := byCust[str(c["id"])]; !has {
				m := mustOK(t, get(t, ts, "/credit/v1/credit/customer/paginate-credit-history/"+str(c["id"])))
				if num(m["total"]) != 0 || len(items(m)) != 0 || m["data"] == nil {
					t.Errorf("got %v", m)
				}
				return
			}
		}
		t.Fatal("every customer has a ledger")
	})
	t.Run("balances never negative", func(t *testing.T) {
		bal := map[string]int64{}
		for i := len(ledger) - 1; i >= 0; i-- {
			l := ledger[i]
			k := str(l["customerId"]) + "/" + str(l["productId"])
			bal[k] += num(l["credit"]) - num(l["debit"])
			if bal[k] < 0 {
				t.Fatalf("%s goes negative at %s", k, l["createdAt"])
			}
		}
	})
}

func isoToMs(t testing.TB, s string) int64 {
	t.Helper()
	ms, err := parseMoment("createdAt", s, false)
	if err != nil {
		t.Fatal(err)
	}
	return ms
}

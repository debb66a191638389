package sandbox

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestDocumentedErrorAnswers pins every error answer the service documents, status and body byte for byte,
// and that only a coupon that applies gets 200.
func TestDocumentedErrorAnswers(t *testing.T) {
	s, ts := newTest(t, Options{Scale: 0.5})
	now := s.Now().UnixMilli()
	coupons := dumped(t, s, "coupons")
	products := dumped(t, s, "products")
	var course, saas map[string]any
	for _, p := range products {
		if p["type"] == "course" && course == nil {
			course = p
		}
		if p["type"] == "saas" && saas == nil {
			saas = p
		}
	}
	cust := dumped(t, s, "customers")[0]
	var paid map[string]any
	for _, p := range dumped(t, s, "payment_requests") {
		if p["status"] == "paid" && paid == nil {
			paid = p
		}
	}
	find := func(keep func(m map[string]any) bool) string {
		for _, c := range coupons {
			if keep(c) {
				return str(c["code"])
			}
		}
		t.Fatal("no coupon for this case")
		return ""
	}
	general := func(m map[string]any) bool {
		return m["paymentLinkId"] == nil && (m["expiresAt"] == nil || num(m["expiresAt"]) > now) &&
			!strings.HasSuffix(str(m["code"]), "10")
	}
	invoice := func(mod func(map[string]any)) map[string]any {
		m := map[string]any{"name": "Budi", "email": "budi@example.com", "mobile": "0812", "redirectUrl": "https://x.example",
			"description": "Langganan", "expiredAt": "2027-01-01T00:00:00Z",
			"items":     []any{map[string]any{"quantity": 1, "rate": 150000, "description": "Langganan"}},
			"extraData": map[string]any{"noCustomer": "", "idProd": ""}}
		if mod != nil {
			mod(m)
		}
		return m
	}
	edit := func(id any) map[string]any {
		return map[string]any{"id": id, "name": "a", "email": "a@b.example", "amount": 1000, "mobile": "62",
			"redirectURL": "https://x", "description": "d", "expiredAt": "2027-10-01T00:00:00Z"}
	}
	coupon := func(link any, code string, amount any, email string) map[string]any {
		return map[string]any{"paymentLinkId": link, "tickets": []any{}, "couponCode": code, "finalAmount": amount,
			"customerEmail": email}
	}
	existing := str(cust["email"])
	steps := []struct {
		name string
		path string
		body any
	}{
		{"invoice: validation error", "/hl/v1/invoice/create", invoice(func(m map[string]any) { delete(m, "mobile") })},
		{"invoice: extraData validation error", "/hl/v1/invoice/create", invoice(func(m map[string]any) {
			m["extraData"] = map[string]any{"noCustomer": strings.Repeat("9", 101)}
		})},
		{"invoice: customer cannot be found or created", "/hl/v1/invoice/create", invoice(func(m map[string]any) { m["email"] = "budi" })},
		{"invoice: created", "/hl/v1/invoice/create", invoice(func(m map[string]any) { m["extraData"] = map[string]any{"noCustomer": "INV-7"} })},
		{"invoice: the same create within a minute", "/hl/v1/invoice/create", invoice(func(m map[string]any) {
			m["extraData"] = map[string]any{"noCustomer": "INV-7"}
		})},
		{"invoice: noCustomer already used", "/hl/v1/invoice/create", invoice(func(m map[string]any) {
			m["description"] = "Langganan 2"
			m["extraData"] = map[string]any{"noCustomer": "INV-7"}
		})},
		{"payment edit: unknown id", "/hl/v1/payment/edit", edit("6f1c2d3e-0000-4000-8000-000000000000")},
		{"payment edit: already paid", "/hl/v1/payment/edit", edit(paid["id"])},
		{"customer update: validation error", "/hl/v1/customer/update", map[string]any{"fromEmail": existing, "toEmail": "no-at-sign"}},
		{"customer update: fromEmail is no customer", "/hl/v1/customer/update", map[string]any{"fromEmail": "ghost@nowhere.example", "toEmail": "new@x.example"}},
		{"coupon: unknown payment link", "/hl/v1/coupon/validate", coupon("6f1c2d3e-0000-4000-8000-000000000000", "X", 1, "")},
		{"coupon: empty code", "/hl/v1/coupon/validate", coupon(course["id"], "", 100, "")},
		{"coupon: unknown code", "/hl/v1/coupon/validate", coupon(course["id"], "NOSUCHCODE", 100, "")},
		{"coupon: expired", "/hl/v1/coupon/validate", coupon(course["id"], find(func(m map[string]any) bool {
			return m["expiresAt"] != nil && num(m["expiresAt"]) <= now && m["paymentLinkId"] == nil
		}), 1e9, existing)},
		{"coupon: inactive", "/hl/v1/coupon/validate", coupon(course["id"], "NONAKTIF10", 1e9, "")},
		{"coupon: not yet active", "/hl/v1/coupon/validate", coupon(course["id"], "BELUMMULAI10", 1e9, "")},
		{"coupon: for another payment link", "/hl/v1/coupon/validate", coupon(course["id"], find(func(m map[string]any) bool {
			return m["paymentLinkId"] != nil && m["paymentLinkId"] != course["id"] && (m["expiresAt"] == nil || num(m["expiresAt"]) > now)
		}), 1e9, existing)},
		{"coupon: product type excluded", "/hl/v1/coupon/validate", coupon(saas["id"], "KURSUSSAJA10", 1e9, "")},
		{"coupon: minimum purchase not met", "/hl/v1/coupon/validate", coupon(course["id"], find(func(m map[string]any) bool {
			return general(m) && m["minimumPurchase"] != nil
		}), 1, existing)},
		{"coupon: usage limit reached", "/hl/v1/coupon/validate", coupon(course["id"], "HABIS10", 1e9, "")},
		{"coupon: for some customers, no e-mail", "/hl/v1/coupon/validate", coupon(course["id"], find(func(m map[string]any) bool {
			return general(m) && m["minimumPurchase"] == nil && m["eligibleCustomerType"] == "new"
		}), 1e9, "")},
		{"coupon: new customers only", "/hl/v1/coupon/validate", coupon(course["id"], find(func(m map[string]any) bool {
			return general(m) && m["minimumPurchase"] == nil && m["eligibleCustomerType"] == "new"
		}), 1e9, existing)},
		{"coupon: existing customers only", "/hl/v1/coupon/validate", coupon(course["id"], find(func(m map[string]any) bool {
			return general(m) && m["minimumPurchase"] == nil && m["eligibleCustomerType"] == "existing"
		}), 1e9, "stranger@example.com")},
		{"coupon: valid", "/hl/v1/coupon/validate", coupon(course["id"], "KURSUSSAJA10", 1e9, "")},
	}
	var b strings.Builder
	for _, st := range steps {
		r := post(t, ts, st.path, st.body)
		body := string(r.body)
		if r.status == http.StatusOK {
			m := r.json(t)
			d, _ := m["data"].(map[string]any)
			body = fmt.Sprintf("messages %q valid=%v", m["messages"], d["valid"])
		}
		fmt.Fprintf(&b, "== %s\nPOST %s -> %d %s\n", st.name, st.path, r.status, body)
	}
	// After a minute the same invoice may be created again: the service only refuses quick repeats.
	s.Advance(time.Minute)
	r := post(t, ts, "/hl/v1/invoice/create", invoice(nil))
	fmt.Fprintf(&b, "== invoice: the same create a minute later\nPOST /hl/v1/invoice/create -> %d\n", r.status)
	checkGoldenFile(t, "answers.golden", b.String())
}

func checkGoldenFile(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if string(want) != got {
		t.Errorf("%s differs from the golden file:\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}

// TestCreditHistoryVariants checks the credit-history options: each time format and sortOrder ignored.
func TestCreditHistoryVariants(t *testing.T) {
	for _, tc := range []struct {
		f    CreditTimeFormat
		want string // layout of the first entry's createdAt
	}{
		{CreditTimeMillisUTC, "2006-01-02T15:04:05.000Z"},
		{CreditTimeOffset, "2006-01-02T15:04:05-0700"},
		{CreditTimeSeconds, "2006-01-02T15:04:05Z"},
		{CreditTimeNoZone, "2006-01-02 15:04:05"},
	} {
		t.Run(string(tc.f)+"/ignore sortOrder", func(t *testing.T) {
			s, ts := newTest(t, Options{CreditTimes: tc.f, CreditIgnoresSortOrder: true})
			var cust string
			for _, l := range dumped(t, s, "credit_ledger") {
				cust = str(l["customerId"])
				break
			}
			h := mustOK(t, get(t, ts, "/credit/v1/credit/customer/paginate-credit-history/"+cust+"?limit=100&sortOrder=desc"))
			var prev time.Time
			for i, it := range items(h) {
				at, err := time.Parse(tc.want, str(it["createdAt"]))
				if err != nil {
					t.Fatalf("entry %d: %v", i, err)
				}
				if tc.f == CreditTimeOffset || tc.f == CreditTimeNoZone {
					if _, off := at.Zone(); tc.f == CreditTimeOffset && off != 7*3600 {
						t.Errorf("entry %d: offset %d, want +0700", i, off)
					}
				}
				if at.Before(prev) {
					t.Errorf("entry %d is older than the one before: sortOrder=desc was honoured", i)
				}
				prev = at
			}
		})
	}
	if _, err := New(Options{CreditTimes: "weird"}); err == nil {
		t.Error("an unknown credit time format was accepted")
	}
}

package sandbox

import (
	"net/http"
	"strconv"
	"testing"
)

func TestAuth(t *testing.T) {
	_, ts := newTest(t, Options{})
	tests := []struct {
		name, method, path, key string
		status                  int
		messages                string
	}{
		{"no key", "GET", "/hl/v1/customer", "", 401, "Unauthorized"},
		{"wrong key", "GET", "/hl/v1/customer", "nope", 401, "Unauthorized"},
		{"wrong key on unknown path", "GET", "/hl/v1/nothing", "nope", 401, "Unauthorized"},
		{"read-only key reads", "GET", "/hl/v1/customer", DefaultReadOnlyKey, 200, "success"},
		{"read-only key writes", "POST", "/hl/v1/customer/update", DefaultReadOnlyKey, 403, "API KEY Scope not allowed to write"},
		{"read-only key on license", "POST", "/saas/v1/license/activate", DefaultReadOnlyKey, 403, "API KEY Scope not allowed to write"},
		{"unknown path", "GET", "/hl/v1/nothing", DefaultKey, 404, "Not Found: /hl/v1/nothing"},
		{"GET on a POST endpoint", "GET", "/hl/v1/invoice/create", DefaultKey, 405, "Method Not Allowed"},
		{"admin disabled", "GET", "/__sandbox/now", "", 404, "Not Found"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := do(t, ts, tc.method, tc.path, tc.key, map[string]any{})
			m := r.json(t)
			if r.status != tc.status || num(m["statusCode"]) != int64(tc.status) || m["messages"] != tc.messages {
				t.Errorf("got %d %s, want %d with messages %q", r.status, r.body, tc.status, tc.messages)
			}
		})
	}
}

func TestNotFoundIDs(t *testing.T) {
	s, ts := newTest(t, Options{})
	cust := dumped(t, s, "customers")[0]
	credit := firstOf(t, s, "products", func(m map[string]any) bool { return m["subType"] == "credit_usage" })
	unknown := "00000000-0000-4000-8000-000000000000"
	tests := []struct {
		name, method, path string
		body               any
	}{
		{"product", "GET", "/hl/v1/product/" + unknown, nil},
		{"product not a uuid", "GET", "/hl/v1/product/abc", nil},
		{"payment request", "GET", "/hl/v1/payment/" + unknown, nil},
		{"credit history customer", "GET", "/credit/v1/credit/customer/paginate-credit-history/" + unknown, nil},
		{"payment edit", "POST", "/hl/v1/payment/edit", map[string]any{"id": unknown, "name": "a", "email": "a@b.c", "amount": 1,
			"mobile": "62", "redirectUrl": "https://x", "description": "d", "expiredAt": "2025-10-01T00:00:00Z"}},
		{"customer update", "POST", "/hl/v1/customer/update", map[string]any{"fromEmail": "nobody@nowhere.example", "toEmail": "x@y.example"}},
		{"add credit customer", "POST", "/credit/v1/credit/customer/add-credit", map[string]any{"customerId": unknown, "productId": credit["id"], "amount": 5}},
		{"add credit product", "POST", "/credit/v1/credit/customer/add-credit", map[string]any{"customerId": cust["id"], "productId": unknown, "amount": 5}},
		{"license", "POST", "/saas/v1/license/activate", map[string]any{"licenseCode": "LIC-NONE", "productId": unknown}},
		{"checkout product", "POST", "/credit/v1/credit/generate/immutable/checkout", map[string]any{"productId": unknown,
			"customerInfo": map[string]any{"name": "a", "email": "a@b.c", "mobile": "62"}}},
		{"coupon payment link", "POST", "/hl/v1/coupon/validate", map[string]any{"paymentLinkId": unknown, "couponCode": "X"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := do(t, ts, tc.method, tc.path, DefaultKey, tc.body)
			if r.status != http.StatusNotFound || num(r.json(t)["statusCode"]) != 404 || str(r.json(t)["messages"]) == "" {
				t.Errorf("got %d %s, want 404 with a message", r.status, r.body)
			}
		})
	}
}

// TestBadRequests sends each POST with one required field left out (or wrong)
// and expects a 400 naming that field.
func TestBadRequests(t *testing.T) {
	s, ts := newTest(t, Options{})
	cust := dumped(t, s, "customers")[0]
	pr := dumped(t, s, "payment_requests")[0]
	plain := firstOf(t, s, "products", func(m map[string]any) bool { return m["subType"] == nil })
	credit := firstOf(t, s, "products", func(m map[string]any) bool { return m["subType"] == "credit_usage" })
	lic := dumped(t, s, "licenses")[0]
	invoice := func() map[string]any {
		return map[string]any{"name": "a", "email": "a@b.example", "mobile": "62", "redirectUrl": "https://x", "description": "d",
			"expiredAt": "2025-10-01T00:00:00Z", "items": []any{map[string]any{"quantity": 1, "rate": 1000, "description": "x"}}}
	}
	edit := func() map[string]any {
		return map[string]any{"id": pr["id"], "name": "a", "email": "a@b.example", "amount": 1000, "mobile": "62",
			"redirectURL": "https://x", "description": "d", "expiredAt": "2025-10-01T00:00:00Z"}
	}
	without := func(m map[string]any, k string) map[string]any { delete(m, k); return m }
	with := func(m map[string]any, k string, v any) map[string]any { m[k] = v; return m }
	checkout := func() map[string]any {
		return map[string]any{"productId": credit["id"], "customerInfo": map[string]any{"name": "a", "email": "a@b.c", "mobile": "62"}}
	}
	type tcase struct {
		name, path string
		body       any
		field      string
	}
	var tests []tcase
	for _, f := range []string{"name", "email", "mobile", "redirectUrl", "description", "expiredAt", "items"} {
		tests = append(tests, tcase{"invoice without " + f, "/hl/v1/invoice/create", without(invoice(), f), f})
	}
	tests = append(tests,
		tcase{"invoice bad expiredAt", "/hl/v1/invoice/create", with(invoice(), "expiredAt", "tomorrow"), "expiredAt"},
		tcase{"invoice item without rate", "/hl/v1/invoice/create", with(invoice(), "items", []any{map[string]any{"quantity": 1, "description": "x"}}), "items[0].rate"},
		tcase{"invoice amount as text", "/hl/v1/invoice/create", with(invoice(), "name", 5), "name"},
		tcase{"empty body", "/hl/v1/invoice/create", []byte(""), "body"},
		tcase{"malformed body", "/hl/v1/invoice/create", []byte("{"), "body"},
	)
	for _, f := range []string{"id", "name", "email", "amount", "mobile", "redirectURL", "description", "expiredAt"} {
		tests = append(tests, tcase{"edit without " + f, "/hl/v1/payment/edit", without(edit(), f), f})
	}
	tests = append(tests,
		tcase{"update without fromEmail", "/hl/v1/customer/update", map[string]any{"toEmail": "a@b.c"}, "fromEmail"},
		tcase{"update without toEmail", "/hl/v1/customer/update", map[string]any{"fromEmail": cust["email"]}, "toEmail"},
		tcase{"update malformed toEmail", "/hl/v1/customer/update", map[string]any{"fromEmail": cust["email"], "toEmail": "no-at-sign"}, "toEmail"},
		tcase{"coupon without paymentLinkId", "/hl/v1/coupon/validate", map[string]any{"couponCode": "X"}, "paymentLinkId"},
		tcase{"checkout without productId", "/credit/v1/credit/generate/immutable/checkout", without(checkout(), "productId"), "productId"},
		tcase{"checkout without customerInfo", "/credit/v1/credit/generate/immutable/checkout", without(checkout(), "customerInfo"), "customerInfo"},
		tcase{"checkout without email", "/credit/v1/credit/generate/immutable/checkout",
			with(checkout(), "customerInfo", map[string]any{"name": "a", "mobile": "62"}), "customerInfo.email"},
		tcase{"checkout credit on a plain product", "/credit/v1/credit/generate/immutable/checkout",
			with(with(checkout(), "productId", plain["id"]), "creditAmount", 10), "productId"},
		tcase{"add credit without amount", "/credit/v1/credit/customer/add-credit", map[string]any{"customerId": cust["id"], "productId": credit["id"]}, "amount"},
		tcase{"add credit negative", "/credit/v1/credit/customer/add-credit", map[string]any{"customerId": cust["id"], "productId": credit["id"], "amount": -5}, "amount"},
		tcase{"add credit without customerId", "/credit/v1/credit/customer/add-credit", map[string]any{"productId": credit["id"], "amount": 5}, "customerId"},
		tcase{"add credit plain product", "/credit/v1/credit/customer/add-credit", map[string]any{"customerId": cust["id"], "productId": plain["id"], "amount": 5}, "productId"},
		tcase{"license without code", "/saas/v1/license/activate", map[string]any{"productId": lic["productId"]}, "licenseCode"},
		tcase{"license without product", "/saas/v1/license/deactivate", map[string]any{"licenseCode": lic["licenseCode"]}, "productId"},
	)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := post(t, ts, tc.path, tc.body)
			m := r.json(t)
			want := tc.field
			// The service answers a malformed invoice or e-mail update with one text that names no field.
			if tc.path == "/hl/v1/invoice/create" || tc.path == "/hl/v1/customer/update" {
				want = "Validation Error"
			}
			if r.status != http.StatusBadRequest || num(m["statusCode"]) != 400 || !contains(str(m["messages"]), want) {
				t.Errorf("got %d %s, want 400 naming %q", r.status, r.body, want)
			}
		})
	}
	t.Run("lenient: invoice without extraData, coupon without finalAmount, redirectUrl spelling", func(t *testing.T) {
		mustOK(t, post(t, ts, "/hl/v1/invoice/create", without(invoice(), "extraData")))
		if r := post(t, ts, "/hl/v1/coupon/validate", map[string]any{"paymentLinkId": credit["id"], "couponCode": "NOPE"}); r.status != http.StatusNotFound {
			t.Errorf("coupon without finalAmount: %d %s, want the unknown code's 404", r.status, r.body)
		}
		mustOK(t, post(t, ts, "/hl/v1/payment/edit", with(without(edit(), "redirectURL"), "redirectUrl", "https://y")))
	})
	t.Run("bad query parameters", func(t *testing.T) {
		for _, p := range []string{"/hl/v1/customer?page=x", "/hl/v1/invoice?sort=open", "/hl/v1/payment?status=weird",
			"/hl/v1/product/type/spaceship", "/hl/v2/webhooks/new-history?startingAfter=yesterday",
			"/credit/v1/credit/customer/paginate-credit-history/" + str(cust["id"]) + "?sortOrder=up",
			"/credit/v1/credit/customer/paginate-credit-history/" + str(cust["id"]) + "?startDate=someday"} {
			if r := get(t, ts, p); r.status != http.StatusBadRequest {
				t.Errorf("%s: got %d %s, want 400", p, r.status, r.body)
			}
		}
	})
}

func TestRateLimit(t *testing.T) {
	_, ts := newTest(t, Options{RatePerMin: 3})
	for i := 0; i < 3; i++ {
		mustOK(t, get(t, ts, "/hl/v1/customer"))
	}
	r := get(t, ts, "/hl/v1/customer")
	if r.status != http.StatusTooManyRequests || num(r.json(t)["statusCode"]) != 429 {
		t.Fatalf("4th request in a minute: got %d %s, want 429", r.status, r.body)
	}
	wait, err := strconv.Atoi(r.header.Get("Retry-After"))
	if err != nil || wait < 1 || wait > 20 {
		t.Errorf("Retry-After %q, want 1..20 seconds", r.header.Get("Retry-After"))
	}
	// The bucket is per key: the read-only key still has its own tokens.
	if r := do(t, ts, "GET", "/hl/v1/customer", DefaultReadOnlyKey, nil); r.status != http.StatusOK {
		t.Errorf("other key: got %d, want 200", r.status)
	}
}

func TestRateLimiterRefills(t *testing.T) {
	rl := newRateLimiter(60)
	now := testNow
	for i := 0; i < 60; i++ {
		if _, ok := rl.take("k", now); !ok {
			t.Fatalf("token %d refused", i)
		}
	}
	if wait, ok := rl.take("k", now); ok || wait != 1 {
		t.Fatalf("empty bucket: ok=%v wait=%d, want refused with 1 s", ok, wait)
	}
	if _, ok := rl.take("k", now.Add(1100e6)); !ok {
		t.Error("after 1.1 s one token should be back")
	}
}

package sandbox

import (
	"bytes"
	"net/http"
	"net/url"
	"testing"
	"time"
)

func TestCreateInvoice(t *testing.T) {
	s, ts := newTest(t, Options{})
	hooksBefore := len(s.Dump("webhook_deliveries"))
	m := mustOK(t, post(t, ts, "/hl/v1/invoice/create", map[string]any{
		"name": "Ñoño Pérez", "email": "nono.perez@example.com", "mobile": "+6281311112222", "redirectUrl": "https://example.com/ok",
		"description": "Jasa desain", "expiredAt": "2025-09-15T00:00:00.000Z",
		"items":     []any{map[string]any{"quantity": 3, "rate": 150000, "description": "Logo"}, map[string]any{"quantity": 1, "rate": 50000, "description": "Revisi"}},
		"extraData": map[string]any{"noCustomer": "A1", "idProd": "P9"},
	}))
	d := m["data"].(map[string]any)
	if num(d["expiredAt"]) != time.Date(2025, 9, 15, 0, 0, 0, 0, time.UTC).UnixMilli() ||
		d["extraData"].(map[string]any)["idProd"] != "P9" || !contains(str(d["link"]), ts.Listener.Addr().String()+"/invoices/") {
		t.Errorf("create answer %v", d)
	}
	inv := mustOK(t, get(t, ts, "/hl/v1/invoice?pageSize=1"))
	first := items(inv)[0]
	if first["id"] != d["id"] || num(first["amount"]) != 500000 || first["status"] != "active" ||
		first["customer"].(map[string]any)["name"] != "Ñoño Pérez" {
		t.Errorf("newest invoice %v", first)
	}
	if tx := first["transactions"].([]any)[0].(map[string]any); tx["id"] != d["transactionId"] || tx["status"] != "created" {
		t.Errorf("transaction %v", tx)
	}
	un := items(mustOK(t, get(t, ts, "/hl/v1/transactions/unpaid?pageSize=1")))[0]
	if un["id"] != d["transactionId"] || un["paymentLinkId"] != d["id"] || un["type"] != "invoice" {
		t.Errorf("newest unpaid %v", un)
	}
	hooks := s.Dump("webhook_deliveries")
	if len(hooks) != hooksBefore+1 || !bytes.Contains(hooks[len(hooks)-1], []byte(str(d["transactionId"]))) {
		t.Errorf("no webhook for the new invoice")
	}
	cust := firstOf(t, s, "customers", func(m map[string]any) bool { return m["email"] == "nono.perez@example.com" })
	if cust["name"] != "Ñoño Pérez" {
		t.Errorf("new customer %v", cust)
	}
}

func TestEditPayment(t *testing.T) {
	s, ts := newTest(t, Options{})
	pr := firstOf(t, s, "payment_requests", func(m map[string]any) bool { return m["status"] == "unpaid" })
	mustOK(t, post(t, ts, "/hl/v1/payment/edit", map[string]any{"id": pr["id"], "name": "Gök Yılmaz", "email": "gok@example.com",
		"amount": 777000, "mobile": "6281", "redirectUrl": "https://example.com/r", "description": "<p>baru</p>", "expiredAt": "2025-12-01T00:00:00Z"}))
	d := mustOK(t, get(t, ts, "/hl/v1/payment/"+str(pr["id"])))["data"].(map[string]any)
	if num(d["amount"]) != 777000 || d["name"] != "Gök Yılmaz" || d["description"] != "<p>baru</p>" {
		t.Errorf("after edit %v", d)
	}
	un := firstOf(t, s, "unpaid_transactions", func(m map[string]any) bool { return m["paymentLinkId"] == pr["id"] })
	if num(un["amount"]) != 777000 || un["customer"].(map[string]any)["email"] != "gok@example.com" {
		t.Errorf("unpaid entry not updated: %v", un)
	}
}

func TestUpdateCustomerEmail(t *testing.T) {
	s, ts := newTest(t, Options{})
	cs := dumped(t, s, "customers")
	a, b := cs[0], cs[1]
	before := s.Now().UnixMilli()
	r := post(t, ts, "/hl/v1/customer/update", map[string]any{"fromEmail": a["email"], "toEmail": b["email"]})
	if r.status != http.StatusBadRequest {
		t.Errorf("taken toEmail: got %d %s, want 400", r.status, r.body)
	}
	m := mustOK(t, post(t, ts, "/hl/v1/customer/update", map[string]any{"fromEmail": a["email"], "toEmail": "fresh.address@example.com"}))
	if len(m) != 2 {
		t.Errorf("update answer carries only statusCode and messages: %v", m)
	}
	after := firstOf(t, s, "customers", func(m map[string]any) bool { return m["id"] == a["id"] })
	if after["email"] != "fresh.address@example.com" || num(after["updatedAt"]) <= before {
		t.Errorf("after rename %v", after)
	}
	if r := post(t, ts, "/hl/v1/customer/update", map[string]any{"fromEmail": a["email"], "toEmail": "x@example.com"}); r.status != http.StatusNotFound {
		t.Errorf("old address still found: %d", r.status)
	}
}

func TestAddCreditAndHistory(t *testing.T) {
	s, ts := newTest(t, Options{})
	l := dumped(t, s, "credit_ledger")[0]
	path := "/credit/v1/credit/customer/paginate-credit-history/" + str(l["customerId"])
	before := num(mustOK(t, get(t, ts, path))["total"])
	bal := int64(0)
	for _, e := range dumped(t, s, "credit_ledger") {
		if e["customerId"] == l["customerId"] && e["productId"] == l["productId"] {
			bal += num(e["credit"]) - num(e["debit"])
		}
	}
	d := mustOK(t, post(t, ts, "/credit/v1/credit/customer/add-credit", map[string]any{
		"customerId": l["customerId"], "productId": l["productId"], "amount": 2500}))["data"].(map[string]any)
	if num(d["customerBalance"]) != bal+2500 || num(d["amount"]) != 2500 {
		t.Errorf("balance %v, want %d", d["customerBalance"], bal+2500)
	}
	h := mustOK(t, get(t, ts, path))
	top := items(h)[0]
	if num(h["total"]) != before+1 || top["type"] != "MERCHANT_TOPUP" || top["walletType"] != "ADD_ON" || num(top["credit"]) != 2500 {
		t.Errorf("newest entry %v (total %v)", top, h["total"])
	}
}

func TestLicenseFlip(t *testing.T) {
	s, ts := newTest(t, Options{})
	lic := dumped(t, s, "licenses")[0]
	body := map[string]any{"licenseCode": lic["licenseCode"], "productId": lic["productId"]}
	for _, tc := range []struct{ path, status string }{{"/saas/v1/license/deactivate", "INACTIVE"}, {"/saas/v1/license/activate", "ACTIVE"}} {
		m := mustOK(t, post(t, ts, tc.path, body))
		if !contains(str(m["message"]), tc.status) {
			t.Errorf("%s message %v", tc.path, m["message"])
		}
		if got := dumped(t, s, "licenses")[0]["status"]; got != tc.status {
			t.Errorf("after %s status %v", tc.path, got)
		}
	}
}

func TestImmutableCheckout(t *testing.T) {
	s, ts := newTest(t, Options{Admin: true})
	credit := firstOf(t, s, "products", func(m map[string]any) bool { return m["subType"] == "credit_usage" })
	m := mustOK(t, post(t, ts, "/credit/v1/credit/generate/immutable/checkout", map[string]any{"productId": credit["id"], "creditAmount": 5000,
		"customerInfo": map[string]any{"name": "Siti Nurhaliza", "email": "siti@example.com", "mobile": "+6281234"}}))
	u := str(m["creditUsageImmutableCheckoutUrl"])
	pu, err := url.Parse(u)
	if err != nil || pu.Host != ts.Listener.Addr().String() {
		t.Fatalf("checkout url %q not on the request's host", u)
	}
	q := pu.Query()
	if q.Get("name") != "Siti Nurhaliza" || q.Get("email") != "siti@example.com" || q.Get("mobile") != "+6281234" ||
		q.Get("creditAmount") != "5000" || q.Get("productId") != credit["id"] || m["paymentLinkUrl"] == "" {
		t.Errorf("checkout fields %v", q)
	}
	if err := s.VerifyCheckoutURL(u); err != nil {
		t.Errorf("own url rejected: %v", err)
	}
	q.Set("creditAmount", "9000000")
	pu.RawQuery = q.Encode()
	if err := s.VerifyCheckoutURL(pu.String()); err == nil {
		t.Error("tampered url accepted")
	}
	v := mustOK(t, do(t, ts, "GET", "/__sandbox/checkout/verify?url="+url.QueryEscape(u), "", nil))
	if v["valid"] != true {
		t.Errorf("admin verify %v", v)
	}
}

func TestReadOnlyWritesChangeNothing(t *testing.T) {
	s, ts := newTest(t, Options{})
	before := s.Dump("customers")
	email := str(dumped(t, s, "customers")[0]["email"])
	do(t, ts, "POST", "/hl/v1/customer/update", DefaultReadOnlyKey, map[string]any{"fromEmail": email, "toEmail": "ro@example.com"})
	after := s.Dump("customers")
	if len(before) != len(after) || !bytes.Equal(before[0], after[0]) {
		t.Error("a read-only write changed state")
	}
}

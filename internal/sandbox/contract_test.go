package sandbox

import (
	"encoding/json"
	"flag"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// shape reduces a JSON value to its field names and types, merging array elements.
func shape(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, val := range x {
			out[k] = shape(val)
		}
		return out
	case []any:
		var el any
		for i, e := range x {
			if i == 0 {
				el = shape(e)
			} else {
				el = mergeShape(el, shape(e))
			}
		}
		if el == nil {
			return []any{}
		}
		return []any{el}
	case string:
		return "string"
	case float64:
		return "number"
	case bool:
		return "bool"
	case nil:
		return "null"
	}
	return "?"
}

func mergeShape(a, b any) any {
	ma, aObj := a.(map[string]any)
	mb, bObj := b.(map[string]any)
	switch {
	case aObj && bObj:
		out := maps.Clone(ma)
		for k, v := range mb {
			if old, ok := out[k]; ok {
				out[k] = mergeShape(old, v)
			} else {
				out[k] = v
			}
		}
		return out
	case aObj && b == "null":
		return a
	case bObj && a == "null":
		return b
	}
	sa, aStr := a.(string)
	sb, bStr := b.(string)
	if aStr && bStr {
		set := map[string]bool{}
		for _, p := range strings.Split(sa+"|"+sb, "|") {
			set[p] = true
		}
		parts := slices.Sorted(maps.Keys(set))
		return strings.Join(parts, "|")
	}
	return a
}

func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("golden %s: %v (run go test -update to create it)", path, err)
	}
	if string(want) != string(got) {
		t.Errorf("%s differs from golden file:\n got: %s\nwant: %s", name, got, want)
	}
}

// endpointCalls makes one successful request to each of the 21 endpoints.
func endpointCalls(t *testing.T, s *Server) []struct {
	name, method, path string
	body               any
} {
	cust := firstOf(t, s, "credit_ledger", func(map[string]any) bool { return true })
	credit := firstOf(t, s, "products", func(m map[string]any) bool { return m["subType"] == "credit_usage" })
	withVariants := firstOf(t, s, "products", func(m map[string]any) bool { return m["variant"] != nil })
	pr := firstOf(t, s, "payment_requests", func(map[string]any) bool { return true })
	lic := firstOf(t, s, "licenses", func(map[string]any) bool { return true })
	cp := firstOf(t, s, "coupons", func(m map[string]any) bool {
		return m["paymentLinkId"] == nil && m["expiresAt"] == nil && m["eligibleCustomerType"] == "all" && m["minimumPurchase"] == nil
	})
	firstCust := dumped(t, s, "customers")[0]
	return []struct {
		name, method, path string
		body               any
	}{
		{"01_invoice_create", "POST", "/hl/v1/invoice/create", map[string]any{
			"name": "Siti Nurhaliza", "email": "siti.contract@example.com", "mobile": "6281234567890",
			"redirectUrl": "https://example.com/thanks", "description": "contract", "expiredAt": "2025-10-01T00:00:00Z",
			"items":     []any{map[string]any{"quantity": 2, "rate": 150000, "description": "Jasa"}},
			"extraData": map[string]any{"noCustomer": "827hiueqy271hj", "idProd": "contoh"}}},
		{"02_payment_edit", "POST", "/hl/v1/payment/edit", map[string]any{
			"id": pr["id"], "name": "Dewi Lestari", "email": "dewi.contract@example.com", "amount": 250000,
			"mobile": "6281234567891", "redirectURL": "https://example.com/ok", "description": "edited",
			"expiredAt": "2025-10-01T00:00:00Z"}},
		{"03_payment_list", "GET", "/hl/v1/payment?pageSize=50", nil},
		{"04_payment_filter", "GET", "/hl/v1/payment?status=paid&pageSize=50", nil},
		{"05_payment_detail", "GET", "/hl/v1/payment/" + str(pr["id"]), nil},
		{"06_invoice_list", "GET", "/hl/v1/invoice?pageSize=50", nil},
		{"07_invoice_filter", "GET", "/hl/v1/invoice?sort=closed&pageSize=50", nil},
		{"08_product_type", "GET", "/hl/v1/product/type/saas?pageSize=50", nil},
		{"09_product_search", "GET", "/hl/v1/product?search=" + strings.Fields(str(withVariants["name"]))[0] + "&pageSize=50", nil},
		{"10_product_detail", "GET", "/hl/v1/product/" + str(withVariants["id"]), nil},
		{"11_unpaid", "GET", "/hl/v1/transactions/unpaid?pageSize=50", nil},
		{"12_customers", "GET", "/hl/v1/customer?pageSize=50", nil},
		{"13_customer_update", "POST", "/hl/v1/customer/update", map[string]any{"fromEmail": firstCust["email"], "toEmail": "renamed.contract@example.com"}},
		{"14_coupon_validate", "POST", "/hl/v1/coupon/validate", map[string]any{
			"paymentLinkId": credit["id"], "tickets": []any{}, "couponCode": cp["code"], "finalAmount": 1000000, "customerEmail": ""}},
		{"15_immutable_checkout", "POST", "/credit/v1/credit/generate/immutable/checkout", map[string]any{
			"productId": credit["id"], "creditAmount": 5000,
			"customerInfo": map[string]any{"name": "Gök Yılmaz", "email": "gok@example.com", "mobile": "+6281200000000"}}},
		{"16_add_credit", "POST", "/credit/v1/credit/customer/add-credit", map[string]any{
			"customerId": cust["customerId"], "productId": cust["productId"], "amount": 100}},
		{"17_credit_history", "GET", "/credit/v1/credit/customer/paginate-credit-history/" + str(cust["customerId"]) + "?limit=50", nil},
		{"18_reviews", "GET", "/hl/v1/reviews?pageSize=50", nil},
		{"19_license_activate", "POST", "/saas/v1/license/activate", map[string]any{"licenseCode": lic["licenseCode"], "productId": lic["productId"]}},
		{"20_license_deactivate", "POST", "/saas/v1/license/deactivate", map[string]any{"licenseCode": lic["licenseCode"], "productId": lic["productId"]}},
		{"21_webhook_history", "GET", "/hl/v2/webhooks/new-history?limit=50", nil},
	}
}

// TestContractShapes pins the envelope and field names and types of every
// endpoint in golden files (go test -update rewrites them).
func TestContractShapes(t *testing.T) {
	s, ts := newTest(t, Options{})
	for _, call := range endpointCalls(t, s) {
		t.Run(call.name, func(t *testing.T) {
			r := do(t, ts, call.method, call.path, DefaultKey, call.body)
			m := mustOK(t, r)
			got, err := json.MarshalIndent(shape(m), "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			checkGolden(t, "shapes/"+call.name+".json", append(got, '\n'))
		})
	}
}

func keysOf(v any) []string {
	m, _ := v.(map[string]any)
	k := slices.Collect(maps.Keys(m))
	sort.Strings(k)
	return k
}

func fields(s string) []string {
	f := strings.Fields(s)
	sort.Strings(f)
	return f
}

// TestContractSpecFields compares field names with the spec's tables, and the
// quirks the spec calls out.
func TestContractSpecFields(t *testing.T) {
	s, ts := newTest(t, Options{})
	envelope := "statusCode messages hasMore pageCount pageSize page data "
	cust := firstOf(t, s, "credit_ledger", func(map[string]any) bool { return true })
	prod := firstOf(t, s, "products", func(m map[string]any) bool { return m["variant"] != nil && m["coverImage"] != nil })
	if prod == nil {
		t.Fatal("no product with variants and cover image")
	}
	pr := firstOf(t, s, "payment_requests", func(map[string]any) bool { return true })
	tests := []struct {
		name, path      string
		top, item, more string
	}{
		{"invoice list", "/hl/v1/invoice", envelope + "total",
			"id amount category createdAt description link type status name redirectUrl customerId transactions customer", ""},
		{"payment list", "/hl/v1/payment", envelope,
			"id amount category createdAt description link type status name limit redirectUrl installmentId event order coverImageId multipleImageId coverImage multimpleImage", ""},
		{"product type", "/hl/v1/product/type/" + str(prod["type"]), envelope + "total",
			"id amount category createdAt description link type subType status name limit redirectUrl installmentId variant membershipTier event order coverImageId multipleImageId coverImage multipleImage transactions linkUrl linkPayment", ""},
		{"product search", "/hl/v1/product?search=" + strings.Fields(str(prod["name"]))[0], envelope + "total",
			"id amount category createdAt description link type subType status name limit redirectUrl installmentId variant variants membershipTier event order coverImageId multipleImageId coverImage multipleImage transactions linkUrl linkPayment", ""},
		{"unpaid", "/hl/v1/transactions/unpaid", envelope + "total",
			"id createdAt type amount status urlParamTrackingData paymentLinkId customerId customeField customer paymentLink paymentUrl", ""},
		{"customers", "/hl/v1/customer", envelope + "totalCustomer", "id createdAt email mobile name status updatedAt userId", ""},
		{"reviews", "/hl/v1/reviews", envelope + "total",
			"id createdAt customerId message paymentLinkId rating status updatedAt userId multipleImage content customer paymentLink", ""},
		{"credit history", "/credit/v1/credit/customer/paginate-credit-history/" + str(cust["customerId"]),
			"statusCode message total page limit totalPages data",
			"id createdAt credit debit productId status customerId merchantId expiredAt walletType type", ""},
		{"webhooks", "/hl/v2/webhooks/new-history", "statusCode messages data hasMore nextStartingAfter",
			"id userId createdAt updatedAt nextDelivery payload paymentLinkId paymentLinkTransactionId responsePayload source status type Webhooktype urlDestination", ""},
		{"payment detail", "/hl/v1/payment/" + str(pr["id"]), "statusCode messages data", "",
			"id link name category limit type userId event order qty amount status description coverImageId multipleImageId coverImage multipleImage"},
		{"product detail", "/hl/v1/product/" + str(prod["id"]), "statusCode messages data", "",
			"id amount category createdAt description link type subType status name limit redirectUrl installmentId variant variants membershipTier event order qty userId coverImageId multipleImageId coverImage multipleImage transactions linkUrl linkPayment"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := mustOK(t, get(t, ts, tc.path))
			if got, want := keysOf(m), fields(tc.top); !slices.Equal(got, want) {
				t.Errorf("envelope keys\n got %v\nwant %v", got, want)
			}
			if tc.item != "" {
				its := items(m)
				if len(its) == 0 {
					t.Fatal("no items to compare")
				}
				if got, want := keysOf(its[0]), fields(tc.item); !slices.Equal(got, want) {
					t.Errorf("item keys\n got %v\nwant %v", got, want)
				}
			}
			if tc.more != "" {
				if got, want := keysOf(m["data"]), fields(tc.more); !slices.Equal(got, want) {
					t.Errorf("detail keys\n got %v\nwant %v", got, want)
				}
			}
		})
	}

	t.Run("variant string encodes variants", func(t *testing.T) {
		d := mustOK(t, get(t, ts, "/hl/v1/product/"+str(prod["id"])))["data"].(map[string]any)
		var fromString []any
		if err := json.Unmarshal([]byte(str(d["variant"])), &fromString); err != nil {
			t.Fatalf("variant is not a JSON string: %v", err)
		}
		a, _ := json.Marshal(fromString)
		b, _ := json.Marshal(d["variants"])
		if string(a) != string(b) || len(fromString) == 0 {
			t.Errorf("variant %s != variants %s", a, b)
		}
		if keysOf(fromString[0])[0] == "" || !slices.Equal(keysOf(fromString[0]), fields("id name description amount limit notes redirectUrl status createdAt")) {
			t.Errorf("variant keys %v", keysOf(fromString[0]))
		}
		if img := d["coverImage"].(map[string]any); !slices.Equal(keysOf(img), fields("id fileType url")) {
			t.Errorf("detail image keys %v, want id fileType url", keysOf(img))
		}
	})
	t.Run("webhook payload and ISO times", func(t *testing.T) {
		m := mustOK(t, get(t, ts, "/hl/v2/webhooks/new-history?limit=50"))
		seen := map[string]bool{}
		for _, h := range items(m) {
			var p struct {
				Event string         `json:"event"`
				Data  map[string]any `json:"data"`
			}
			if err := json.Unmarshal([]byte(str(h["payload"])), &p); err != nil {
				t.Fatalf("payload not a JSON string: %v", err)
			}
			if p.Event != h["type"] {
				t.Errorf("payload event %q, type %q", p.Event, h["type"])
			}
			want := "id transactionId status transactionStatus createdAt updatedAt merchantId merchantEmail customerId customerName customerEmail customerMobile amount paymentLinkAmount isAdminFeeBorneByCustomer isChannelFeeBorneByCustomer productId productName productType pixelFbp pixelFbc qty couponUsed paymentMethod paymentUrl"
			if p.Event == eventMemberExpired {
				want = "merchantId merchantName status memberId customerId customerName customerEmail customerMobile"
			}
			if got := keysOf(p.Data); !slices.Equal(got, fields(want)) {
				t.Errorf("%s data keys %v", p.Event, got)
			}
			seen[p.Event] = true
			if !contains(str(h["createdAt"]), "T") || !strings.HasSuffix(str(h["createdAt"]), "Z") {
				t.Errorf("createdAt %v is not ISO-8601", h["createdAt"])
			}
		}
		if !seen[eventReceived] {
			t.Errorf("no payment.received among %v", seen)
		}
	})
}

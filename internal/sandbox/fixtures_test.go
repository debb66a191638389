package sandbox

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
)

// fixtureDir is the repository's copy of the third-party response fixtures (see its README).
const fixtureDir = "../../testdata/fixtures/laravel-mayar"

// fixtureEndpoints pairs each fixture that describes one of the 21 endpoints
// with the endpoint call of endpointCalls it describes.
var fixtureEndpoints = map[string]string{
	"CreditBasedProduct__credit-usage-add-credit-response.json":       "16_add_credit",
	"CreditBasedProduct__credit-usage-checkout-response.json":         "15_immutable_checkout",
	"CreditBasedProduct__credit-usage-paginate-history-response.json": "17_credit_history",
	"CreditMembership__credit-add-credit-response.json":               "16_add_credit",
	"CreditMembership__credit-paginate-history-response.json":         "17_credit_history",
	"Customers__customer-list-response.json":                          "12_customers",
	"Customers__customer-update-response.json":                        "13_customer_update",
	"Discounts__discount-validate-response.json":                      "14_coupon_validate",
	"Invoices__invoice-create-response.json":                          "01_invoice_create",
	"Invoices__invoice-list-response.json":                            "06_invoice_list",
	"PaymentRequests__payment-request-detail-response.json":           "05_payment_detail",
	"PaymentRequests__payment-request-edit-response.json":             "02_payment_edit",
	"PaymentRequests__payment-request-list-response.json":             "03_payment_list",
	"Products__product-detail-response.json":                          "10_product_detail",
	"Products__product-list-response.json":                            "09_product_search",
	"Reviews__review-list-response.json":                              "18_reviews",
	"SaaSMembership__saas-license-success-response.json":              "19_license_activate",
	"Transactions__unpaid-list-response.json":                         "11_unpaid",
}

// fixtureDifferences are the known places where a fixture and the spec
// disagree; the spec wins (shared/fixtures/README.md lists them).
var fixtureDifferences = map[string]string{
	"SaaSMembership__saas-license-success-response.json:messages":                     "spec: license endpoints answer with `message` stating the new status",
	"CreditBasedProduct__credit-usage-paginate-history-response.json:messages":        "spec: credit history carries `message`",
	"CreditBasedProduct__credit-usage-paginate-history-response.json:data[].amount":   "spec: records carry credit and debit, not a signed amount",
	"CreditMembership__credit-paginate-history-response.json:messages":                "spec: credit history carries `message`",
	"CreditMembership__credit-paginate-history-response.json:data[].amount":           "spec: records carry credit and debit, not a signed amount",
	"CreditMembership__credit-paginate-history-response.json:data[].membershipTierId": "spec's credit history record has no membershipTierId",
	"CreditMembership__credit-paginate-history-response.json:data[].referenceId":      "spec's credit history record has no referenceId",
	"CreditMembership__credit-add-credit-response.json:messages":                      "membership variant: flat body; the spec's add-credit has `message` and `data`",
	"CreditMembership__credit-add-credit-response.json:customerId":                    "membership variant: flat body, spec wraps it in data",
	"CreditMembership__credit-add-credit-response.json:productId":                     "membership variant: flat body, spec wraps it in data",
	"CreditMembership__credit-add-credit-response.json:membershipTierId":              "membership variant: flat body, spec wraps it in data",
	"CreditMembership__credit-add-credit-response.json:amount":                        "membership variant: flat body, spec wraps it in data",
	"CreditMembership__credit-add-credit-response.json:customerBalance":               "membership variant: flat body, spec wraps it in data",
	"PaymentRequests__payment-request-list-response.json:total":                       "spec: payment-request lists carry no total",
	"PaymentRequests__payment-request-list-response.json:data[].multipleImage":        "spec documents the list field under the misspelled name multimpleImage",
	"Products__product-list-response.json:pageSize":                                   "the fixture sends pageSize as a string; the sandbox sends numbers unless the string_numbers fault is on",
}

// TestFixturesMatchSandbox decodes each fixture and checks, field by field,
// that the sandbox's answer to the same endpoint has the field with a
// compatible type.
func TestFixturesMatchSandbox(t *testing.T) {
	dir := fixtureDir
	s, ts := newTest(t, Options{})
	ours := map[string]any{}
	for _, call := range endpointCalls(t, s) {
		ours[call.name] = shape(mustOK(t, do(t, ts, call.method, call.path, DefaultKey, call.body)))
	}
	used := map[string]bool{}
	names := make([]string, 0, len(fixtureEndpoints))
	for f := range fixtureEndpoints {
		names = append(names, f)
	}
	sort.Strings(names)
	for _, file := range names {
		t.Run(file, func(t *testing.T) {
			raw, err := os.ReadFile(filepath.Join(dir, file))
			if err != nil {
				t.Fatal(err)
			}
			var fx any
			if err := json.Unmarshal(raw, &fx); err != nil {
				t.Fatalf("decode fixture: %v", err)
			}
			for _, d := range compareShapes(shape(fx), ours[fixtureEndpoints[file]], "") {
				key := file + ":" + d.path
				if _, ok := fixtureDifferences[key]; ok {
					used[key] = true
					continue
				}
				t.Errorf("%s: %s", d.path, d.problem)
			}
		})
	}
	for key, why := range fixtureDifferences {
		if !used[key] {
			t.Errorf("allow-list entry %q (%s) no longer matches a difference: remove it", key, why)
		}
	}
}

type shapeDiff struct{ path, problem string }

// compareShapes lists the fields of fixture that ours lacks or types differently.
func compareShapes(fixture, ours any, path string) []shapeDiff {
	switch f := fixture.(type) {
	case map[string]any:
		o, ok := ours.(map[string]any)
		if !ok {
			return []shapeDiff{{path, "fixture has an object, sandbox " + describe(ours)}}
		}
		var out []shapeDiff
		for k, fv := range f {
			p := strings.TrimPrefix(path+"."+k, ".")
			ov, ok := o[k]
			if !ok {
				out = append(out, shapeDiff{p, "missing in the sandbox's response"})
				continue
			}
			out = append(out, compareShapes(fv, ov, p)...)
		}
		return out
	case []any:
		o, ok := ours.([]any)
		if !ok {
			if ours == "null" {
				return nil
			}
			return []shapeDiff{{path, "fixture has an array, sandbox " + describe(ours)}}
		}
		if len(f) == 0 || len(o) == 0 {
			return nil
		}
		return compareShapes(f[0], o[0], path+"[]")
	case string:
		if f == "null" {
			return nil // null in an example says nothing about the type
		}
		os, ok := ours.(string)
		if !ok {
			if _, isObj := ours.(map[string]any); isObj && f == "null" {
				return nil
			}
			return []shapeDiff{{path, "fixture has " + f + ", sandbox " + describe(ours)}}
		}
		if !slices.Contains(strings.Split(os, "|"), f) && os != "null" {
			return []shapeDiff{{path, "fixture has " + f + ", sandbox " + os}}
		}
	}
	return nil
}

func describe(v any) string {
	switch v.(type) {
	case map[string]any:
		return "an object"
	case []any:
		return "an array"
	}
	b, _ := json.Marshal(v)
	return string(b)
}

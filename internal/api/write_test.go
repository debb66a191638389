package api

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

func sampleInvoice() CreateInvoiceRequest {
	return CreateInvoiceRequest{
		Name: "Azumii", Email: "azumii@example.com", Mobile: "08996136751",
		RedirectURL: "https://merchant.example/thanks", Description: "March retainer",
		ExpiredAt: time.Date(2026, 4, 19, 23, 43, 23, 0, time.FixedZone("WIB", 7*3600)),
		Items:     []InvoiceItem{{Quantity: 2, Rate: 50000, Description: "Consulting hour"}, {Quantity: 1, Rate: 12500.5, Description: "Fee"}},
		ExtraData: InvoiceExtraData{NoCustomer: "827hiueqy271hj", IDProd: "contoh aja"},
	}
}

// TestGoldenRequests sends every write to a server answering with the fixture body, and checks the request
// (method, path, headers, exact JSON body) and the decoded answer.
func TestGoldenRequests(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name   string
		path   string
		answer string // response body, read by body()
		call   func(c *Client) (any, error)
		check  func(t *testing.T, got any)
	}{
		{"create-invoice", "/hl/v1/invoice/create", "Invoices__invoice-create-response.json",
			func(c *Client) (any, error) { return c.CreateInvoice(ctx, sampleInvoice()) },
			func(t *testing.T, got any) {
				inv := got.(*CreatedInvoice)
				if inv.ID != "df65d192-8396-4f9a-b4e5-8244648c07c5" || inv.TransactionID != "ca87fd13-8742-4d48-af33-7de1a417bc34" ||
					inv.ExpiredAt != (Int{1776617003000, true}) || inv.ExtraData.IDProd != "contoh aja" || inv.Message != "success" ||
					!strings.HasPrefix(inv.Link, "https://") || !json.Valid(inv.Raw) {
					t.Errorf("%+v", inv)
				}
			}},
		{"edit-payment", "/hl/v1/payment/edit", "PaymentRequests__payment-request-edit-response.json",
			func(c *Client) (any, error) {
				return c.EditPayment(ctx, EditPaymentRequest{ID: "e890d24a-cfc0-4915-83d2-3166b9ffba9e", Name: "Azumii",
					Email: "azumii@example.com", Mobile: "08996136751", Amount: 100000, RedirectURL: "https://merchant.example/r",
					Description: "Ubah ReqPayment", ExpiredAt: time.Date(2026, 1, 2, 3, 4, 5, 600e6, time.UTC)})
			},
			func(t *testing.T, got any) {
				p := got.(*PaymentLink)
				if p.ID != "e890d24a-cfc0-4915-83d2-3166b9ffba9e" || p.Link != "https://testingmayar.myr.id/invoices/ohsjrd3wko" {
					t.Errorf("%+v", p)
				}
			}},
		{"update-customer-email", "/hl/v1/customer/update", "Customers__customer-update-response.json",
			func(c *Client) (any, error) { return c.UpdateCustomerEmail(ctx, "old@example.com", "new@example.com") },
			func(t *testing.T, got any) {
				if a := got.(*Ack); a.Message != "sukses" {
					t.Errorf("%+v", a)
				}
			}},
		{"validate-coupon", "/hl/v1/coupon/validate", "Discounts__discount-validate-response.json",
			func(c *Client) (any, error) {
				return c.ValidateCoupon(ctx, ValidateCouponRequest{PaymentLinkID: "pl-1", CouponCode: "143KYCN", FinalAmount: 90000})
			},
			func(t *testing.T, got any) {
				v := got.(*CouponValidation)
				if !v.Valid || v.Coupon == nil || v.Coupon.Code != "143KYCN" || v.Coupon.DiscountValue != (Float{10, true}) ||
					v.Coupon.MinimumPurchase.Valid || v.Coupon.DiscountType != "percentage" || v.Message != "Success" {
					t.Errorf("%+v %+v", v, v.Coupon)
				}
			}},
		{"generate-checkout", "/credit/v1/credit/generate/immutable/checkout", "CreditBasedProduct__credit-usage-checkout-response.json",
			func(c *Client) (any, error) {
				return c.GenerateCheckout(ctx, CheckoutRequest{ProductID: "40f26fbe", CreditAmount: 100,
					Customer: CustomerInfo{Name: "Kirana", Email: "k@example.com", Mobile: "6281296450946"}})
			},
			func(t *testing.T, got any) {
				co := got.(*Checkout)
				if co.CheckoutURL != "https://example.myr.id/pl/test?immutable=abc" || co.PaymentLinkURL != "https://example.myr.id/pl/test" {
					t.Errorf("%+v", co)
				}
			}},
		{"add-credit", "/credit/v1/credit/customer/add-credit", "CreditBasedProduct__credit-usage-add-credit-response.json",
			func(c *Client) (any, error) {
				return c.AddCredit(ctx, AddCreditRequest{CustomerID: "faa4ee60", ProductID: "40f26fbe", Amount: 100})
			},
			func(t *testing.T, got any) {
				a := got.(*CreditAdded)
				if a.Amount != (Int{100, true}) || a.CustomerBalance != (Int{911090, true}) || a.CustomerID == "" || a.Message != "success" {
					t.Errorf("%+v", a)
				}
			}},
		{"activate-license", "/saas/v1/license/activate", "SaaSMembership__saas-license-success-response.json",
			func(c *Client) (any, error) { return c.ActivateLicense(ctx, "LICENSECODE12345", "84d1d247") },
			func(t *testing.T, got any) {
				if a := got.(*Ack); a.Message != "success" {
					t.Errorf("%+v", a)
				}
			}},
		{"deactivate-license", "/saas/v1/license/deactivate", "SaaSMembership__saas-license-success-response.json",
			func(c *Client) (any, error) { return c.DeactivateLicense(ctx, "LICENSECODE12345", "84d1d247") },
			func(t *testing.T, got any) {}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			answer := body(t, tt.answer)
			var r *http.Request
			var sent []byte
			s := newServer(t, func(_ int64, w http.ResponseWriter, req *http.Request) {
				r = req
				sent, _ = io.ReadAll(req.Body)
				writeJSON(w, 200, answer)
			})
			withCodecs(t, func(t *testing.T) {
				got, err := tt.call(newClient(t, fastConfig(s.URL)))
				if err != nil {
					t.Fatal(err)
				}
				if r.Method != http.MethodPost || r.URL.Path != tt.path || r.URL.RawQuery != "" {
					t.Errorf("sent %s %s", r.Method, r.URL)
				}
				if r.Header.Get("Authorization") != "Bearer "+testKey || r.Header.Get("Content-Type") != "application/json" ||
					r.Header.Get("Accept") != "application/json" {
					t.Errorf("headers %v", r.Header)
				}
				golden(t, "requests/"+tt.name+".json", append(sent, '\n'))
				tt.check(t, got)
			})
		})
	}
}

// TestWriteAnswerVariants: answers that differ from the spec's samples in ways the service is known to vary.
func TestWriteAnswerVariants(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name   string
		answer string
		call   func(c *Client) (string, error) // a summary of the decoded answer
		want   string
	}{
		{"add-credit flat membership body", string(body(t, "CreditMembership__credit-add-credit-response.json")),
			func(c *Client) (string, error) {
				a, err := c.AddCredit(ctx, AddCreditRequest{CustomerID: "c", ProductID: "p", Amount: 100})
				if err != nil {
					return "", err
				}
				return a.CustomerID + " " + strings.Join([]string{i64(a.Amount), i64(a.CustomerBalance), a.Message}, " "), nil
			}, "faa4ee60-cf45-4043-b964-303890713bb9 100 911090 success"},
		{"add-credit numbers as strings", `{"statusCode":200,"message":"success","data":{"customerId":"c","productId":"p","amount":"100","customerBalance":"2500"}}`,
			func(c *Client) (string, error) {
				a, err := c.AddCredit(ctx, AddCreditRequest{CustomerID: "c", ProductID: "p", Amount: 100})
				if err != nil {
					return "", err
				}
				return i64(a.Amount) + " " + i64(a.CustomerBalance), nil
			}, "100 2500"},
		{"create-invoice data as an array of one", `{"statusCode":200,"messages":"success","data":[{"id":"inv-1","link":"l","expiredAt":"1776617003000"}]}`,
			func(c *Client) (string, error) {
				inv, err := c.CreateInvoice(ctx, sampleInvoice())
				if err != nil {
					return "", err
				}
				return inv.ID + " " + i64(inv.ExpiredAt), nil
			}, "inv-1 1776617003000"},
		{"checkout inside data", `{"statusCode":200,"message":"success","data":{"creditUsageImmutableCheckoutUrl":"u","paymentLinkUrl":"p"}}`,
			func(c *Client) (string, error) {
				co, err := c.GenerateCheckout(ctx, CheckoutRequest{ProductID: "p", Customer: CustomerInfo{"n", "e", "m"}})
				if err != nil {
					return "", err
				}
				return co.CheckoutURL + co.PaymentLinkURL, nil
			}, "up"},
		{"coupon not valid", `{"statusCode":200,"messages":"Coupon not found","data":{"valid":false,"coupon":null}}`,
			func(c *Client) (string, error) {
				v, err := c.ValidateCoupon(ctx, ValidateCouponRequest{PaymentLinkID: "pl", CouponCode: "NOPE"})
				if err != nil {
					return "", err
				}
				return strings.Join([]string{boolText(v.Valid), boolText(v.Coupon == nil), v.Message}, " "), nil
			}, "false true Coupon not found"},
		{"checkout without a URL is unknown", `{"statusCode":200,"message":"success"}`,
			func(c *Client) (string, error) {
				_, err := c.GenerateCheckout(ctx, CheckoutRequest{ProductID: "p", Customer: CustomerInfo{"n", "e", "m"}})
				return boolText(IsUnknownOutcome(err)), nil
			}, "true"},
		{"add-credit amount not a number is unknown", `{"statusCode":200,"data":{"amount":"lots"}}`,
			func(c *Client) (string, error) {
				_, err := c.AddCredit(ctx, AddCreditRequest{CustomerID: "c", ProductID: "p", Amount: 1})
				return boolText(IsUnknownOutcome(err) && strings.Contains(err.Error(), "decode: data: ")), nil
			}, "true"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := scripted(t, status(200, tt.answer))
			withCodecs(t, func(t *testing.T) {
				got, err := tt.call(newClient(t, fastConfig(s.URL)))
				if err != nil {
					t.Fatal(err)
				}
				if got != tt.want {
					t.Errorf("got %q, want %q", got, tt.want)
				}
			})
		})
	}
}

func i64(i Int) string {
	b, _ := i.MarshalJSON()
	return string(b)
}

func boolText(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

// TestWriteValidation: a request missing what the spec requires is refused before anything is sent.
func TestWriteValidation(t *testing.T) {
	ctx := context.Background()
	noItems := sampleInvoice()
	noItems.Items = nil
	badItem := sampleInvoice()
	badItem.Items[1].Quantity = 0
	noExpiry := sampleInvoice()
	noExpiry.ExpiredAt = time.Time{}
	noExpiry.Email = " "
	tests := []struct {
		name string
		call func(c *Client) error
		want string
	}{
		{"invoice without items", func(c *Client) error { _, err := c.CreateInvoice(ctx, noItems); return err },
			"POST /hl/v1/invoice/create: invalid request: items: at least one is required"},
		{"invoice item quantity", func(c *Client) error { _, err := c.CreateInvoice(ctx, badItem); return err },
			"items[1].quantity must be positive"},
		{"invoice email and expiry", func(c *Client) error { _, err := c.CreateInvoice(ctx, noExpiry); return err },
			"email is required; expiredAt is required"},
		{"edit payment", func(c *Client) error { _, err := c.EditPayment(ctx, EditPaymentRequest{Name: "n"}); return err },
			"POST /hl/v1/payment/edit: invalid request: id is required; email is required; mobile is required; redirectUrl is required; amount must be positive; expiredAt is required"},
		{"update email", func(c *Client) error { _, err := c.UpdateCustomerEmail(ctx, "a@x", ""); return err },
			"toEmail is required"},
		{"coupon", func(c *Client) error {
			_, err := c.ValidateCoupon(ctx, ValidateCouponRequest{FinalAmount: -1})
			return err
		},
			"paymentLinkId is required; finalAmount must not be negative"},
		{"checkout", func(c *Client) error { _, err := c.GenerateCheckout(ctx, CheckoutRequest{ProductID: "p"}); return err },
			"customerInfo.name is required"},
		{"add credit", func(c *Client) error {
			_, err := c.AddCredit(ctx, AddCreditRequest{CustomerID: "c", ProductID: "p", Amount: 0})
			return err
		}, "amount must be positive"},
		{"license", func(c *Client) error { _, err := c.DeactivateLicense(ctx, "", "p"); return err },
			"POST /saas/v1/license/deactivate: invalid request: licenseCode is required"},
	}
	s := scripted(t, ok)
	c := newClient(t, fastConfig(s.URL))
	for _, tt := range tests {
		if err := tt.call(c); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want %q", tt.name, err, tt.want)
		}
	}
	if s.hits.Load() != 0 {
		t.Errorf("%d invalid requests were sent", s.hits.Load())
	}
}

// TestDocumentedWriteAnswers: the duplicate-request 429 on invoice create is returned at once (never retried,
// unlike a rate limit) and recognised; coupon 400/404 are a result (valid=false with the reason), not an error.
func TestDocumentedWriteAnswers(t *testing.T) {
	ctx := context.Background()
	const dup = `{"statusCode":429,"messages":"Duplicate request detected. Please wait 1 minute before trying again."}`
	s := newServer(t, func(n int64, w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/hl/v1/invoice/create":
			writeJSON(w, http.StatusTooManyRequests, []byte(dup))
		case "/hl/v1/coupon/validate":
			b, _ := io.ReadAll(r.Body)
			if strings.Contains(string(b), "NOSUCH") {
				writeJSON(w, http.StatusNotFound, []byte(`{"statusCode":404,"messages":"Kode kupon tidak ditemukan"}`))
				return
			}
			writeJSON(w, http.StatusBadRequest, []byte(`{"statusCode":400,"messages":"Kupon sudah kedaluwarsa"}`))
		}
	})
	c := newClient(t, fastConfig(s.URL))
	_, err := c.CreateInvoice(ctx, sampleInvoice())
	if !IsDuplicateRequest(err) || IsUnknownOutcome(err) {
		t.Errorf("duplicate 429: %v (duplicate %v)", err, IsDuplicateRequest(err))
	}
	if n := s.hits.Load(); n != 1 {
		t.Errorf("%d requests for a duplicate-request answer, want 1 (never retried)", n)
	}
	for _, tc := range []struct {
		code, msg string
		status    int
	}{{"NOSUCH", "Kode kupon tidak ditemukan", 404}, {"OLD10", "Kupon sudah kedaluwarsa", 400}} {
		v, err := c.ValidateCoupon(ctx, ValidateCouponRequest{PaymentLinkID: "p1", CouponCode: tc.code, FinalAmount: 1000})
		if err != nil || v.Valid || v.Message != tc.msg || v.Status != tc.status {
			t.Errorf("coupon %s: %+v, %v; want valid=false %q (%d)", tc.code, v, err, tc.msg, tc.status)
		}
	}
}

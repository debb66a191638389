package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// Ack is what every write answer carries besides its data.
type Ack struct {
	Message string          // messages or message
	Raw     json.RawMessage // the whole answer body, for an audit journal
}

// InvoiceItem is one line of an invoice.
type InvoiceItem struct {
	Quantity    float64 `json:"quantity"`
	Rate        float64 `json:"rate"` // price per item
	Description string  `json:"description"`
}

// InvoiceExtraData is the caller's custom data echoed back by the service.
type InvoiceExtraData struct {
	NoCustomer string `json:"noCustomer"`
	IDProd     string `json:"idProd"`
}

// CreateInvoiceRequest is the body of POST /hl/v1/invoice/create. Every field is sent.
type CreateInvoiceRequest struct {
	Name, Email, Mobile string
	RedirectURL         string
	Description         string
	ExpiredAt           time.Time // sent as ISO 8601 UTC
	Items               []InvoiceItem
	ExtraData           InvoiceExtraData
}

// CreatedInvoice is the answer to CreateInvoice.
type CreatedInvoice struct {
	ID            string           `json:"id"`
	TransactionID string           `json:"transactionId"`
	Link          string           `json:"link"`
	ExpiredAt     Int              `json:"expiredAt"` // epoch milliseconds
	ExtraData     InvoiceExtraData `json:"extraData"`
	Ack           `json:"-"`
}

// CreateInvoice creates an invoice. Its error satisfies IsUnknownOutcome when the invoice may exist anyway.
func (c *Client) CreateInvoice(ctx context.Context, r CreateInvoiceRequest) (*CreatedInvoice, error) {
	const path = "/hl/v1/invoice/create"
	problems := missing("name", r.Name, "email", r.Email, "mobile", r.Mobile, "redirectUrl", r.RedirectURL)
	if r.ExpiredAt.IsZero() {
		problems = append(problems, "expiredAt is required")
	}
	if len(r.Items) == 0 {
		problems = append(problems, "items: at least one is required")
	}
	for i, it := range r.Items {
		if it.Quantity <= 0 {
			problems = append(problems, fmt.Sprintf("items[%d].quantity must be positive", i))
		}
		if it.Rate < 0 {
			problems = append(problems, fmt.Sprintf("items[%d].rate must not be negative", i))
		}
	}
	if err := invalid(path, problems); err != nil {
		return nil, err
	}
	body := struct {
		Name        string           `json:"name"`
		Email       string           `json:"email"`
		Mobile      string           `json:"mobile"`
		RedirectURL string           `json:"redirectUrl"`
		Description string           `json:"description"`
		ExpiredAt   string           `json:"expiredAt"`
		Items       []InvoiceItem    `json:"items"`
		ExtraData   InvoiceExtraData `json:"extraData"`
	}{r.Name, r.Email, r.Mobile, r.RedirectURL, r.Description, isoUTC(r.ExpiredAt), r.Items, r.ExtraData}
	var out CreatedInvoice
	err := c.post(ctx, path, body, dataObject, &out, &out.Ack, func() error {
		if out.ID == "" {
			return errors.New("data.id: missing")
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &out, nil
}

// EditPaymentRequest is the body of POST /hl/v1/payment/edit. Every field is sent.
type EditPaymentRequest struct {
	ID                  string // the single payment request to edit
	Name, Email, Mobile string
	Amount              int64
	RedirectURL         string
	Description         string
	ExpiredAt           time.Time // sent as ISO 8601 UTC
}

// PaymentLink is the answer to EditPayment.
type PaymentLink struct {
	ID   string `json:"id"`
	Link string `json:"link"`
	Ack  `json:"-"`
}

// EditPayment edits a single payment request.
func (c *Client) EditPayment(ctx context.Context, r EditPaymentRequest) (*PaymentLink, error) {
	const path = "/hl/v1/payment/edit"
	problems := missing("id", r.ID, "name", r.Name, "email", r.Email, "mobile", r.Mobile, "redirectUrl", r.RedirectURL)
	if r.Amount <= 0 {
		problems = append(problems, "amount must be positive")
	}
	if r.ExpiredAt.IsZero() {
		problems = append(problems, "expiredAt is required")
	}
	if err := invalid(path, problems); err != nil {
		return nil, err
	}
	// The spec's field table writes redirectURL and its sample redirectUrl: both are sent, so the service
	// finds the value under whichever name it reads.
	body := struct {
		ID          string `json:"id"`
		Name        string `json:"name"`
		Email       string `json:"email"`
		Amount      int64  `json:"amount"`
		Mobile      string `json:"mobile"`
		RedirectURL string `json:"redirectURL"`
		RedirectUrl string `json:"redirectUrl"`
		Description string `json:"description"`
		ExpiredAt   string `json:"expiredAt"`
	}{r.ID, r.Name, r.Email, r.Amount, r.Mobile, r.RedirectURL, r.RedirectURL, r.Description, isoUTC(r.ExpiredAt)}
	var out PaymentLink
	if err := c.post(ctx, path, body, dataObject, &out, &out.Ack, nil); err != nil {
		return nil, err
	}
	return &out, nil
}

// UpdateCustomerEmail changes a customer's e-mail address from one to the other.
func (c *Client) UpdateCustomerEmail(ctx context.Context, fromEmail, toEmail string) (*Ack, error) {
	const path = "/hl/v1/customer/update"
	if err := invalid(path, missing("fromEmail", fromEmail, "toEmail", toEmail)); err != nil {
		return nil, err
	}
	body := struct {
		From string `json:"fromEmail"`
		To   string `json:"toEmail"`
	}{fromEmail, toEmail}
	var ack Ack
	if err := c.post(ctx, path, body, noData, nil, &ack, nil); err != nil {
		return nil, err
	}
	return &ack, nil
}

// ValidateCouponRequest is the body of POST /hl/v1/coupon/validate.
type ValidateCouponRequest struct {
	PaymentLinkID string
	Tickets       []json.RawMessage // selected tickets; sent as [] when none
	CouponCode    string            // "" when no coupon is used; always sent
	FinalAmount   int64
	CustomerEmail string // optional
}

// Coupon is the coupon a validation found.
type Coupon struct {
	ID                   string `json:"id"`
	Code                 string `json:"code"`
	DiscountType         string `json:"discountType"` // e.g. percentage, fixed
	DiscountValue        Float  `json:"discountValue"`
	MinimumPurchase      Float  `json:"minimumPurchase"` // not Valid when not set
	EligibleCustomerType string `json:"eligibleCustomerType"`
}

// CouponValidation is the answer to ValidateCoupon.
type CouponValidation struct {
	Valid  bool    `json:"valid"`
	Coupon *Coupon `json:"coupon"` // nil when the answer names none
	Ack    `json:"-"`
	// Status is the HTTP status of a refusal (404 unknown code or link, 400 a reason it does not apply), 0 for 200.
	Status int `json:"-"`
}

// ValidateCoupon asks whether a coupon code applies to a payment link.
func (c *Client) ValidateCoupon(ctx context.Context, r ValidateCouponRequest) (*CouponValidation, error) {
	const path = "/hl/v1/coupon/validate"
	problems := missing("paymentLinkId", r.PaymentLinkID)
	if r.FinalAmount < 0 {
		problems = append(problems, "finalAmount must not be negative")
	}
	if err := invalid(path, problems); err != nil {
		return nil, err
	}
	tickets := r.Tickets
	if tickets == nil {
		tickets = []json.RawMessage{}
	}
	body := struct {
		PaymentLinkID string            `json:"paymentLinkId"`
		Tickets       []json.RawMessage `json:"tickets"`
		CouponCode    string            `json:"couponCode"`
		FinalAmount   int64             `json:"finalAmount"`
		CustomerEmail string            `json:"customerEmail,omitempty"`
	}{r.PaymentLinkID, tickets, r.CouponCode, r.FinalAmount, r.CustomerEmail}
	var out CouponValidation
	if err := c.post(ctx, path, body, dataObject, &out, &out.Ack, nil); err != nil {
		// The service answers only a valid coupon with 200; 404 (unknown code or payment link) and 400 (each
		// reason a coupon does not apply) are the answer to the question, not a failed call.
		var ae *APIError
		if errors.As(err, &ae) && !ae.InBody && (ae.Status == http.StatusNotFound || ae.Status == http.StatusBadRequest) {
			return &CouponValidation{Valid: false, Ack: Ack{Message: ae.Message}, Status: ae.Status}, nil
		}
		return nil, err
	}
	return &out, nil
}

// CustomerInfo identifies the customer of a checkout link.
type CustomerInfo struct {
	Name   string `json:"name"`
	Email  string `json:"email"`
	Mobile string `json:"mobile"`
}

// CheckoutRequest is the body of POST /credit/v1/credit/generate/immutable/checkout.
type CheckoutRequest struct {
	ProductID    string
	CreditAmount float64 // only for credit-usage products; 0 leaves it out
	Customer     CustomerInfo
}

// Checkout is the answer to GenerateCheckout.
type Checkout struct {
	CheckoutURL    string `json:"creditUsageImmutableCheckoutUrl"`
	PaymentLinkURL string `json:"paymentLinkUrl"`
	Ack            `json:"-"`
}

// GenerateCheckout creates an immutable checkout link for a credit-usage product.
func (c *Client) GenerateCheckout(ctx context.Context, r CheckoutRequest) (*Checkout, error) {
	const path = "/credit/v1/credit/generate/immutable/checkout"
	problems := missing("productId", r.ProductID, "customerInfo.name", r.Customer.Name,
		"customerInfo.email", r.Customer.Email, "customerInfo.mobile", r.Customer.Mobile)
	if r.CreditAmount < 0 {
		problems = append(problems, "creditAmount must not be negative")
	}
	if err := invalid(path, problems); err != nil {
		return nil, err
	}
	body := struct {
		ProductID    string       `json:"productId"`
		CreditAmount float64      `json:"creditAmount,omitempty"`
		CustomerInfo CustomerInfo `json:"customerInfo"`
	}{r.ProductID, r.CreditAmount, r.Customer}
	var out Checkout
	err := c.post(ctx, path, body, dataOrTop, &out, &out.Ack, func() error {
		if out.CheckoutURL == "" {
			return errors.New("creditUsageImmutableCheckoutUrl: missing")
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &out, nil
}

// AddCreditRequest is the body of POST /credit/v1/credit/customer/add-credit.
type AddCreditRequest struct {
	CustomerID string
	ProductID  string
	Amount     int64 // positive
}

// CreditAdded is the answer to AddCredit. The spec types amount and customerBalance as string in one place
// and number in another; Int takes both.
type CreditAdded struct {
	CustomerID      string `json:"customerId"`
	ProductID       string `json:"productId"`
	Amount          Int    `json:"amount"`
	CustomerBalance Int    `json:"customerBalance"` // balance after the addition
	Ack             `json:"-"`
}

// AddCredit adds credit to a customer for a credit-usage product.
func (c *Client) AddCredit(ctx context.Context, r AddCreditRequest) (*CreditAdded, error) {
	const path = "/credit/v1/credit/customer/add-credit"
	problems := missing("customerId", r.CustomerID, "productId", r.ProductID)
	if r.Amount <= 0 {
		problems = append(problems, "amount must be positive")
	}
	if err := invalid(path, problems); err != nil {
		return nil, err
	}
	body := struct {
		CustomerID string `json:"customerId"`
		ProductID  string `json:"productId"`
		Amount     int64  `json:"amount"`
	}{r.CustomerID, r.ProductID, r.Amount}
	var out CreditAdded
	if err := c.post(ctx, path, body, dataOrTop, &out, &out.Ack, nil); err != nil {
		return nil, err
	}
	return &out, nil
}

// ActivateLicense sets a license to ACTIVE.
func (c *Client) ActivateLicense(ctx context.Context, licenseCode, productID string) (*Ack, error) {
	return c.license(ctx, "/saas/v1/license/activate", licenseCode, productID)
}

// DeactivateLicense sets a license to INACTIVE.
func (c *Client) DeactivateLicense(ctx context.Context, licenseCode, productID string) (*Ack, error) {
	return c.license(ctx, "/saas/v1/license/deactivate", licenseCode, productID)
}

func (c *Client) license(ctx context.Context, path, licenseCode, productID string) (*Ack, error) {
	if err := invalid(path, missing("licenseCode", licenseCode, "productId", productID)); err != nil {
		return nil, err
	}
	body := struct {
		LicenseCode string `json:"licenseCode"`
		ProductID   string `json:"productId"`
	}{licenseCode, productID}
	var ack Ack
	if err := c.post(ctx, path, body, noData, nil, &ack, nil); err != nil {
		return nil, err
	}
	return &ack, nil
}

// dataSource says where a write answer keeps its result.
type dataSource int

const (
	noData     dataSource = iota // statusCode and message only
	dataObject                   // in "data" (an array of one object is accepted)
	dataOrTop                    // in "data" when it is an object, else at the top level
)

// post sends one write. Its answer's result is decoded into out, its message and body into ack; check,
// when given, rejects a decoded answer that lacks what the caller cannot do without.
func (c *Client) post(ctx context.Context, path string, in any, src dataSource, out any, ack *Ack, check func() error) error {
	// encoding/json for request bodies: they are small, and its output is the reference.
	body, err := json.Marshal(in)
	if err != nil {
		return fmt.Errorf("POST %s: encode request: %w", path, err)
	}
	return c.do(ctx, &call{method: http.MethodPost, path: path, body: body,
		decode: func(status int, b []byte) error {
			e, err := decodeEnvelope(b, status)
			if err != nil {
				return err
			}
			if err := decodeResult(e, b, src, out); err != nil {
				return err
			}
			if check != nil {
				if err := check(); err != nil {
					return err
				}
			}
			ack.Message = e.message()
			ack.Raw = bytes.Clone(b)
			return nil
		}})
}

func decodeResult(e *envelope, body []byte, src dataSource, out any) error {
	switch src {
	case dataObject:
		obj, err := e.object()
		if err != nil {
			return err
		}
		if err := unmarshal(obj, out); err != nil {
			return fmt.Errorf("data: %w", err)
		}
	case dataOrTop:
		if kindOf(e.Data) == "object" {
			if err := unmarshal(e.Data, out); err != nil {
				return fmt.Errorf("data: %w", err)
			}
			return nil
		}
		if err := unmarshal(body, out); err != nil {
			return fmt.Errorf("body: %w", err)
		}
	}
	return nil
}

// missing lists the required fields of name/value pairs that are empty.
func missing(pairs ...string) []string {
	var out []string
	for i := 0; i+1 < len(pairs); i += 2 {
		if strings.TrimSpace(pairs[i+1]) == "" {
			out = append(out, pairs[i]+" is required")
		}
	}
	return out
}

func invalid(path string, problems []string) error {
	if len(problems) == 0 {
		return nil
	}
	return fmt.Errorf("POST %s: invalid request: %s", path, strings.Join(problems, "; "))
}

func isoUTC(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

package sandbox

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// POST handlers. Each validates, applies under the lock, then answers through
// the fault plan (which may fail the response after the change is applied).

func required(name, v string) error {
	if strings.TrimSpace(v) == "" {
		return bad("%s: required", name)
	}
	return nil
}

// positive checks a required whole-number amount.
func positive(name string, v *int64) error {
	if v == nil || *v <= 0 {
		return bad("%s: required, a positive integer", name)
	}
	return nil
}

func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

func parseISO(name, v string) (int64, error) {
	if err := required(name, v); err != nil {
		return 0, err
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05", time.DateOnly} {
		if t, err := time.Parse(layout, v); err == nil {
			return t.UnixMilli(), nil
		}
	}
	return 0, bad("%s: %q is not an ISO-8601 date-time", name, v)
}

// baseURL is where links handed back by writes point: the request's own host.
func baseURL(c *reqCtx) string {
	scheme := "http"
	if c.r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + c.r.Host
}

// apply runs a state change under the write lock and encodes the answer.
func (s *Server) apply(c *reqCtx, change func(e *enc) error) {
	e := getEnc(s.w, false)
	defer putEnc(e)
	s.mu.Lock()
	s.gen++
	err := change(e)
	s.mu.Unlock()
	if err != nil {
		c.fail(err)
		return
	}
	c.send(e.b)
}

func (e *enc) okHead(msgKey string) {
	e.open()
	e.k("statusCode")
	e.int(200)
	e.k(msgKey)
	e.str("success")
}

type invoiceItem struct {
	Quantity    *float64 `json:"quantity"`
	Rate        *float64 `json:"rate"`
	Description string   `json:"description"`
}

type extraData struct {
	NoCustomer string `json:"noCustomer"`
	IDProd     string `json:"idProd"`
}

func (s *Server) createInvoice(c *reqCtx) {
	var in struct {
		Name        string        `json:"name"`
		Email       string        `json:"email"`
		Mobile      string        `json:"mobile"`
		RedirectURL string        `json:"redirectUrl"`
		Description string        `json:"description"`
		ExpiredAt   string        `json:"expiredAt"`
		Items       []invoiceItem `json:"items"`
		ExtraData   *extraData    `json:"extraData"`
	}
	// The service answers every malformed invoice with the same text, naming no field.
	if err := decodeBody(c.r, &in); err != nil {
		c.fail(bad(msgValidation))
		return
	}
	exp, err := parseISO("expiredAt", in.ExpiredAt)
	if err = firstErr(required("name", in.Name), required("email", in.Email), required("mobile", in.Mobile),
		required("redirectUrl", in.RedirectURL), required("description", in.Description), err); err != nil {
		c.fail(bad(msgValidation))
		return
	}
	if len(in.Items) == 0 {
		c.fail(bad(msgValidation))
		return
	}
	var amount float64
	for _, it := range in.Items {
		if it.Quantity == nil || *it.Quantity <= 0 || it.Rate == nil || *it.Rate < 0 || strings.TrimSpace(it.Description) == "" {
			c.fail(bad(msgValidation))
			return
		}
		amount += *it.Quantity * *it.Rate
	}
	if x := in.ExtraData; x != nil && (len(x.NoCustomer) > 100 || len(x.IDProd) > 100) {
		c.fail(bad(msgExtraDataValidation))
		return
	}
	s.apply(c, func(e *enc) error {
		w := s.w
		email := strings.TrimSpace(in.Email)
		if at := strings.IndexByte(email, '@'); at < 1 || at == len(email)-1 || strings.ContainsAny(email, " \t") {
			return missing(msgCustomerNotCreated)
		}
		key := invoiceKey(in.Email, in.Name, in.Description, in.ExpiredAt, int64(amount+0.5))
		if w.recentCreate(key) {
			return duplicate(msgDuplicateRequest)
		}
		noCustomer := ""
		if in.ExtraData != nil {
			noCustomer = strings.TrimSpace(in.ExtraData.NoCustomer)
		}
		if noCustomer != "" && w.invByNoCustomer[noCustomer] != nil {
			return conflict(msgAlreadyExist)
		}
		at := w.tick()
		cust := w.customerFor(in.Email, in.Name, in.Mobile, at)
		inv := &invoice{id: w.newID(), txID: w.newID(), amount: int64(amount + 0.5), createdAt: at, description: in.Description,
			link: w.slug(11), status: "active", txStatus: "created", name: in.Name, redirectURL: in.RedirectURL, cust: cust, expiredAt: exp}
		w.openInvoice(inv)
		w.rememberCreate(key)
		if noCustomer != "" {
			w.invByNoCustomer[noCustomer] = inv
		}
		e.okHead("messages")
		e.k("data")
		e.open()
		e.k("id")
		e.id(inv.id)
		e.k("transactionId")
		e.id(inv.txID)
		e.k("link")
		e.str(baseURL(c) + "/invoices/" + inv.link)
		e.k("expiredAt")
		e.int(exp)
		e.k("extraData")
		if in.ExtraData == nil {
			e.null()
		} else {
			e.open()
			e.k("noCustomer")
			e.str(in.ExtraData.NoCustomer)
			e.k("idProd")
			e.str(in.ExtraData.IDProd)
			e.close()
		}
		e.close()
		e.close()
		return nil
	})
}

// customerFor finds the customer with this e-mail, or registers one, as the
// service does when billing a new address.
func (w *world) customerFor(email, name, mobile string, at int64) *customer {
	if list := w.custByEmail[strings.ToLower(email)]; len(list) > 0 {
		return list[0]
	}
	c := &customer{id: w.newID(), createdAt: at, updatedAt: at, email: email, mobile: mobile, name: name, status: "active"}
	w.addCustomer(c)
	return c
}

func (s *Server) editPayment(c *reqCtx) {
	var in struct {
		ID             string `json:"id"`
		Name           string `json:"name"`
		Email          string `json:"email"`
		Mobile         string `json:"mobile"`
		Description    string `json:"description"`
		ExpiredAt      string `json:"expiredAt"`
		Amount         *int64 `json:"amount"`
		RedirectURL    string `json:"redirectURL"`
		RedirectURLAlt string `json:"redirectUrl"`
	}
	if err := decodeBody(c.r, &in); err != nil {
		c.fail(err)
		return
	}
	redirect := in.RedirectURL
	if redirect == "" {
		redirect = in.RedirectURLAlt
	}
	exp, err := parseISO("expiredAt", in.ExpiredAt)
	if err = firstErr(required("id", in.ID), required("name", in.Name), required("email", in.Email),
		required("mobile", in.Mobile), required("redirectURL", redirect), required("description", in.Description),
		positive("amount", in.Amount), err); err != nil {
		c.fail(err)
		return
	}
	s.apply(c, func(e *enc) error {
		w := s.w
		id, err := parseID(in.ID)
		p := w.prByID[id]
		if err != nil || p == nil {
			return missing(msgPaymentNotFound)
		}
		if p.status == "paid" {
			return conflict(msgAlreadyPaid)
		}
		at := w.tick()
		p.name, p.amount, p.description, p.redirectURL, p.expiredAt = in.Name, *in.Amount, in.Description, redirect, exp
		p.cust = w.customerFor(in.Email, in.Name, in.Mobile, at)
		if u := p.unpaid; u != nil {
			u.amount, u.cust = p.amount, p.cust
			u.expireAt = exp
			w.queueExpiry(u)
		}
		e.okHead("messages")
		e.k("data")
		e.open()
		e.k("id")
		e.id(p.id)
		e.k("link")
		e.str(baseURL(c) + "/invoices/" + p.link)
		e.close()
		e.close()
		return nil
	})
}

func (s *Server) updateCustomer(c *reqCtx) {
	var in struct {
		FromEmail string `json:"fromEmail"`
		ToEmail   string `json:"toEmail"`
	}
	if err := decodeBody(c.r, &in); err != nil {
		c.fail(bad(msgValidation))
		return
	}
	to := strings.TrimSpace(in.ToEmail)
	if err := firstErr(required("fromEmail", in.FromEmail), required("toEmail", in.ToEmail)); err != nil {
		c.fail(bad(msgValidation))
		return
	}
	if at := strings.IndexByte(to, '@'); at < 1 || at == len(to)-1 || strings.ContainsAny(to, " \t") {
		c.fail(bad(msgValidation))
		return
	}
	s.apply(c, func(e *enc) error {
		w := s.w
		list := w.custByEmail[strings.ToLower(in.FromEmail)]
		if len(list) == 0 {
			return missing(msgCustomerEmailNotFound)
		}
		if taken := w.custByEmail[strings.ToLower(to)]; len(taken) > 0 && !(len(taken) == 1 && taken[0] == list[0]) {
			return bad(msgEmailTaken)
		}
		w.renameCustomer(list[0], to, w.tick())
		e.okHead("messages")
		e.close()
		return nil
	})
}

func (s *Server) validateCoupon(c *reqCtx) {
	var in struct {
		PaymentLinkID string `json:"paymentLinkId"`
		CouponCode    string `json:"couponCode"`
		CustomerEmail string `json:"customerEmail"`
		FinalAmount   *int64 `json:"finalAmount"`
		Tickets       []any  `json:"tickets"`
	}
	if err := decodeBody(c.r, &in); err != nil {
		c.fail(err)
		return
	}
	if err := required("paymentLinkId", in.PaymentLinkID); err != nil {
		c.fail(err)
		return
	}
	s.apply(c, func(e *enc) error {
		w := s.w
		amount, typ, err := w.linkAmount(in.PaymentLinkID)
		if err != nil {
			return err
		}
		if in.FinalAmount != nil {
			amount = *in.FinalAmount
		}
		cp := w.couponBy[strings.ToUpper(strings.TrimSpace(in.CouponCode))]
		// Only a coupon that applies gets 200; every reason it does not is a 4xx with the service's text.
		if err := w.couponProblem(cp, in.CouponCode, in.PaymentLinkID, typ, in.CustomerEmail, amount); err != nil {
			return err
		}
		e.open()
		e.k("statusCode")
		e.int(200)
		e.k("messages")
		e.str("Success")
		e.k("data")
		e.open()
		e.k("valid")
		e.bool(true)
		e.k("coupon")
		e.coupon(cp)
		e.close()
		e.close()
		return nil
	})
}

// linkAmount is the price and product type of the payment link a coupon is validated against ("" for a
// payment request or an invoice).
func (w *world) linkAmount(raw string) (int64, string, error) {
	id, err := parseID(raw)
	if err == nil {
		if p := w.prodByID[id]; p != nil {
			return p.amount, p.typ, nil
		}
		if p := w.prByID[id]; p != nil {
			return p.amount, "", nil
		}
		if i := w.invByID[id]; i != nil {
			return i.amount, "", nil
		}
	}
	return 0, "", missing(msgLinkNotFound)
}

// couponProblem says why a coupon does not apply (a 404 for an unknown code, a 400 for each other reason),
// or nil when it does.
func (w *world) couponProblem(cp *coupon, code, linkID, linkType, email string, amount int64) error {
	switch {
	case strings.TrimSpace(code) == "":
		return bad(msgCouponCodeRequired)
	case cp == nil:
		return missing(msgCouponNotFound)
	case cp.inactive:
		return bad(msgCouponInactive)
	case cp.startsAt != 0 && cp.startsAt > w.now:
		return bad(msgCouponNotYetActive)
	case cp.expiresAt != 0 && cp.expiresAt <= w.now:
		return bad(msgCouponExpired)
	case cp.prod != nil && cp.prod.id.String() != linkID:
		return bad(msgCouponOtherLink)
	case linkType != "" && slices.Contains(cp.excludedTypes, linkType):
		return bad(msgCouponTypeExcluded)
	case cp.hasMin && amount < cp.minPurchase:
		return bad(msgCouponMinimum, rupiah(cp.minPurchase))
	case cp.usageLimit > 0 && cp.used >= cp.usageLimit:
		return bad(msgCouponUsedUp)
	}
	if cp.eligible == "all" {
		return nil
	}
	if strings.TrimSpace(email) == "" {
		return bad(msgCouponNeedsEmail)
	}
	known := len(w.custByEmail[strings.ToLower(strings.TrimSpace(email))]) > 0
	if cp.eligible == "new" && known {
		return bad(msgCouponNewOnly)
	}
	if cp.eligible == "existing" && !known {
		return bad(msgCouponExistingOnly)
	}
	return nil
}

// creditProduct resolves productId to a credit-usage product.
func (w *world) creditProduct(raw string) (*product, error) {
	id, err := parseID(raw)
	p := w.prodByID[id]
	if err != nil || p == nil {
		return nil, missing("productId: product %q not found", raw)
	}
	if !p.creditUsage() {
		return nil, bad("productId: product %s is %s/%s, not a credit-usage product", raw, p.typ, nullStr(p.subType))
	}
	return p, nil
}

func nullStr(s string) string {
	if s == "" {
		return "null"
	}
	return s
}

func (s *Server) addCredit(c *reqCtx) {
	var in struct {
		CustomerID string `json:"customerId"`
		ProductID  string `json:"productId"`
		Amount     *int64 `json:"amount"`
	}
	if err := decodeBody(c.r, &in); err != nil {
		c.fail(err)
		return
	}
	if err := firstErr(required("customerId", in.CustomerID), required("productId", in.ProductID),
		positive("amount", in.Amount)); err != nil {
		c.fail(err)
		return
	}
	s.apply(c, func(e *enc) error {
		w := s.w
		id, err := parseID(in.CustomerID)
		cust := w.custByID[id]
		if err != nil || cust == nil {
			return missing("customerId: customer %q not found", in.CustomerID)
		}
		p, err := w.creditProduct(in.ProductID)
		if err != nil {
			return err
		}
		l := w.newLedgerTopup(w.tick(), cust, p, *in.Amount)
		s.topupFaults(l)
		w.addLedger(l)
		e.okHead("message")
		e.k("data")
		e.open()
		e.k("customerId")
		e.id(cust.id)
		e.k("productId")
		e.id(p.id)
		e.k("amount")
		e.int(*in.Amount)
		e.k("customerBalance")
		e.int(w.balance[balanceKey{cust.id, p.id}])
		e.close()
		e.close()
		return nil
	})
}

// newLedgerTopup is a merchant's manual top-up: it lands in the add-on wallet.
func (w *world) newLedgerTopup(at int64, c *customer, p *product, amount int64) *ledgerEntry {
	l := w.newLedger(at, c, p, "MERCHANT_TOPUP", amount, 0)
	l.walletType = "ADD_ON"
	return l
}

func (s *Server) setLicense(c *reqCtx, status string) {
	var in struct {
		LicenseCode string `json:"licenseCode"`
		ProductID   string `json:"productId"`
	}
	if err := decodeBody(c.r, &in); err != nil {
		c.fail(err)
		return
	}
	if err := firstErr(required("licenseCode", in.LicenseCode), required("productId", in.ProductID)); err != nil {
		c.fail(err)
		return
	}
	s.apply(c, func(e *enc) error {
		w := s.w
		id, _ := parseID(in.ProductID)
		l := w.licenseBy[licenseKey{strings.TrimSpace(in.LicenseCode), id}]
		if l == nil {
			return missing("license %q for product %q not found", in.LicenseCode, in.ProductID)
		}
		l.status, l.updatedAt = status, w.tick()
		e.open()
		e.k("statusCode")
		e.int(200)
		e.k("message")
		e.str("license status updated to " + status)
		e.close()
		return nil
	})
}

type customerInfo struct {
	Name   string `json:"name"`
	Email  string `json:"email"`
	Mobile string `json:"mobile"`
}

func (s *Server) immutableCheckout(c *reqCtx) {
	var in struct {
		ProductID    string        `json:"productId"`
		CreditAmount *float64      `json:"creditAmount"`
		CustomerInfo *customerInfo `json:"customerInfo"`
	}
	if err := decodeBody(c.r, &in); err != nil {
		c.fail(err)
		return
	}
	if err := required("productId", in.ProductID); err != nil {
		c.fail(err)
		return
	}
	if in.CustomerInfo == nil {
		c.fail(bad("customerInfo: required"))
		return
	}
	ci := in.CustomerInfo
	if err := firstErr(required("customerInfo.name", ci.Name), required("customerInfo.email", ci.Email),
		required("customerInfo.mobile", ci.Mobile)); err != nil {
		c.fail(err)
		return
	}
	if in.CreditAmount != nil && *in.CreditAmount <= 0 {
		c.fail(bad("creditAmount: must be positive"))
		return
	}
	s.apply(c, func(e *enc) error {
		w := s.w
		id, err := parseID(in.ProductID)
		p := w.prodByID[id]
		if err != nil || p == nil {
			return missing("productId: product %q not found", in.ProductID)
		}
		credit := ""
		if in.CreditAmount != nil {
			if _, err := w.creditProduct(in.ProductID); err != nil {
				return err
			}
			credit = strconv.FormatFloat(*in.CreditAmount, 'f', -1, 64)
		}
		w.tick()
		pay := baseURL(c) + "/pl/" + p.link
		e.okHead("message")
		e.k("creditUsageImmutableCheckoutUrl")
		e.str(pay + "?" + w.signCheckout(p.id.String(), ci.Name, ci.Email, ci.Mobile, credit).Encode())
		e.k("paymentLinkUrl")
		e.str(pay)
		e.close()
		return nil
	})
}

// signCheckout returns the checkout query: the identity fields, the credit
// amount and an HMAC-SHA256 token over all of them.
func (w *world) signCheckout(productID, name, email, mobile, credit string) url.Values {
	v := url.Values{}
	v.Set("immutable", "1")
	v.Set("productId", productID)
	v.Set("name", name)
	v.Set("email", email)
	v.Set("mobile", mobile)
	if credit != "" {
		v.Set("creditAmount", credit)
	}
	v.Set("token", w.checkoutToken(v))
	return v
}

func (w *world) checkoutToken(v url.Values) string {
	m := hmac.New(sha256.New, w.secret)
	for _, k := range []string{"productId", "name", "email", "mobile", "creditAmount"} {
		m.Write([]byte(k + "=" + v.Get(k) + "\n"))
	}
	return hex.EncodeToString(m.Sum(nil))
}

// VerifyCheckoutURL checks that u is an immutable checkout link this sandbox
// issued, unaltered, for a product that exists.
func (s *Server) VerifyCheckoutURL(u string) error {
	pu, err := url.Parse(u)
	if err != nil {
		return fmt.Errorf("checkout url: %w", err)
	}
	v := pu.Query()
	tok := v.Get("token")
	if tok == "" {
		return errors.New("checkout url: no token")
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	want := s.w.checkoutToken(v)
	if !hmac.Equal([]byte(tok), []byte(want)) {
		return errors.New("checkout url: token does not match its fields")
	}
	id, err := parseID(v.Get("productId"))
	if err != nil || s.w.prodByID[id] == nil {
		return fmt.Errorf("checkout url: product %q not found", v.Get("productId"))
	}
	return nil
}

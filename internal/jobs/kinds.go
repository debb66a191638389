package jobs

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/billsync/billsync/internal/api"
)

// Kind names a job kind: one per write endpoint of the service.
type Kind string

// The job kinds.
const (
	EmailFix          Kind = "email-fix"          // POST /hl/v1/customer/update
	CreditTopup       Kind = "credit-topup"       // POST /credit/v1/credit/customer/add-credit
	InvoiceCreate     Kind = "invoice-create"     // POST /hl/v1/invoice/create
	PaymentEdit       Kind = "payment-edit"       // POST /hl/v1/payment/edit
	LicenseActivate   Kind = "license-activate"   // POST /saas/v1/license/activate
	LicenseDeactivate Kind = "license-deactivate" // POST /saas/v1/license/deactivate
	CheckoutLink      Kind = "checkout-link"      // POST /credit/v1/credit/generate/immutable/checkout
	CouponCheck       Kind = "coupon-check"       // POST /hl/v1/coupon/validate (changes nothing)
)

// Kinds lists every kind in documentation order.
func Kinds() []Kind {
	return []Kind{EmailFix, CreditTopup, InvoiceCreate, PaymentEdit, LicenseActivate, LicenseDeactivate,
		CheckoutLink, CouponCheck}
}

// request is what one action sends, as text keyed by API field name; stored as JSON in the plan.
type request map[string]string

// dupKey is one value that must not repeat within a file.
type dupKey struct{ col, key string }

// column is one input column.
type column struct {
	name     string
	required bool
	help     string
}

// kindSpec is everything that differs between kinds.
type kindSpec struct {
	kind     Kind
	columns  []column
	oneOf    [][]string // at least one column of each group must be present
	readOnly bool       // changes nothing on the service
	// parse checks a row on its own; nil with no problem recorded means the row is skipped.
	parse func(r *rowReader, o *PlanOptions) request
	keys  func(q request, k *keys)
	// check validates against the warehouse, may complete q, and describes the action.
	check func(q request, w *world, r *rowReader) (target, change string, current map[string]string)
	// dupKeys name what must be unique within a file, with the column to point at.
	dupKeys func(q request) []dupKey
	// repeatKey is the change a row makes, by content: a row of a later plan with the same key (same kind and
	// account) repeats it and is held (repeats.go). It compares what reaches the service, never the file, so
	// row order, added rows and re-saved workbooks change nothing. nil: the kind changes nothing and is never held.
	repeatKey func(q request) string

	send    func(ctx context.Context, c *api.Client, q request) (map[string]string, error)
	results []string // result columns, in order
	// reconcile reads the service to settle an action whose outcome is unknown (see verdict).
	reconcile func(rc *reconciler, ctx context.Context, a *Action) (verdict, map[string]string, error)
	// conflictMeansExists: a 409 answer to a send is about this very write (something like it is
	// there): it is reconciled, never sent again.
	conflictMeansExists bool
	// journalsBalance: a success carries the customer's new balance, journaled for the credit report.
	journalsBalance bool
}

func spec(k Kind) (*kindSpec, error) {
	for _, s := range specs {
		if s.kind == k {
			return s, nil
		}
	}
	names := make([]string, len(specs))
	for i, s := range specs {
		names[i] = string(s.kind)
	}
	return nil, fmt.Errorf("unknown job kind %q: want one of %s", k, strings.Join(names, ", "))
}

var specs = []*kindSpec{emailFix, creditTopup, invoiceCreate, paymentEdit, license(LicenseActivate),
	license(LicenseDeactivate), checkoutLink, couponCheck}

var emailFix = &kindSpec{
	kind: EmailFix,
	columns: []column{
		{"fromEmail", true, "the customer's current e-mail, exactly as the service has it (may be malformed)"},
		{"toEmail", true, "the new e-mail; a blank leaves the customer alone (the plan lists those lines)"},
	},
	parse: func(r *rowReader, o *PlanOptions) request {
		// A blank toEmail leaves the customer alone: the data-quality sheet lists every suspect address and
		// the person fills only the ones to change. The plan lists the rows left out.
		to := r.get("toEmail")
		if to == "" {
			return nil
		}
		from := r.get("fromEmail")
		if from == "" {
			r.fail("fromEmail", "fromEmail is empty: the service finds the customer by e-mail, so a customer without one "+
				"cannot be changed by a job; set it in the dashboard")
			return nil
		}
		if err := checkEmail(to); err != nil {
			r.fail("toEmail", "%q is not an e-mail address: %v", to, err)
		} else if strings.EqualFold(from, to) {
			r.fail("toEmail", "toEmail is the same as fromEmail")
		}
		return request{"fromEmail": from, "toEmail": to}
	},
	keys: func(q request, k *keys) { k.emails = append(k.emails, q["fromEmail"], q["toEmail"]) },
	check: func(q request, w *world, r *rowReader) (string, string, map[string]string) {
		cs := w.customersByEmail[strings.ToLower(q["fromEmail"])]
		if len(cs) == 0 {
			r.fail("fromEmail", "no customer has the e-mail %q in the warehouse (synced %s)", q["fromEmail"], stamp(w.syncedAt))
		}
		if taken := w.customersByEmail[strings.ToLower(q["toEmail"])]; len(taken) > 0 {
			r.fail("toEmail", "%q is already used by customer %s (%s)", q["toEmail"], taken[0].id, taken[0].name)
		}
		if len(cs) == 0 {
			return "", "", nil
		}
		ids := make([]string, len(cs))
		for i, c := range cs {
			ids[i] = c.id
		}
		target := fmt.Sprintf("customer %s (%s)", cs[0].id, cs[0].name)
		if len(cs) > 1 {
			target = fmt.Sprintf("one of %d customers sharing the e-mail: %s", len(cs), strings.Join(ids, ", "))
		}
		return target, fmt.Sprintf("e-mail %s → %s", q["fromEmail"], q["toEmail"]),
			map[string]string{"customerId": strings.Join(ids, " "), "name": cs[0].name, "email": cs[0].email}
	},
	dupKeys: func(q request) []dupKey {
		return []dupKey{{"fromEmail", "fromEmail " + strings.ToLower(q["fromEmail"])},
			{"toEmail", "toEmail " + strings.ToLower(q["toEmail"])}}
	},
	repeatKey: func(q request) string {
		return strings.ToLower(q["fromEmail"]) + " → " + strings.ToLower(q["toEmail"])
	},
	send: func(ctx context.Context, c *api.Client, q request) (map[string]string, error) {
		ack, err := c.UpdateCustomerEmail(ctx, q["fromEmail"], q["toEmail"])
		if err != nil {
			return nil, err
		}
		return map[string]string{"message": ack.Message}, nil
	},
	results:   []string{"message"},
	reconcile: (*reconciler).email,
}

var creditTopup = &kindSpec{
	kind: CreditTopup,
	columns: []column{
		{"customerId", false, "the customer's id (or give customerEmail instead)"},
		{"customerEmail", false, "the customer's e-mail, when the file has no customerId; must match one customer"},
		{"productId", true, "a credit-usage product (subType credit_usage)"},
		{"amount", true, "credit to add: a whole number above zero"},
	},
	oneOf: [][]string{{"customerId", "customerEmail"}},
	parse: func(r *rowReader, _ *PlanOptions) request {
		q := request{"productId": r.text("productId"), "amount": r.posInt("amount")}
		if id := r.get("customerId"); id != "" || !r.has("customerEmail") {
			q["customerId"] = r.text("customerId")
		} else {
			q["customerEmail"] = r.email("customerEmail")
		}
		return q
	},
	keys: func(q request, k *keys) {
		if q["customerId"] != "" {
			k.customerIDs = append(k.customerIDs, q["customerId"])
		}
		if q["customerEmail"] != "" {
			k.emails = append(k.emails, q["customerEmail"])
		}
		k.productIDs = append(k.productIDs, q["productId"])
		k.balances = true
	},
	check: func(q request, w *world, r *rowReader) (string, string, map[string]string) {
		c, ok := resolveCustomer(q, w, r)
		p, pok := w.products[q["productId"]]
		switch {
		case !pok:
			r.fail("productId", "no product %q in the warehouse (synced %s)", q["productId"], stamp(w.syncedAt))
		case !p.creditUsage():
			r.fail("productId", "product %s (%s) is %s/%s, not a credit-usage product", p.id, p.name, p.typ, orNull(p.subType))
		case p.status == "deleted":
			r.fail("productId", "product %s (%s) is deleted", p.id, p.name)
		}
		if !ok || !pok {
			return "", "", nil
		}
		bal := cleanNumber(w.balances[[2]string{c.id, p.id}])
		amount, _ := strconv.ParseInt(q["amount"], 10, 64)
		after := "?"
		if b, err := strconv.ParseFloat(bal, 64); err == nil {
			after = strconv.FormatFloat(b+float64(amount), 'f', -1, 64)
		}
		return fmt.Sprintf("customer %s (%s) · %s", c.id, c.name, p.name),
			fmt.Sprintf("balance %s → %s (+%s)", r.lang.number(bal), r.lang.number(after), r.lang.number(q["amount"])),
			map[string]string{"balance": bal, "customerName": c.name, "customerEmail": c.email, "productName": p.name}
	},
	dupKeys: func(q request) []dupKey {
		return []dupKey{{"productId", "a top-up of customer " + q["customerId"] + " for product " + q["productId"]}}
	},
	repeatKey: func(q request) string {
		return fmt.Sprintf("customer %s product %s amount %s", q["customerId"], q["productId"], q["amount"])
	},
	send: func(ctx context.Context, c *api.Client, q request) (map[string]string, error) {
		amount, _ := strconv.ParseInt(q["amount"], 10, 64)
		out, err := c.AddCredit(ctx, api.AddCreditRequest{CustomerID: q["customerId"], ProductID: q["productId"], Amount: amount})
		if err != nil {
			return nil, err
		}
		res := map[string]string{"message": out.Message}
		if out.CustomerBalance.Valid {
			res["balance"] = strconv.FormatInt(out.CustomerBalance.Value, 10)
		}
		return res, nil
	},
	results:         []string{"balance", "message"},
	reconcile:       (*reconciler).topup,
	journalsBalance: true,
}

// resolveCustomer completes q's customerId from customerEmail when needed.
func resolveCustomer(q request, w *world, r *rowReader) (customer, bool) {
	if email := q["customerEmail"]; email != "" {
		cs := w.customersByEmail[strings.ToLower(email)]
		switch len(cs) {
		case 0:
			r.fail("customerEmail", "no customer has the e-mail %q in the warehouse (synced %s)", email, stamp(w.syncedAt))
			return customer{}, false
		case 1:
			delete(q, "customerEmail")
			q["customerId"] = cs[0].id
			return cs[0], true
		default:
			r.fail("customerEmail", "%d customers share the e-mail %q: give customerId instead", len(cs), email)
			return customer{}, false
		}
	}
	c, ok := w.customersByID[q["customerId"]]
	if !ok {
		r.fail("customerId", "no customer %q in the warehouse (synced %s)", q["customerId"], stamp(w.syncedAt))
	}
	return c, ok
}

var invoiceCreate = &kindSpec{
	kind: InvoiceCreate,
	columns: []column{
		{"name", true, "customer's full name"},
		{"email", true, "customer's e-mail; the service finds or registers the customer by it"},
		{"mobile", true, "customer's phone"},
		{"redirectUrl", true, "where the customer goes after paying"},
		{"description", true, "notes on the invoice"},
		{"expiredAt", true, "when the invoice expires, in the future; a bare date means the end of that day"},
		{"rate", true, "price per item, above zero"},
		{"quantity", false, "number of items, above zero; default 1"},
		{"itemDescription", false, "the invoice line's text; default: description"},
		{"noCustomer", false, "your customer number, echoed back by the service"},
		{"idProd", false, "a product id, echoed back by the service; must exist"},
	},
	parse: func(r *rowReader, _ *PlanOptions) request {
		q := request{"name": r.text("name"), "email": r.email("email"), "mobile": r.text("mobile"),
			"redirectUrl": r.text("redirectUrl"), "description": r.text("description"), "expiredAt": r.future("expiredAt"),
			"rate": r.posInt("rate"), "quantity": "1", "itemDescription": r.get("itemDescription"),
			"noCustomer": r.get("noCustomer"), "idProd": r.get("idProd")}
		if r.get("quantity") != "" {
			q["quantity"] = r.posInt("quantity")
		}
		if q["itemDescription"] == "" {
			q["itemDescription"] = q["description"]
		}
		return q
	},
	keys: func(q request, k *keys) {
		k.emails = append(k.emails, q["email"])
		if q["idProd"] != "" {
			k.productIDs = append(k.productIDs, q["idProd"])
		}
	},
	check: func(q request, w *world, r *rowReader) (string, string, map[string]string) {
		if id := q["idProd"]; id != "" {
			if _, ok := w.products[id]; !ok {
				r.fail("idProd", "no product %q in the warehouse (synced %s)", id, stamp(w.syncedAt))
			}
		}
		cur := map[string]string{"customerId": "", "customerName": ""}
		if cs := w.customersByEmail[strings.ToLower(q["email"])]; len(cs) > 0 {
			cur["customerId"], cur["customerName"] = cs[0].id, cs[0].name
		}
		return fmt.Sprintf("%s <%s>", q["name"], q["email"]),
			fmt.Sprintf("new invoice %s × %s = %s, expires %s", r.lang.number(q["quantity"]), r.lang.number(q["rate"]),
				r.lang.group(invoiceAmount(q)), r.localTime(q["expiredAt"])), cur
	},
	dupKeys: func(q request) []dupKey {
		return []dupKey{{"email", fmt.Sprintf("an invoice to %s for %d %q expiring %s", strings.ToLower(q["email"]),
			invoiceAmount(q), q["description"], q["expiredAt"])}}
	},
	// The same customer, name, text and amount is the same invoice whatever its expiry, phone or redirect:
	// a second one is what a person re-planning a sheet sends by mistake.
	repeatKey: func(q request) string {
		return fmt.Sprintf("%s|%s|%s|%s|%d", strings.ToLower(q["email"]), q["name"], q["description"],
			q["itemDescription"], invoiceAmount(q))
	},
	send: func(ctx context.Context, c *api.Client, q request) (map[string]string, error) {
		exp, _ := time.Parse(time.RFC3339, q["expiredAt"])
		qty, _ := strconv.ParseFloat(q["quantity"], 64)
		rate, _ := strconv.ParseFloat(q["rate"], 64)
		out, err := c.CreateInvoice(ctx, api.CreateInvoiceRequest{Name: q["name"], Email: q["email"], Mobile: q["mobile"],
			RedirectURL: q["redirectUrl"], Description: q["description"], ExpiredAt: exp,
			Items:     []api.InvoiceItem{{Quantity: qty, Rate: rate, Description: q["itemDescription"]}},
			ExtraData: api.InvoiceExtraData{NoCustomer: q["noCustomer"], IDProd: q["idProd"]}})
		if err != nil {
			return nil, err
		}
		return map[string]string{"invoiceId": out.ID, "transactionId": out.TransactionID, "link": out.Link,
			"claimed": out.ID}, nil
	},
	results:   []string{"invoiceId", "transactionId", "link"},
	reconcile: (*reconciler).invoice,
	// The service answers 409 "already exist" to an invoice it holds.
	conflictMeansExists: true,
}

// invoiceAmount is the total the service computes: quantity × rate, rounded.
func invoiceAmount(q request) int64 {
	qty, _ := strconv.ParseFloat(q["quantity"], 64)
	rate, _ := strconv.ParseFloat(q["rate"], 64)
	return int64(math.Round(qty * rate))
}

var paymentEdit = &kindSpec{
	kind: PaymentEdit,
	columns: []column{
		{"id", true, "the single payment request to edit"},
		{"name", true, "customer name"},
		{"email", true, "customer e-mail (proof of payment and reminders go there)"},
		{"mobile", true, "customer phone"},
		{"amount", true, "a whole number above zero"},
		{"redirectUrl", true, "where the customer goes after paying"},
		{"description", true, "description"},
		{"expiredAt", true, "new expiry, in the future; a bare date means the end of that day"},
	},
	parse: func(r *rowReader, _ *PlanOptions) request {
		return request{"id": r.text("id"), "name": r.text("name"), "email": r.email("email"), "mobile": r.text("mobile"),
			"amount": r.posInt("amount"), "redirectUrl": r.text("redirectUrl"), "description": r.text("description"),
			"expiredAt": r.future("expiredAt")}
	},
	keys: func(q request, k *keys) { k.payReqIDs = append(k.payReqIDs, q["id"]) },
	check: func(q request, w *world, r *rowReader) (string, string, map[string]string) {
		p, ok := w.payReqs[q["id"]]
		if !ok {
			r.fail("id", "no payment request %q in the warehouse (synced %s)", q["id"], stamp(w.syncedAt))
			return "", "", nil
		}
		if p.status == "paid" {
			r.fail("id", "payment request %s (%s) is already paid", p.id, p.name)
		}
		var changes []string
		for _, f := range [][3]string{{"name", p.name, q["name"]}, {"amount", p.amount, q["amount"]},
			{"description", p.description, q["description"]}, {"redirectUrl", p.redirect, q["redirectUrl"]}} {
			if f[1] != f[2] {
				changes = append(changes, fmt.Sprintf("%s %q → %q", f[0], f[1], f[2]))
			}
		}
		changes = append(changes, "expires "+r.localTime(q["expiredAt"]))
		return fmt.Sprintf("payment request %s (%s, %s)", p.id, p.name, p.status), strings.Join(changes, "; "),
			map[string]string{"name": p.name, "amount": p.amount, "description": p.description, "status": p.status,
				"redirectUrl": p.redirect}
	},
	dupKeys: func(q request) []dupKey { return []dupKey{{"id", "an edit of payment request " + q["id"]}} },
	repeatKey: func(q request) string { // the request is its id and every value it sets
		b, _ := json.Marshal(q)
		return string(b)
	},
	send: func(ctx context.Context, c *api.Client, q request) (map[string]string, error) {
		exp, _ := time.Parse(time.RFC3339, q["expiredAt"])
		amount, _ := strconv.ParseInt(q["amount"], 10, 64)
		out, err := c.EditPayment(ctx, api.EditPaymentRequest{ID: q["id"], Name: q["name"], Email: q["email"],
			Mobile: q["mobile"], Amount: amount, RedirectURL: q["redirectUrl"], Description: q["description"], ExpiredAt: exp})
		if err != nil {
			return nil, err
		}
		return map[string]string{"link": out.Link}, nil
	},
	results:   []string{"link"},
	reconcile: (*reconciler).payment,
}

func license(k Kind) *kindSpec {
	status, call := "ACTIVE", (*api.Client).ActivateLicense
	if k == LicenseDeactivate {
		status, call = "INACTIVE", (*api.Client).DeactivateLicense
	}
	return &kindSpec{
		kind: k,
		columns: []column{
			{"licenseCode", true, "the license code"},
			{"productId", true, "the license's product, of type saas"},
		},
		parse: func(r *rowReader, _ *PlanOptions) request {
			return request{"licenseCode": r.text("licenseCode"), "productId": r.text("productId")}
		},
		keys: func(q request, k *keys) { k.productIDs = append(k.productIDs, q["productId"]) },
		check: func(q request, w *world, r *rowReader) (string, string, map[string]string) {
			p, ok := w.products[q["productId"]]
			if !ok {
				r.fail("productId", "no product %q in the warehouse (synced %s)", q["productId"], stamp(w.syncedAt))
				return "", "", nil
			}
			if p.typ != "saas" {
				r.fail("productId", "product %s (%s) is of type %s: licenses belong to saas products", p.id, p.name, p.typ)
			}
			return fmt.Sprintf("license %s of %s", q["licenseCode"], p.name), "status → " + status,
				map[string]string{"productName": p.name}
		},
		dupKeys: func(q request) []dupKey {
			return []dupKey{{"licenseCode", "license " + q["licenseCode"] + " of product " + q["productId"]}}
		},
		// The kind (activate or deactivate) is compared too: only plans of the same kind are.
		repeatKey: func(q request) string { return q["licenseCode"] + "|" + q["productId"] },
		send: func(ctx context.Context, c *api.Client, q request) (map[string]string, error) {
			ack, err := call(c, ctx, q["licenseCode"], q["productId"])
			if err != nil {
				return nil, err
			}
			return map[string]string{"message": ack.Message}, nil
		},
		results:   []string{"message"},
		reconcile: resendSafe("no read endpoint for licenses; sending again is safe: it sets an absolute status"),
	}
}

var checkoutLink = &kindSpec{
	kind: CheckoutLink,
	columns: []column{
		{"productId", true, "the product to check out"},
		{"name", true, "customer name"},
		{"email", true, "customer e-mail"},
		{"mobile", true, "customer phone"},
		{"creditAmount", false, "credit to buy, above zero; only for credit-usage products"},
	},
	parse: func(r *rowReader, _ *PlanOptions) request {
		q := request{"productId": r.text("productId"), "name": r.text("name"), "email": r.email("email"),
			"mobile": r.text("mobile"), "creditAmount": ""}
		if r.get("creditAmount") != "" {
			q["creditAmount"] = r.posInt("creditAmount")
		}
		return q
	},
	keys: func(q request, k *keys) { k.productIDs = append(k.productIDs, q["productId"]) },
	check: func(q request, w *world, r *rowReader) (string, string, map[string]string) {
		p, ok := w.products[q["productId"]]
		if !ok {
			r.fail("productId", "no product %q in the warehouse (synced %s)", q["productId"], stamp(w.syncedAt))
			return "", "", nil
		}
		if q["creditAmount"] != "" && !p.creditUsage() {
			r.fail("creditAmount", "product %s (%s) is not a credit-usage product: leave creditAmount empty", p.id, p.name)
		}
		change := "new checkout link"
		if q["creditAmount"] != "" {
			change += " for " + r.lang.number(q["creditAmount"]) + " credit"
		}
		return fmt.Sprintf("%s <%s> · %s", q["name"], q["email"], p.name), change,
			map[string]string{"productName": p.name, "productStatus": p.status}
	},
	dupKeys: func(q request) []dupKey {
		return []dupKey{{"email", fmt.Sprintf("a checkout of %s for %s (credit %q)", q["productId"],
			strings.ToLower(q["email"]), q["creditAmount"])}}
	},
	repeatKey: func(q request) string {
		return fmt.Sprintf("%s|%s|%s", q["productId"], strings.ToLower(q["email"]), q["creditAmount"])
	},
	send: func(ctx context.Context, c *api.Client, q request) (map[string]string, error) {
		credit, _ := strconv.ParseFloat(q["creditAmount"], 64)
		out, err := c.GenerateCheckout(ctx, api.CheckoutRequest{ProductID: q["productId"], CreditAmount: credit,
			Customer: api.CustomerInfo{Name: q["name"], Email: q["email"], Mobile: q["mobile"]}})
		if err != nil {
			return nil, err
		}
		return map[string]string{"checkoutUrl": out.CheckoutURL, "paymentLinkUrl": out.PaymentLinkURL}, nil
	},
	results:   []string{"checkoutUrl", "paymentLinkUrl"},
	reconcile: resendSafe("a checkout link changes nothing until paid; sending again mints a fresh link"),
}

var couponCheck = &kindSpec{
	kind:     CouponCheck,
	readOnly: true,
	columns: []column{
		{"paymentLinkId", true, "a product, payment request or invoice id"},
		{"couponCode", true, "the coupon code"},
		{"finalAmount", true, "the amount to check the coupon against, above zero"},
		{"customerEmail", false, "for coupons limited to new or existing customers"},
	},
	parse: func(r *rowReader, _ *PlanOptions) request {
		q := request{"paymentLinkId": r.text("paymentLinkId"), "couponCode": r.text("couponCode"),
			"finalAmount": r.posInt("finalAmount"), "customerEmail": ""}
		if r.get("customerEmail") != "" {
			q["customerEmail"] = r.email("customerEmail")
		}
		return q
	},
	keys: func(q request, k *keys) { k.linkIDs = append(k.linkIDs, q["paymentLinkId"]) },
	check: func(q request, w *world, r *rowReader) (string, string, map[string]string) {
		l, ok := w.links[q["paymentLinkId"]]
		if !ok {
			r.fail("paymentLinkId", "no product, payment request or invoice %q in the warehouse (synced %s)",
				q["paymentLinkId"], stamp(w.syncedAt))
			return "", "", nil
		}
		return fmt.Sprintf("%s %s (%s)", l.what, l.id, l.name),
			fmt.Sprintf("check coupon %s at %s", q["couponCode"], r.lang.number(q["finalAmount"])),
			map[string]string{"linkType": l.what, "linkName": l.name, "linkAmount": l.amount}
	},
	dupKeys: func(q request) []dupKey {
		return []dupKey{{"couponCode", fmt.Sprintf("coupon %s on %s at %s for %q", strings.ToUpper(q["couponCode"]),
			q["paymentLinkId"], q["finalAmount"], strings.ToLower(q["customerEmail"]))}}
	},
	send: func(ctx context.Context, c *api.Client, q request) (map[string]string, error) {
		amount, _ := strconv.ParseInt(q["finalAmount"], 10, 64)
		out, err := c.ValidateCoupon(ctx, api.ValidateCouponRequest{PaymentLinkID: q["paymentLinkId"],
			CouponCode: q["couponCode"], FinalAmount: amount, CustomerEmail: q["customerEmail"]})
		if err != nil {
			return nil, err
		}
		res := map[string]string{"valid": strconv.FormatBool(out.Valid), "message": out.Message}
		if cp := out.Coupon; cp != nil {
			res["discountType"] = cp.DiscountType
			res["eligibleCustomerType"] = cp.EligibleCustomerType
			if cp.DiscountValue.Valid {
				res["discountValue"] = strconv.FormatFloat(cp.DiscountValue.Value, 'f', -1, 64)
			}
			if cp.MinimumPurchase.Valid {
				res["minimumPurchase"] = strconv.FormatFloat(cp.MinimumPurchase.Value, 'f', -1, 64)
			}
		}
		return res, nil
	},
	results:   []string{"valid", "message", "discountType", "discountValue", "minimumPurchase", "eligibleCustomerType"},
	reconcile: resendSafe("coupon validation changes nothing; asking again is safe"),
}

func stamp(t time.Time) string {
	if t.IsZero() {
		return "never"
	}
	return t.Format("2006-01-02 15:04 MST") // in the zone it carries: the configured one (buildPlan)
}

func orNull(s string) string {
	if s == "" {
		return "null"
	}
	return s
}

// cleanNumber turns a DECIMAL's text ("1500.0000") into "1500"; "" becomes "0".
func cleanNumber(s string) string {
	if s == "" {
		return "0"
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return s
	}
	return strconv.FormatFloat(f, 'f', -1, 64)
}

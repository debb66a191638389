package jobs

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/billsync/billsync/internal/api"
)

// CheckoutLink mints immutable checkout links: POST /credit/v1/credit/generate/immutable/checkout.
const CheckoutLink Kind = "checkout-link"

// checkoutLink mints a checkout link per row; the links are the result file's output.
type checkoutLink struct{}

func (checkoutLink) name() Kind { return CheckoutLink }

func (checkoutLink) traits() traits {
	return traits{
		columns: []column{
			{"productId", true, "the product to check out"},
			{"name", true, "customer name"},
			{"email", true, "customer e-mail"},
			{"mobile", true, "customer phone"},
			{"creditAmount", false, "credit to buy, above zero; only for credit-usage products"},
		},
		results: []string{"checkoutUrl", "paymentLinkUrl"},
		units:   map[string]unit{"creditAmount": unitCredit},
		measure: measure{group: "productName", unit: unitCredit, value: field("creditAmount")},
	}
}

func (checkoutLink) parse(r *rowReader, _ *PlanOptions) request {
	q := request{"productId": r.text("productId"), "name": r.text("name"), "email": r.email("email"),
		"mobile": r.text("mobile"), "creditAmount": ""}
	if r.get("creditAmount") != "" {
		q["creditAmount"] = r.posInt("creditAmount")
	}
	return q
}

func (checkoutLink) keys(q request, k *keys) { k.productIDs = append(k.productIDs, q["productId"]) }

func (checkoutLink) check(q request, w *world, r *rowReader) (string, string, map[string]string) {
	p, ok := w.products[q["productId"]]
	if !ok {
		r.fail("productId", "no product %q in the warehouse (synced %s)", q["productId"], stamp(w.syncedAt))
		return "", "", nil
	}
	if q["creditAmount"] != "" && !p.creditUsage() {
		r.fail("creditAmount", "product %s (%s) is not a credit-usage product: leave creditAmount empty", p.id, p.name)
	}
	change := r.lang.f("change.checkout")
	if q["creditAmount"] != "" {
		change = r.lang.f("change.checkout_for", r.lang.number(q["creditAmount"]))
	}
	return fmt.Sprintf("%s <%s> · %s", q["name"], q["email"], p.name), change,
		map[string]string{"productName": p.name, "productStatus": p.status}
}

func (checkoutLink) dupKeys(q request) []dupKey {
	return []dupKey{{"email", fmt.Sprintf("a checkout of %s for %s (credit %q)", q["productId"],
		strings.ToLower(q["email"]), q["creditAmount"])}}
}

func (checkoutLink) repeatKey(q request) string {
	return fmt.Sprintf("%s|%s|%s", q["productId"], strings.ToLower(q["email"]), q["creditAmount"])
}

func (checkoutLink) send(ctx context.Context, c *api.Client, q request) (map[string]string, error) {
	credit, _ := strconv.ParseFloat(q["creditAmount"], 64)
	out, err := c.GenerateCheckout(ctx, api.CheckoutRequest{ProductID: q["productId"], CreditAmount: credit,
		Customer: api.CustomerInfo{Name: q["name"], Email: q["email"], Mobile: q["mobile"]}})
	if err != nil {
		return nil, err
	}
	return map[string]string{"checkoutUrl": out.CheckoutURL, "paymentLinkUrl": out.PaymentLinkURL}, nil
}

func (checkoutLink) reconcile(*reconciler, context.Context, *Action) (verdict, map[string]string, error) {
	return resendSafe("a checkout link changes nothing until paid; sending again mints a fresh link")
}

// traces: none. A generated link is no record of any list the spec gives until it is paid (then a
// transaction of the product, which may be anyone's); only billsync's journal shows an earlier link.
func (checkoutLink) traces() traceRule {
	return traceRule{none: "a checkout link is in no list of the service until it is paid"}
}

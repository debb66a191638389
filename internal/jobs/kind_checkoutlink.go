package jobs

import (
	"context"
	"fmt"
	"strings"

	"github.com/billsync/billsync/internal/api"
)

// CheckoutLink mints immutable checkout links: POST /credit/v1/credit/generate/immutable/checkout.
const CheckoutLink Kind = "checkout-link"

// checkoutLink mints a checkout link per row; the links are the result file's output.
type checkoutLink struct{}

// checkoutArgs is a row of a checkout-link file.
type checkoutArgs struct {
	ProductID    string `json:"productId"`
	Name         string `json:"name"`
	Email        string `json:"email"`
	Mobile       string `json:"mobile"`
	CreditAmount whole  `json:"creditAmount"` // 0: none (products that are not credit-usage)
}

// spec: no trace. A generated link is no record of any list the spec gives until it is paid (then a
// transaction of the product, which may be anyone's); only billsync's journal shows an earlier link.
func (checkoutLink) spec() spec[checkoutArgs] {
	return spec[checkoutArgs]{name: CheckoutLink, traits: traits{
		columns: []column{
			{"productId", true, "the product to check out"},
			{"name", true, "customer name"},
			{"email", true, "customer e-mail"},
			{"mobile", true, "customer phone"},
			{"creditAmount", false, "credit to buy, above zero; only for credit-usage products"},
		},
		results: []string{"checkoutUrl", "paymentLinkUrl"},
		units:   map[string]unit{"creditAmount": unitCredit},
		group:   "productName",
		unit:    unitCredit,
	},
		amount:    func(a checkoutArgs) float64 { return float64(a.CreditAmount) },
		reconcile: resendSafe[checkoutArgs]("a checkout link changes nothing until paid; sending again mints a fresh link"),
		traces:    traceOf[checkoutArgs]{none: "a checkout link is in no list of the service until it is paid"},
	}
}

func (checkoutLink) parse(r *rowReader) (checkoutArgs, bool) {
	a := checkoutArgs{ProductID: r.text("productId"), Name: r.text("name"), Email: r.email("email"), Mobile: r.text("mobile")}
	if r.get("creditAmount") != "" {
		a.CreditAmount = r.whole("creditAmount")
	}
	return a, true
}

func (a checkoutArgs) refs(k *keys) { k.productIDs = append(k.productIDs, a.ProductID) }

func (checkoutLink) check(a checkoutArgs, w *world, r *rowReader) (checkoutArgs, described) {
	p, ok := w.products[a.ProductID]
	if !ok {
		r.fail("productId", "no product %q in the warehouse (synced %s)", a.ProductID, stamp(w.syncedAt))
		return a, described{}
	}
	if a.CreditAmount != 0 && !p.creditUsage() {
		r.fail("creditAmount", "product %s (%s) is not a credit-usage product: leave creditAmount empty", p.id, p.name)
	}
	change := r.lang.f("change.checkout")
	if a.CreditAmount != 0 {
		change = r.lang.f("change.checkout_for", r.lang.number(a.CreditAmount.String()))
	}
	return a, described{fmt.Sprintf("%s <%s> · %s", a.Name, a.Email, p.name), change,
		map[string]string{"productName": p.name, "productStatus": p.status}}
}

func (a checkoutArgs) unique() []dupKey {
	return []dupKey{{"email", fmt.Sprintf("a checkout of %s for %s (credit %q)", a.ProductID,
		strings.ToLower(a.Email), a.CreditAmount.String())}}
}

func (a checkoutArgs) repeatKey() string {
	return fmt.Sprintf("%s|%s|%s", a.ProductID, strings.ToLower(a.Email), a.CreditAmount.String())
}

func (checkoutLink) send(ctx context.Context, c *api.Client, a checkoutArgs) (map[string]string, error) {
	out, err := c.GenerateCheckout(ctx, api.CheckoutRequest{ProductID: a.ProductID, CreditAmount: float64(a.CreditAmount),
		Customer: api.CustomerInfo{Name: a.Name, Email: a.Email, Mobile: a.Mobile}})
	if err != nil {
		return nil, err
	}
	return map[string]string{"checkoutUrl": out.CheckoutURL, "paymentLinkUrl": out.PaymentLinkURL}, nil
}

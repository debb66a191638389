package jobs

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/billsync/billsync/internal/api"
)

// CouponCheck validates coupons: POST /hl/v1/coupon/validate. It changes nothing.
const CouponCheck Kind = "coupon-check"

// couponCheck asks the service whether a coupon applies to a payment link at an amount; the result file
// says valid or not, and why.
type couponCheck struct{}

// couponArgs is a row of a coupon-check file.
type couponArgs struct {
	LinkID        string `json:"paymentLinkId"`
	Code          string `json:"couponCode"`
	FinalAmount   whole  `json:"finalAmount"`
	CustomerEmail string `json:"customerEmail"`
}

// spec: a check changes nothing, so nothing shows it, it is never held, and asking again is safe.
func (couponCheck) spec() spec[couponArgs] {
	return spec[couponArgs]{name: CouponCheck, traits: traits{
		columns: []column{
			{"paymentLinkId", true, "a product, payment request or invoice id"},
			{"couponCode", true, "the coupon code"},
			{"finalAmount", true, "the amount to check the coupon against, above zero"},
			{"customerEmail", false, "for coupons limited to new or existing customers"},
		},
		results:  []string{"valid", "message", "discountType", "discountValue", "minimumPurchase", "eligibleCustomerType"},
		units:    map[string]unit{"finalAmount": unitRupiah, "linkAmount": unitRupiah, "minimumPurchase": unitRupiah},
		group:    "linkName",
		readOnly: true,
	},
		reconcile: resendSafe[couponArgs]("coupon validation changes nothing; asking again is safe"),
		traces:    traceOf[couponArgs]{none: "a coupon check changes nothing"},
	}
}

func (couponCheck) parse(r *rowReader) (couponArgs, bool) {
	a := couponArgs{LinkID: r.text("paymentLinkId"), Code: r.text("couponCode"), FinalAmount: r.whole("finalAmount")}
	if r.get("customerEmail") != "" {
		a.CustomerEmail = r.email("customerEmail")
	}
	return a, true
}

func (a couponArgs) refs(k *keys) { k.linkIDs = append(k.linkIDs, a.LinkID) }

func (couponCheck) check(a couponArgs, w *world, r *rowReader) (couponArgs, described) {
	l, ok := w.links[a.LinkID]
	if !ok {
		r.fail("paymentLinkId", "no product, payment request or invoice %q in the warehouse (synced %s)",
			a.LinkID, stamp(w.syncedAt))
		return a, described{}
	}
	return a, described{fmt.Sprintf("%s %s (%s)", r.lang.f("what."+l.what), l.id, l.name),
		r.lang.f("change.coupon", a.Code, r.lang.number(a.FinalAmount.String())),
		map[string]string{"linkType": l.what, "linkName": l.name, "linkAmount": l.amount}}
}

func (a couponArgs) unique() []dupKey {
	return []dupKey{{"couponCode", fmt.Sprintf("coupon %s on %s at %s for %q", strings.ToUpper(a.Code),
		a.LinkID, a.FinalAmount.String(), strings.ToLower(a.CustomerEmail))}}
}

// repeatKey: a check changes nothing, so it never repeats anything (readOnly).
func (couponArgs) repeatKey() string { return "" }

func (couponCheck) send(ctx context.Context, c *api.Client, a couponArgs) (map[string]string, error) {
	out, err := c.ValidateCoupon(ctx, api.ValidateCouponRequest{PaymentLinkID: a.LinkID,
		CouponCode: a.Code, FinalAmount: int64(a.FinalAmount), CustomerEmail: a.CustomerEmail})
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
}

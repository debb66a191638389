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

func (couponCheck) name() Kind { return CouponCheck }

func (couponCheck) traits() traits {
	return traits{
		columns: []column{
			{"paymentLinkId", true, "a product, payment request or invoice id"},
			{"couponCode", true, "the coupon code"},
			{"finalAmount", true, "the amount to check the coupon against, above zero"},
			{"customerEmail", false, "for coupons limited to new or existing customers"},
		},
		results:  []string{"valid", "message", "discountType", "discountValue", "minimumPurchase", "eligibleCustomerType"},
		units:    map[string]unit{"finalAmount": unitRupiah, "linkAmount": unitRupiah, "minimumPurchase": unitRupiah},
		measure:  measure{group: "linkName"},
		readOnly: true,
	}
}

func (couponCheck) parse(r *rowReader, _ *PlanOptions) request {
	q := request{"paymentLinkId": r.text("paymentLinkId"), "couponCode": r.text("couponCode"),
		"finalAmount": r.posInt("finalAmount"), "customerEmail": ""}
	if r.get("customerEmail") != "" {
		q["customerEmail"] = r.email("customerEmail")
	}
	return q
}

func (couponCheck) keys(q request, k *keys) { k.linkIDs = append(k.linkIDs, q["paymentLinkId"]) }

func (couponCheck) check(q request, w *world, r *rowReader) (string, string, map[string]string) {
	l, ok := w.links[q["paymentLinkId"]]
	if !ok {
		r.fail("paymentLinkId", "no product, payment request or invoice %q in the warehouse (synced %s)",
			q["paymentLinkId"], stamp(w.syncedAt))
		return "", "", nil
	}
	return fmt.Sprintf("%s %s (%s)", r.lang.f("what."+l.what), l.id, l.name),
		r.lang.f("change.coupon", q["couponCode"], r.lang.number(q["finalAmount"])),
		map[string]string{"linkType": l.what, "linkName": l.name, "linkAmount": l.amount}
}

func (couponCheck) dupKeys(q request) []dupKey {
	return []dupKey{{"couponCode", fmt.Sprintf("coupon %s on %s at %s for %q", strings.ToUpper(q["couponCode"]),
		q["paymentLinkId"], q["finalAmount"], strings.ToLower(q["customerEmail"]))}}
}

func (couponCheck) send(ctx context.Context, c *api.Client, q request) (map[string]string, error) {
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
}

// repeatKey: a check changes nothing, so it never repeats anything (readOnly).
func (couponCheck) repeatKey(request) string { return "" }

func (couponCheck) reconcile(*reconciler, context.Context, *Action) (verdict, map[string]string, error) {
	return resendSafe("coupon validation changes nothing; asking again is safe")
}

// traces: none; a check changes nothing, so nothing shows it and it is never held.
func (couponCheck) traces() traceRule { return traceRule{none: "a coupon check changes nothing"} }

package jobs

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/billsync/billsync/internal/api"
)

// PaymentEdit edits single payment requests: POST /hl/v1/payment/edit.
const PaymentEdit Kind = "payment-edit"

// paymentEdit sets every field of an unpaid payment request. The edit sets absolute values, so sending it
// again is harmless.
type paymentEdit struct{}

func (paymentEdit) name() Kind { return PaymentEdit }

func (paymentEdit) traits() traits {
	return traits{
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
		results: []string{"link"},
		units:   map[string]unit{"amount": unitRupiah},
		measure: measure{unit: unitRupiah, value: field("amount")},
	}
}

func (paymentEdit) parse(r *rowReader, _ *PlanOptions) request {
	return request{"id": r.text("id"), "name": r.text("name"), "email": r.email("email"), "mobile": r.text("mobile"),
		"amount": r.posInt("amount"), "redirectUrl": r.text("redirectUrl"), "description": r.text("description"),
		"expiredAt": r.future("expiredAt")}
}

func (paymentEdit) keys(q request, k *keys) { k.payReqIDs = append(k.payReqIDs, q["id"]) }

func (paymentEdit) check(q request, w *world, r *rowReader) (string, string, map[string]string) {
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
			changes = append(changes, r.lang.f("change.field", f[0], f[1], f[2]))
		}
	}
	changes = append(changes, r.lang.f("change.expires", r.localTime(q["expiredAt"])))
	return r.lang.f("target.payment_request", p.id, p.name, p.status), strings.Join(changes, "; "),
		map[string]string{"name": p.name, "amount": p.amount, "description": p.description, "status": p.status,
			"redirectUrl": p.redirect}
}

func (paymentEdit) dupKeys(q request) []dupKey {
	return []dupKey{{"id", "an edit of payment request " + q["id"]}}
}

func (paymentEdit) repeatKey(q request) string { // the request is its id and every value it sets
	b, _ := json.Marshal(q)
	return string(b)
}

func (paymentEdit) send(ctx context.Context, c *api.Client, q request) (map[string]string, error) {
	exp, _ := time.Parse(time.RFC3339, q["expiredAt"])
	amount, _ := strconv.ParseInt(q["amount"], 10, 64)
	out, err := c.EditPayment(ctx, api.EditPaymentRequest{ID: q["id"], Name: q["name"], Email: q["email"],
		Mobile: q["mobile"], Amount: amount, RedirectURL: q["redirectUrl"], Description: q["description"], ExpiredAt: exp})
	if err != nil {
		return nil, err
	}
	return map[string]string{"link": out.Link}, nil
}

// reconcile reads the payment request: the edit sets absolute values, so it is applied when they are there,
// and sending it again is harmless when they are not.
func (paymentEdit) reconcile(rc *reconciler, ctx context.Context, a *Action) (verdict, map[string]string, error) {
	raw, err := rc.c.Detail(ctx, "/hl/v1/payment/"+url.PathEscape(a.Request["id"]))
	if err != nil {
		return undetermined, nil, fmt.Errorf("read payment request %s: %w", a.Request["id"], err)
	}
	var d struct {
		Name        string  `json:"name"`
		Amount      api.Int `json:"amount"`
		Description string  `json:"description"`
	}
	if err := json.Unmarshal(raw, &d); err != nil {
		return undetermined, nil, fmt.Errorf("payment request %s: %w", a.Request["id"], err)
	}
	ev := map[string]string{"read": "payment request " + a.Request["id"]}
	if d.Name == a.Request["name"] && strconv.FormatInt(d.Amount.Value, 10) == a.Request["amount"] &&
		d.Description == a.Request["description"] {
		ev["reconciled"] = "the payment request carries the new values"
		rc.found = append(rc.found, candidate{a.Request["id"], "payment request " + a.Request["id"] + " carries the new values"})
		return applied, ev, nil
	}
	ev["reconciled"] = "the payment request does not carry the new values; the edit sets absolute values, so it is sent again"
	return absent, ev, nil
}

// traces: the payment request's name or amount set to the row's value, as a sync saw it in the window, while
// the synced request carries the row's name and amount. Only name and amount are tracked (record_changes):
// an edit that changes neither (only the description, e-mail, redirect or expiry) leaves no record to compare.
func (paymentEdit) traces() traceRule {
	return traceRule{query: "payment_edit_traces", key: func(q request) string { return q["id"] },
		match: func(q request, t traceRow) (string, bool) {
			field, value, name, amount := t.f[0], t.f[1], t.f[2], t.f[3]
			same := value == q[field]
			if field == "amount" {
				same = cleanNumber(value) == cleanNumber(q["amount"])
			}
			if !same || name != q["name"] || cleanNumber(amount) != cleanNumber(q["amount"]) {
				return "", false
			}
			return fmt.Sprintf("payment request %s's %s set to %q, seen by a sync", t.id, field, value), true
		}}
}

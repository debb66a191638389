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

// paymentEditArgs is a row of a payment-edit file: the request's id and every value it sets.
type paymentEditArgs struct {
	ID          string  `json:"id"`
	Name        string  `json:"name"`
	Email       string  `json:"email"`
	Mobile      string  `json:"mobile"`
	Amount      whole   `json:"amount"`
	RedirectURL string  `json:"redirectUrl"`
	Description string  `json:"description"`
	ExpiredAt   instant `json:"expiredAt"`
}

func (paymentEdit) spec() spec[paymentEditArgs] {
	return spec[paymentEditArgs]{name: PaymentEdit, traits: traits{
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
		unit:    unitRupiah,
	},
		amount:    func(a paymentEditArgs) float64 { return float64(a.Amount) },
		reconcile: paymentEdit{}.reconcile,
		traces:    paymentEdit{}.traces(),
	}
}

func (paymentEdit) parse(r *rowReader) (paymentEditArgs, bool) {
	return paymentEditArgs{ID: r.text("id"), Name: r.text("name"), Email: r.email("email"), Mobile: r.text("mobile"),
		Amount: r.whole("amount"), RedirectURL: r.text("redirectUrl"), Description: r.text("description"),
		ExpiredAt: r.instant("expiredAt")}, true
}

func (a paymentEditArgs) refs(k *keys) { k.payReqIDs = append(k.payReqIDs, a.ID) }

func (paymentEdit) check(a paymentEditArgs, w *world, r *rowReader) (paymentEditArgs, described) {
	p, ok := w.payReqs[a.ID]
	if !ok {
		r.fail("id", "no payment request %q in the warehouse (synced %s)", a.ID, stamp(w.syncedAt))
		return a, described{}
	}
	if p.status == "paid" {
		r.fail("id", "payment request %s (%s) is already paid", p.id, p.name)
	}
	var changes []string
	for _, f := range [][3]string{{"name", p.name, a.Name}, {"amount", p.amount, a.Amount.String()},
		{"description", p.description, a.Description}, {"redirectUrl", p.redirect, a.RedirectURL}} {
		if f[1] != f[2] {
			changes = append(changes, r.lang.f("change.field", f[0], f[1], f[2]))
		}
	}
	changes = append(changes, r.lang.f("change.expires", r.localTime(a.ExpiredAt)))
	return a, described{r.lang.f("target.payment_request", p.id, p.name, p.status), strings.Join(changes, "; "),
		map[string]string{"name": p.name, "amount": p.amount, "description": p.description, "status": p.status,
			"redirectUrl": p.redirect}}
}

func (a paymentEditArgs) unique() []dupKey {
	return []dupKey{{"id", "an edit of payment request " + a.ID}}
}

func (a paymentEditArgs) repeatKey() string { // the request is its id and every value it sets
	b, _ := json.Marshal(a)
	return string(b)
}

func (paymentEdit) send(ctx context.Context, c *api.Client, a paymentEditArgs) (map[string]string, error) {
	out, err := c.EditPayment(ctx, api.EditPaymentRequest{ID: a.ID, Name: a.Name, Email: a.Email,
		Mobile: a.Mobile, Amount: int64(a.Amount), RedirectURL: a.RedirectURL, Description: a.Description,
		ExpiredAt: time.Time(a.ExpiredAt)})
	if err != nil {
		return nil, err
	}
	return map[string]string{"link": out.Link}, nil
}

// reconcile reads the payment request: the edit sets absolute values, so it is applied when they are there,
// and sending it again is harmless when they are not.
func (paymentEdit) reconcile(rc *reconciler, ctx context.Context, q paymentEditArgs, _ *Action) (verdict, map[string]string, error) {
	raw, err := rc.c.Detail(ctx, "/hl/v1/payment/"+url.PathEscape(q.ID))
	if err != nil {
		return undetermined, nil, fmt.Errorf("read payment request %s: %w", q.ID, err)
	}
	var d struct {
		Name        string  `json:"name"`
		Amount      api.Int `json:"amount"`
		Description string  `json:"description"`
	}
	if err := json.Unmarshal(raw, &d); err != nil {
		return undetermined, nil, fmt.Errorf("payment request %s: %w", q.ID, err)
	}
	ev := map[string]string{"read": "payment request " + q.ID}
	if d.Name == q.Name && strconv.FormatInt(d.Amount.Value, 10) == q.Amount.String() && d.Description == q.Description {
		ev["reconciled"] = "the payment request carries the new values"
		rc.found = append(rc.found, candidate{q.ID, "payment request " + q.ID + " carries the new values"})
		return applied, ev, nil
	}
	ev["reconciled"] = "the payment request does not carry the new values; the edit sets absolute values, so it is sent again"
	return absent, ev, nil
}

// traces: the payment request's name or amount set to the row's value, as a sync saw it in the window, while
// the synced request carries the row's name and amount. Only name and amount are tracked (record_changes):
// an edit that changes neither (only the description, e-mail, redirect or expiry) leaves no record to compare.
func (paymentEdit) traces() traceOf[paymentEditArgs] {
	return traceOf[paymentEditArgs]{query: "payment_edit_traces", key: func(a paymentEditArgs) string { return a.ID },
		match: func(a paymentEditArgs, t traceRow) (string, bool) {
			field, value, name, amount := t.f[0], t.f[1], t.f[2], t.f[3]
			var same bool
			switch field {
			case "amount":
				same = cleanNumber(value) == cleanNumber(a.Amount.String())
			case "name":
				same = value == a.Name
			default:
				same = value == encode(a)[field]
			}
			if !same || name != a.Name || cleanNumber(amount) != cleanNumber(a.Amount.String()) {
				return "", false
			}
			return fmt.Sprintf("payment request %s's %s set to %q, seen by a sync", t.id, field, value), true
		}}
}

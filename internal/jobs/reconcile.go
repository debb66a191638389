package jobs

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/billsync/billsync/internal/api"
)

// verdict is what reading the service says about an action whose outcome was unknown.
type verdict int

const (
	undetermined verdict = iota // cannot tell: left unknown for a person or a later run
	applied                     // the change is there
	absent                      // the change is not there: sending it is safe
)

// clockMargin widens "since the send" for clocks that disagree by a little (the Date header has seconds).
const clockMargin = time.Minute

// scanPages bounds how far a reconciliation pages through a list.
const scanPages = 2000

// reconciler reads the service to settle unknown outcomes.
type reconciler struct {
	j *Journal
	p *Plan
	c *api.Client

	customers []customer // e-mail fix: one scan per batch of reconciliations, dropped after every send
}

// forget drops what was read, because a send may have changed it.
func (rc *reconciler) forget() { rc.customers = nil }

func (rc *reconciler) check(ctx context.Context, a *Action) (verdict, map[string]string, error) {
	switch rc.p.Kind {
	case CreditTopup:
		return rc.topup(ctx, a)
	case EmailFix:
		return rc.email(ctx, a)
	case InvoiceCreate:
		return rc.invoice(ctx, a)
	case PaymentEdit:
		return rc.payment(ctx, a)
	case LicenseActivate, LicenseDeactivate:
		return absent, map[string]string{"reconciled": "no read endpoint for licenses; sending again is safe: it sets an absolute status"}, nil
	case CheckoutLink:
		return absent, map[string]string{"reconciled": "a checkout link changes nothing until paid; sending again mints a fresh link"}, nil
	case CouponCheck:
		return absent, map[string]string{"reconciled": "coupon validation changes nothing; asking again is safe"}, nil
	}
	return undetermined, nil, fmt.Errorf("no reconciliation for kind %s", rc.p.Kind)
}

// since is the earliest time the action's effect can carry: its last send by the service's clock.
func (rc *reconciler) since(ctx context.Context, a *Action) (time.Time, error) {
	var t sql.NullTime
	if err := rc.j.db.QueryRowContext(ctx, journalSQL["last_sent_at"], rc.p.ID, a.ID).Scan(&t); err != nil {
		return time.Time{}, fmt.Errorf("job journal: send time of action %d: %w", a.Seq, err)
	}
	if !t.Valid {
		return time.Time{}, fmt.Errorf("action %d was never journaled as sent", a.Seq)
	}
	return t.Time.Add(-clockMargin), nil
}

func (rc *reconciler) claimed(ctx context.Context) (map[string]bool, error) {
	out := map[string]bool{}
	err := queryEach(ctx, rc.j.db, journalSQL["claimed_ids"], func(r *sql.Rows) error {
		var id string
		err := r.Scan(&id)
		out[id] = true
		return err
	}, rc.p.Account, string(rc.p.Kind))
	if err != nil {
		return nil, fmt.Errorf("job journal: claimed records: %w", err)
	}
	return out, nil
}

type ledgerEntry struct {
	ID        string    `json:"id"`
	CreatedAt string    `json:"createdAt"`
	Credit    api.Float `json:"credit"`
	Debit     api.Float `json:"debit"`
	Amount    api.Float `json:"amount"` // some answers carry one signed amount instead of credit and debit
	ProductID string    `json:"productId"`
}

// topup looks for the top-up's ledger entry in the customer's credit history since the send. Entries that
// other journaled top-ups of the same customer, product and amount account for are not counted.
func (rc *reconciler) topup(ctx context.Context, a *Action) (verdict, map[string]string, error) {
	since, err := rc.since(ctx, a)
	if err != nil {
		return undetermined, nil, err
	}
	claimed, err := rc.claimed(ctx)
	if err != nil {
		return undetermined, nil, err
	}
	amount, _ := strconv.ParseFloat(a.Request["amount"], 64)
	var found []ledgerEntry
	for page := 1; page <= scanPages; page++ {
		q := url.Values{"productId": {a.Request["productId"]}, "page": {strconv.Itoa(page)}, "limit": {"50"},
			"sortField": {"datetime"}, "sortOrder": {"desc"}}
		lp, err := rc.c.CreditHistory(ctx, a.Request["customerId"], q)
		if err != nil {
			return undetermined, nil, fmt.Errorf("read credit history of customer %s page %d: %w", a.Request["customerId"], page, err)
		}
		older := 0
		for _, raw := range lp.Items {
			var e ledgerEntry
			if err := json.Unmarshal(raw, &e); err != nil {
				return undetermined, nil, fmt.Errorf("credit history of customer %s page %d: %w", a.Request["customerId"], page, err)
			}
			at, ok := parseISO(e.CreatedAt)
			if !ok || at.Before(since) {
				older++
				continue
			}
			credit, debit := e.Credit, e.Debit
			if !credit.Valid && e.Amount.Valid {
				credit = api.Float{Value: max(e.Amount.Value, 0), Valid: true}
				debit = api.Float{Value: max(-e.Amount.Value, 0), Valid: true}
			}
			if (e.ProductID == "" || e.ProductID == a.Request["productId"]) && credit.Value == amount && debit.Value == 0 &&
				!claimed[e.ID] {
				found = append(found, e)
			}
		}
		if !lp.HasMore || (len(lp.Items) > 0 && older == len(lp.Items)) {
			break
		}
	}
	var others int
	if err := rc.j.db.QueryRowContext(ctx, journalSQL["other_topups_since"], rc.p.Account, rc.p.ID, a.ID,
		a.Request["customerId"], a.Request["productId"], a.Request["amount"], since).Scan(&others); err != nil {
		return undetermined, nil, fmt.Errorf("job journal: other top-ups: %w", err)
	}
	if len(found) <= others {
		return absent, map[string]string{"reconciled": fmt.Sprintf("no unaccounted ledger entry of %s since %s",
			a.Request["amount"], since.Format(time.RFC3339))}, nil
	}
	e := found[len(found)-1] // the oldest: newest-first order
	return applied, map[string]string{"reconciled": "ledger entry found in the credit history", "claimed": e.ID,
		"ledgerCreatedAt": e.CreatedAt}, nil
}

func parseISO(s string) (time.Time, bool) {
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.000", "2006-01-02T15:04:05", "2006-01-02 15:04:05"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

// email reads the customers: the planned customer carrying toEmail means applied, still carrying fromEmail
// means absent; anything else needs a person.
func (rc *reconciler) email(ctx context.Context, a *Action) (verdict, map[string]string, error) {
	if rc.customers == nil {
		cs, err := rc.allCustomers(ctx)
		if err != nil {
			return undetermined, nil, err
		}
		rc.customers = cs
	}
	ids := map[string]bool{}
	for _, id := range strings.Fields(a.Current["customerId"]) {
		ids[id] = true
	}
	var still, now []customer
	for _, c := range rc.customers {
		switch {
		case ids[c.id] && strings.EqualFold(c.email, a.Request["toEmail"]):
			now = append(now, c)
		case ids[c.id] && strings.EqualFold(c.email, a.Request["fromEmail"]):
			still = append(still, c)
		}
	}
	switch {
	case len(now) > 0:
		return applied, map[string]string{"reconciled": "customer " + now[0].id + " has the new e-mail"}, nil
	case len(still) > 0:
		return absent, map[string]string{"reconciled": "customer " + still[0].id + " still has the old e-mail"}, nil
	}
	return undetermined, map[string]string{"reconciled": "the customer has neither e-mail now: check by hand"}, nil
}

func (rc *reconciler) allCustomers(ctx context.Context) ([]customer, error) {
	var out []customer
	for page := 1; page <= scanPages; page++ {
		lp, err := rc.c.List(ctx, "/hl/v1/customer", url.Values{"page": {strconv.Itoa(page)}, "pageSize": {"100"}})
		if err != nil {
			return nil, fmt.Errorf("read customers page %d: %w", page, err)
		}
		for _, raw := range lp.Items {
			var c struct{ ID, Email string }
			if err := json.Unmarshal(raw, &c); err != nil {
				return nil, fmt.Errorf("customers page %d: %w", page, err)
			}
			out = append(out, customer{id: c.ID, email: c.Email})
		}
		if !lp.HasMore || len(lp.Items) == 0 {
			return out, nil
		}
	}
	return out, nil
}

// invoice looks for an invoice with the same customer, name, description and amount created since the send
// and not already attributed to another action. It pages newest first and stops after two pages entirely
// older than the send.
func (rc *reconciler) invoice(ctx context.Context, a *Action) (verdict, map[string]string, error) {
	since, err := rc.since(ctx, a)
	if err != nil {
		return undetermined, nil, err
	}
	claimed, err := rc.claimed(ctx)
	if err != nil {
		return undetermined, nil, err
	}
	amount := invoiceAmount(a.Request)
	oldPages := 0
	for page := 1; page <= scanPages && oldPages < 2; page++ {
		lp, err := rc.c.List(ctx, "/hl/v1/invoice", url.Values{"page": {strconv.Itoa(page)}, "pageSize": {"100"}})
		if err != nil {
			return undetermined, nil, fmt.Errorf("read invoices page %d: %w", page, err)
		}
		older := 0
		for _, raw := range lp.Items {
			var inv struct {
				ID          string  `json:"id"`
				Amount      api.Int `json:"amount"`
				CreatedAt   api.Int `json:"createdAt"`
				Description string  `json:"description"`
				Name        string  `json:"name"`
				Customer    struct {
					Email string `json:"email"`
				} `json:"customer"`
			}
			if err := json.Unmarshal(raw, &inv); err != nil {
				return undetermined, nil, fmt.Errorf("invoices page %d: %w", page, err)
			}
			if time.UnixMilli(inv.CreatedAt.Value).Before(since) {
				older++
				continue
			}
			if inv.Amount.Value == amount && inv.Description == a.Request["description"] && inv.Name == a.Request["name"] &&
				strings.EqualFold(inv.Customer.Email, a.Request["email"]) && !claimed[inv.ID] {
				return applied, map[string]string{"reconciled": "invoice found in the invoice list", "claimed": inv.ID,
					"invoiceId": inv.ID}, nil
			}
		}
		if len(lp.Items) > 0 && older == len(lp.Items) {
			oldPages++
		}
		if !lp.HasMore || len(lp.Items) == 0 {
			break
		}
	}
	return absent, map[string]string{"reconciled": "no matching invoice created since " + since.Format(time.RFC3339)}, nil
}

// payment reads the payment request: the edit sets absolute values, so it is applied when they are there.
func (rc *reconciler) payment(ctx context.Context, a *Action) (verdict, map[string]string, error) {
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
	if d.Name == a.Request["name"] && strconv.FormatInt(d.Amount.Value, 10) == a.Request["amount"] &&
		d.Description == a.Request["description"] {
		return applied, map[string]string{"reconciled": "the payment request carries the new values"}, nil
	}
	return absent, map[string]string{"reconciled": "the payment request does not carry the new values; the edit is sent again"}, nil
}

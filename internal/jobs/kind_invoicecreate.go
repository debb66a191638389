package jobs

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/billsync/billsync/internal/api"
)

// InvoiceCreate creates invoices: POST /hl/v1/invoice/create.
const InvoiceCreate Kind = "invoice-create"

// invoiceCreate creates one invoice of one line per row; the service finds or registers the customer by
// the e-mail.
type invoiceCreate struct{}

// invoiceArgs is a row of an invoice-create file.
type invoiceArgs struct {
	Name            string  `json:"name"`
	Email           string  `json:"email"`
	Mobile          string  `json:"mobile"`
	RedirectURL     string  `json:"redirectUrl"`
	Description     string  `json:"description"`
	ExpiredAt       instant `json:"expiredAt"`
	Rate            whole   `json:"rate"`
	Quantity        whole   `json:"quantity"`
	ItemDescription string  `json:"itemDescription"`
	NoCustomer      string  `json:"noCustomer"`
	IDProd          string  `json:"idProd"`
}

func (invoiceCreate) spec() spec[invoiceArgs] {
	return spec[invoiceArgs]{name: InvoiceCreate, traits: traits{
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
		results: []string{"invoiceId", "transactionId", "link"},
		units:   map[string]unit{"rate": unitRupiah, "quantity": unitCount},
		unit:    unitRupiah,
		settles: true,
		// The service answers 409 "already exist" to an invoice it holds.
		conflictMeansExists: true,
	},
		amount:    func(a invoiceArgs) float64 { return float64(a.amount()) },
		reconcile: invoiceCreate{}.reconcile,
		traces:    invoiceCreate{}.traces(),
	}
}

func (invoiceCreate) parse(r *rowReader) (invoiceArgs, bool) {
	a := invoiceArgs{Name: r.text("name"), Email: r.email("email"), Mobile: r.text("mobile"),
		RedirectURL: r.text("redirectUrl"), Description: r.text("description"), ExpiredAt: r.instant("expiredAt"),
		Rate: r.whole("rate"), Quantity: 1, ItemDescription: r.get("itemDescription"),
		NoCustomer: r.get("noCustomer"), IDProd: r.get("idProd")}
	if r.get("quantity") != "" {
		a.Quantity = r.whole("quantity")
	}
	if a.ItemDescription == "" {
		a.ItemDescription = a.Description
	}
	return a, true
}

func (a invoiceArgs) refs(k *keys) {
	k.emails = append(k.emails, a.Email)
	if a.IDProd != "" {
		k.productIDs = append(k.productIDs, a.IDProd)
	}
}

func (invoiceCreate) check(a invoiceArgs, w *world, r *rowReader) (invoiceArgs, described) {
	if id := a.IDProd; id != "" {
		if _, ok := w.products[id]; !ok {
			r.fail("idProd", "no product %q in the warehouse (synced %s)", id, stamp(w.syncedAt))
		}
	}
	cur := map[string]string{"customerId": "", "customerName": ""}
	if cs := w.customersByEmail[strings.ToLower(a.Email)]; len(cs) > 0 {
		cur["customerId"], cur["customerName"] = cs[0].id, cs[0].name
	}
	return a, described{fmt.Sprintf("%s <%s>", a.Name, a.Email),
		r.lang.f("change.invoice", r.lang.number(a.Quantity.String()), r.lang.number(a.Rate.String()),
			r.lang.group(a.amount()), r.localTime(a.ExpiredAt)), cur}
}

func (a invoiceArgs) unique() []dupKey {
	return []dupKey{{"email", fmt.Sprintf("an invoice to %s for %d %q expiring %s", strings.ToLower(a.Email),
		a.amount(), a.Description, a.ExpiredAt.String())}}
}

// The same customer, name, text and amount is the same invoice whatever its expiry, phone or redirect:
// a second one is what a person re-planning a sheet sends by mistake.
func (a invoiceArgs) repeatKey() string {
	return fmt.Sprintf("%s|%s|%s|%s|%d", strings.ToLower(a.Email), a.Name, a.Description, a.ItemDescription, a.amount())
}

func (invoiceCreate) send(ctx context.Context, c *api.Client, a invoiceArgs) (map[string]string, error) {
	out, err := c.CreateInvoice(ctx, api.CreateInvoiceRequest{Name: a.Name, Email: a.Email, Mobile: a.Mobile,
		RedirectURL: a.RedirectURL, Description: a.Description, ExpiredAt: time.Time(a.ExpiredAt),
		Items:     []api.InvoiceItem{{Quantity: float64(a.Quantity), Rate: float64(a.Rate), Description: a.ItemDescription}},
		ExtraData: api.InvoiceExtraData{NoCustomer: a.NoCustomer, IDProd: a.IDProd}})
	if err != nil {
		return nil, err
	}
	return map[string]string{"invoiceId": out.ID, "transactionId": out.TransactionID, "link": out.Link,
		"claimed": out.ID}, nil
}

// amount is the total the service computes: quantity × rate, rounded.
func (a invoiceArgs) amount() int64 { return int64(math.Round(float64(a.Quantity) * float64(a.Rate))) }

// reconcile looks, in the whole invoice list, for an invoice with the same customer e-mail, name, description
// and amount created since the send and not already attributed to another action.
func (invoiceCreate) reconcile(rc *reconciler, ctx context.Context, q invoiceArgs, a *Action) (verdict, map[string]string, error) {
	send, err := rc.sendMoment(ctx, a)
	if err != nil {
		return undetermined, nil, err
	}
	claimed, err := rc.claimed(ctx)
	if err != nil {
		return undetermined, nil, err
	}
	amount := q.amount()
	l, err := readAll("invoice list", func(n int) (*api.ListPage, error) {
		return rc.c.List(ctx, "/hl/v1/invoice", url.Values{"page": {strconv.Itoa(n)}, "pageSize": {"100"}})
	})
	if err != nil {
		return undetermined, nil, err
	}
	pl := rc.place(send)
	since := pl.since
	type found struct {
		id string
		at time.Time
	}
	var hits []found
	var doubts []string
	if pl.doubt != "" {
		doubts = append(doubts, pl.doubt)
	}
	for i, raw := range l.items {
		if key, dup := api.RepeatedKey(raw); dup {
			doubts = append(doubts, fmt.Sprintf("invoice %d of the list gives %q twice: it has no single reading", i+1, key))
			continue
		}
		var inv struct {
			ID          string          `json:"id"`
			Amount      api.Int         `json:"amount"`
			CreatedAt   json.RawMessage `json:"createdAt"`
			Description *string         `json:"description"`
			Name        *string         `json:"name"`
			Customer    *struct {
				Email *string `json:"email"`
			} `json:"customer"`
		}
		if err := json.Unmarshal(raw, &inv); err != nil {
			doubts = append(doubts, fmt.Sprintf("invoice %d of the list cannot be read: %v", i+1, err))
			continue
		}
		// Every time in the read must be plausible, the invoice ours or not: the sync refuses the same page.
		at, doubt := pl.moment("invoice "+inv.ID, "createdAt", inv.CreatedAt)
		if doubt != "" {
			doubts = append(doubts, doubt)
			continue
		}
		if claimed[inv.ID] {
			continue
		}
		// Compare what the invoice shows; a field it does not show cannot rule it out.
		var lacks []string
		same := func(name string, ok, present bool) bool {
			if !present {
				lacks = append(lacks, name)
				return true
			}
			return ok
		}
		email := ""
		if inv.Customer != nil && inv.Customer.Email != nil {
			email = *inv.Customer.Email
		}
		if !same("amount", inv.Amount.Value == amount, inv.Amount.Valid) ||
			!same("description", inv.Description != nil && *inv.Description == q.Description, inv.Description != nil) ||
			!same("name", inv.Name != nil && *inv.Name == q.Name, inv.Name != nil) ||
			!same("customer e-mail", strings.EqualFold(email, q.Email), email != "") {
			continue
		}
		if pl.doubt != "" {
			rc.found = append(rc.found, candidate{inv.ID, fmt.Sprintf("invoice %s created %s", inv.ID, rc.local(at.lo))})
			continue
		}
		switch at.when(since) {
		case "before":
			continue
		case "either":
			doubts = append(doubts, fmt.Sprintf("invoice %s at %s has no time zone: it may be before or after the send", inv.ID,
				string(inv.CreatedAt)))
			rc.found = append(rc.found, candidate{inv.ID, fmt.Sprintf("invoice %s created %s (no time zone)", inv.ID, string(inv.CreatedAt))})
			continue
		}
		rc.found = append(rc.found, candidate{inv.ID, fmt.Sprintf("invoice %s created %s", inv.ID, rc.local(at.lo))})
		if len(lacks) > 0 {
			doubts = append(doubts, fmt.Sprintf("invoice %s lacks %s", inv.ID, strings.Join(lacks, " and ")))
			continue
		}
		hits = append(hits, found{inv.ID, at.lo})
	}
	ev := map[string]string{"read": l.summary(), "sentAt": send.at.UTC().Format(time.RFC3339)}
	if l.incomplete != "" {
		doubts = append([]string{l.incomplete}, doubts...)
	}
	if len(hits) > 0 && len(doubts) == 0 {
		sort.Slice(hits, func(i, k int) bool { return hits[i].at.Before(hits[k].at) })
		ev["reconciled"], ev["claimed"], ev["invoiceId"] = "invoice found in the invoice list", hits[0].id, hits[0].id
		return applied, ev, nil
	}
	if len(doubts) > 0 {
		ev["reconciled"] = "cannot prove whether the invoice was created"
		ev["missing"] = strings.Join(doubts, "; ")
		return inconclusive, ev, nil
	}
	ev["reconciled"] = "no matching invoice created " + rc.since(send, pl) + " in the complete invoice list"
	return absent, ev, nil
}

// traces: invoices to the same e-mail with the same name, description and amount, created in the window
// (whatever their status or expiry). The line's text is not in the synced record, so it is not compared: an
// invoice differing only there is held too, and the repeat column releases it.
func (invoiceCreate) traces() traceOf[invoiceArgs] {
	return traceOf[invoiceArgs]{query: "invoice_traces", key: func(a invoiceArgs) string { return strings.ToLower(a.Email) },
		match: func(a invoiceArgs, t traceRow) (string, bool) {
			if t.f[0] != a.Name || t.f[1] != a.Description || t.f[2] != strconv.FormatInt(a.amount(), 10) {
				return "", false
			}
			return fmt.Sprintf("invoice %s to %s of %s", t.id, a.Email, t.f[2]), true
		}}
}

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

func (invoiceCreate) name() Kind { return InvoiceCreate }

func (invoiceCreate) traits() traits {
	return traits{
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
		measure: measure{unit: unitRupiah, value: func(a *Action) (float64, bool) { return float64(invoiceAmount(a.Request)), true }},
		settles: true,
		// The service answers 409 "already exist" to an invoice it holds.
		conflictMeansExists: true,
	}
}

func (invoiceCreate) parse(r *rowReader, _ *PlanOptions) request {
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
}

func (invoiceCreate) keys(q request, k *keys) {
	k.emails = append(k.emails, q["email"])
	if q["idProd"] != "" {
		k.productIDs = append(k.productIDs, q["idProd"])
	}
}

func (invoiceCreate) check(q request, w *world, r *rowReader) (string, string, map[string]string) {
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
		r.lang.f("change.invoice", r.lang.number(q["quantity"]), r.lang.number(q["rate"]),
			r.lang.group(invoiceAmount(q)), r.localTime(q["expiredAt"])), cur
}

func (invoiceCreate) dupKeys(q request) []dupKey {
	return []dupKey{{"email", fmt.Sprintf("an invoice to %s for %d %q expiring %s", strings.ToLower(q["email"]),
		invoiceAmount(q), q["description"], q["expiredAt"])}}
}

// The same customer, name, text and amount is the same invoice whatever its expiry, phone or redirect:
// a second one is what a person re-planning a sheet sends by mistake.
func (invoiceCreate) repeatKey(q request) string {
	return fmt.Sprintf("%s|%s|%s|%s|%d", strings.ToLower(q["email"]), q["name"], q["description"],
		q["itemDescription"], invoiceAmount(q))
}

func (invoiceCreate) send(ctx context.Context, c *api.Client, q request) (map[string]string, error) {
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
}

// invoiceAmount is the total the service computes: quantity × rate, rounded.
func invoiceAmount(q request) int64 {
	qty, _ := strconv.ParseFloat(q["quantity"], 64)
	rate, _ := strconv.ParseFloat(q["rate"], 64)
	return int64(math.Round(qty * rate))
}

// reconcile looks, in the whole invoice list, for an invoice with the same customer e-mail, name, description
// and amount created since the send and not already attributed to another action.
func (invoiceCreate) reconcile(rc *reconciler, ctx context.Context, a *Action) (verdict, map[string]string, error) {
	send, err := rc.sendMoment(ctx, a)
	if err != nil {
		return undetermined, nil, err
	}
	claimed, err := rc.claimed(ctx)
	if err != nil {
		return undetermined, nil, err
	}
	amount := invoiceAmount(a.Request)
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
			!same("description", inv.Description != nil && *inv.Description == a.Request["description"], inv.Description != nil) ||
			!same("name", inv.Name != nil && *inv.Name == a.Request["name"], inv.Name != nil) ||
			!same("customer e-mail", strings.EqualFold(email, a.Request["email"]), email != "") {
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
func (invoiceCreate) traces() traceRule {
	return traceRule{query: "invoice_traces", key: lowerKey("email"),
		match: func(q request, t traceRow) (string, bool) {
			if t.f[0] != q["name"] || t.f[1] != q["description"] || t.f[2] != strconv.FormatInt(invoiceAmount(q), 10) {
				return "", false
			}
			return fmt.Sprintf("invoice %s to %s of %s", t.id, q["email"], t.f[2]), true
		}}
}

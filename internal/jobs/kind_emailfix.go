package jobs

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/billsync/billsync/internal/api"
)

// EmailFix changes customers' e-mail addresses: POST /hl/v1/customer/update.
const EmailFix Kind = "email-fix"

// emailFix finds the customer by the e-mail the service has and gives it a new one. The data-quality
// report's e-mail fixes sheet is its file as it stands.
type emailFix struct{}

// emailFixArgs is a row of an email-fix file.
type emailFixArgs struct {
	From string `json:"fromEmail"`
	To   string `json:"toEmail"`
}

func (emailFix) spec() spec[emailFixArgs] {
	return spec[emailFixArgs]{name: EmailFix, traits: traits{
		columns: []column{
			{"fromEmail", true, "the customer's current e-mail, exactly as the service has it (may be malformed)"},
			{"toEmail", true, "the new e-mail; a blank leaves the customer alone (the plan lists those lines)"},
		},
		results:    []string{"message"},
		settles:    true,
		allSkipped: "every toEmail is blank (%d row(s)): fill toEmail for the customers to change; rows left blank are left alone",
	}, reconcile: emailFix{}.reconcile, traces: emailFix{}.traces()}
}

func (emailFix) parse(r *rowReader) (emailFixArgs, bool) {
	// A blank toEmail leaves the customer alone: the data-quality sheet lists every suspect address and
	// the person fills only the ones to change. The plan lists the rows left out.
	to := r.get("toEmail")
	if to == "" {
		return emailFixArgs{}, false
	}
	from := r.get("fromEmail")
	if from == "" {
		r.fail("fromEmail", "fromEmail is empty: the service finds the customer by e-mail, so a customer without one "+
			"cannot be changed by a job; set it in the dashboard")
		return emailFixArgs{}, false
	}
	if err := checkEmail(to); err != nil {
		r.fail("toEmail", "%q is not an e-mail address: %v", to, err)
	} else if strings.EqualFold(from, to) {
		r.fail("toEmail", "toEmail is the same as fromEmail")
	}
	return emailFixArgs{From: from, To: to}, true
}

func (a emailFixArgs) refs(k *keys) { k.emails = append(k.emails, a.From, a.To) }

func (emailFix) check(a emailFixArgs, w *world, r *rowReader) (emailFixArgs, described) {
	cs := w.customersByEmail[strings.ToLower(a.From)]
	if len(cs) == 0 {
		r.fail("fromEmail", "no customer has the e-mail %q in the warehouse (synced %s)", a.From, stamp(w.syncedAt))
	}
	if taken := w.customersByEmail[strings.ToLower(a.To)]; len(taken) > 0 {
		r.fail("toEmail", "%q is already used by customer %s (%s)", a.To, taken[0].id, taken[0].name)
	}
	if len(cs) == 0 {
		return a, described{}
	}
	ids := make([]string, len(cs))
	for i, c := range cs {
		ids[i] = c.id
	}
	target := r.lang.f("target.customer", cs[0].id, cs[0].name)
	if len(cs) > 1 {
		target = r.lang.f("target.shared_email", len(cs), strings.Join(ids, ", "))
	}
	return a, described{target, r.lang.f("change.email", a.From, a.To),
		map[string]string{"customerId": strings.Join(ids, " "), "name": cs[0].name, "email": cs[0].email}}
}

func (a emailFixArgs) unique() []dupKey {
	return []dupKey{{"fromEmail", "fromEmail " + strings.ToLower(a.From)}, {"toEmail", "toEmail " + strings.ToLower(a.To)}}
}

func (a emailFixArgs) repeatKey() string {
	return strings.ToLower(a.From) + " → " + strings.ToLower(a.To)
}

func (emailFix) send(ctx context.Context, c *api.Client, a emailFixArgs) (map[string]string, error) {
	ack, err := c.UpdateCustomerEmail(ctx, a.From, a.To)
	if err != nil {
		return nil, err
	}
	return map[string]string{"message": ack.Message}, nil
}

// reconcile reads every customer: the planned customer carrying toEmail means applied, still carrying fromEmail
// means absent; anything else needs a person.
func (emailFix) reconcile(rc *reconciler, ctx context.Context, q emailFixArgs, a *Action) (verdict, map[string]string, error) {
	l, err := rc.list("customer list", func(n int) (*api.ListPage, error) {
		return rc.c.List(ctx, "/hl/v1/customer", url.Values{"page": {strconv.Itoa(n)}, "pageSize": {"100"}})
	})
	if err != nil {
		return undetermined, nil, err
	}
	ev := map[string]string{"read": l.summary()}
	ids := map[string]bool{}
	for _, id := range strings.Fields(a.Current["customerId"]) {
		ids[id] = true
	}
	var still, now, doubts []string
	seen := 0
	for i, raw := range l.items {
		if key, dup := api.RepeatedKey(raw); dup {
			doubts = append(doubts, fmt.Sprintf("customer %d of the list gives %q twice: it has no single reading", i+1, key))
			continue
		}
		var c struct {
			ID    string `json:"id"`
			Email string `json:"email"`
		}
		if err := json.Unmarshal(raw, &c); err != nil || c.ID == "" {
			doubts = append(doubts, fmt.Sprintf("customer %d of the list does not say who it is (no readable id)", i+1))
			continue
		}
		if !ids[c.ID] {
			continue
		}
		seen++
		switch {
		case strings.EqualFold(c.Email, q.To):
			now = append(now, c.ID)
		case strings.EqualFold(c.Email, q.From):
			still = append(still, c.ID)
		}
	}
	for _, id := range now {
		rc.found = append(rc.found, candidate{id, "customer " + id + " has " + q.To})
	}
	if l.incomplete != "" {
		doubts = append([]string{l.incomplete}, doubts...)
	}
	switch {
	case len(doubts) > 0:
		ev["reconciled"] = "cannot prove whether the e-mail was changed"
		ev["missing"] = strings.Join(doubts, "; ")
		return inconclusive, ev, nil
	case len(now) > 0:
		ev["reconciled"] = "customer " + now[0] + " has the new e-mail"
		return applied, ev, nil
	case len(still) > 0:
		ev["reconciled"] = "customer " + still[0] + " still has the old e-mail"
		return absent, ev, nil
	case seen == 0:
		ev["reconciled"] = "cannot prove whether the e-mail was changed"
		ev["missing"] = "customer " + a.Current["customerId"] + " is not in the customer list"
		return inconclusive, ev, nil
	}
	ev["reconciled"] = "cannot prove whether the e-mail was changed"
	ev["missing"] = fmt.Sprintf("the customer has neither %s nor %s now", q.From, q.To)
	return inconclusive, ev, nil
}

// traces: a customer's e-mail changed from fromEmail to toEmail, as a sync saw it (record_changes) in the
// window. The time is when the sync saw it; the change was made between that sync and the one before.
func (emailFix) traces() traceOf[emailFixArgs] {
	return traceOf[emailFixArgs]{query: "email_traces", key: func(a emailFixArgs) string { return strings.ToLower(a.From) },
		match: func(a emailFixArgs, t traceRow) (string, bool) {
			if !strings.EqualFold(t.f[0], a.To) {
				return "", false
			}
			return fmt.Sprintf("customer %s's e-mail changed from %s to %s, seen by a sync", t.id, a.From, t.f[0]), true
		}}
}

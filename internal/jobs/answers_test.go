package jobs_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/billsync/billsync/internal/api"
	"github.com/billsync/billsync/internal/jobs"
	"github.com/billsync/billsync/internal/sandbox"
)

// describe is one action's outcome as the result file shows it, for the golden file.
func describe(p *jobs.Plan, seq int) string {
	a := p.Actions[seq-1]
	var b strings.Builder
	fmt.Fprintf(&b, "row %d: %s", seq, a.State)
	if a.Error != "" {
		fmt.Fprintf(&b, "\n  error: %s", a.Error)
	}
	for _, k := range []string{"valid", "message", "reason", "reconciled", "missing"} {
		if v := a.Detail[k]; v != "" {
			fmt.Fprintf(&b, "\n  %s: %s", k, v)
		}
	}
	return b.String()
}

// TestDocumentedAnswersInEachJobKind pins how each job kind takes the service's documented error answers:
// coupon 400/404 are results (valid=false, the reason); a payment edit or an e-mail update refused is a clean
// per-row failure with the reason; an invoice create answered 409 or duplicate-429 is reconciled and, when
// the read cannot find it, left unresolved, never sent again.
func TestDocumentedAnswersInEachJobKind(t *testing.T) {
	ctx := context.Background()
	var golden strings.Builder
	section := func(name string, p *jobs.Plan, seqs ...int) {
		fmt.Fprintf(&golden, "== %s\n", name)
		for _, s := range seqs {
			fmt.Fprintf(&golden, "%s\n", describe(p, s))
		}
	}

	t.Run("coupon-check", func(t *testing.T) {
		e := newEnv(t)
		p := e.product(func(p simProduct) bool { return p.Type == "course" })
		saas := e.product(func(p simProduct) bool { return p.Type == "saas" })
		in := e.file("coupons.csv", "paymentLinkId,couponCode,finalAmount",
			p.ID+",NO-SUCH-CODE,100000", p.ID+",NONAKTIF10,100000", p.ID+",BELUMMULAI10,100000",
			saas.ID+",KURSUSSAJA10,100000", p.ID+",HABIS10,100000", p.ID+",KURSUSSAJA10,100000")
		res := e.apply(e.mustPlan(jobs.CouponCheck, in).ID)
		if res.Status != jobs.RunCompleted || res.Failed != 0 {
			t.Errorf("a coupon that does not apply is a result, not a failure: %+v", res)
		}
		section("coupon-check: 404 unknown code, 400 inactive, not yet active, type excluded, used up; 200 valid", res.Plan, 1, 2, 3, 4, 5, 6)
	})

	t.Run("payment-edit of a request paid since planning", func(t *testing.T) {
		e := newEnv(t)
		type pr struct{ ID, Status string }
		open := map[string]bool{}
		for _, r := range records[pr](e, "payment_requests") {
			if r.Status != "paid" {
				open[r.ID] = true
			}
		}
		var paidID string
		for try := 0; try < 40 && paidID == ""; try++ {
			e.sb.Advance(72 * time.Hour)
			for _, r := range records[pr](e, "payment_requests") {
				if open[r.ID] && r.Status == "paid" {
					paidID = r.ID
					break
				}
			}
		}
		if paidID == "" {
			t.Fatal("no payment request got paid")
		}
		in := e.file("edit.csv", "id,name,email,mobile,amount,redirectUrl,description,expiredAt",
			paidID+",Pak Joko,joko@example.com,0812,125000,https://x.example/ok,Cicilan 2,2027-01-31T10:00:00+07:00")
		p := e.mustPlan(jobs.PaymentEdit, in)
		res := e.apply(p.ID)
		if res.Status != jobs.RunCompletedWithFailures || res.Failed != 1 {
			t.Errorf("run: %+v", res)
		}
		section("payment-edit: 409 already paid", res.Plan, 1)
	})

	t.Run("email-fix of a customer whose e-mail changed since planning", func(t *testing.T) {
		e := newEnv(t)
		cs := e.customers(1)
		p := e.mustPlan(jobs.EmailFix, e.file("emails.csv", "fromEmail,toEmail", cs[0].Email+",planned@fixed.example"))
		if _, err := e.client(testKey).UpdateCustomerEmail(ctx, cs[0].Email, "someone.else@fixed.example"); err != nil {
			t.Fatal(err)
		}
		res := e.apply(p.ID)
		if res.Failed != 1 {
			t.Errorf("run: %+v", res)
		}
		section("email-fix: 404 fromEmail is no customer", res.Plan, 1)
	})

	t.Run("invoice-create answered 409 already exist", func(t *testing.T) {
		e := newEnv(t)
		_, err := e.client(testKey).CreateInvoice(ctx, api.CreateInvoiceRequest{Name: "Lain", Email: "lain@example.com",
			Mobile: "0811", RedirectURL: "https://x.example", Description: "Faktur lama", ExpiredAt: testNow.Add(240 * time.Hour),
			Items: []api.InvoiceItem{{Quantity: 1, Rate: 5000, Description: "x"}}, ExtraData: api.InvoiceExtraData{NoCustomer: "INV-0042"}})
		if err != nil {
			t.Fatal(err)
		}
		in := e.file("invoices.csv", "name,email,mobile,redirectUrl,description,expiredAt,rate,noCustomer",
			"Budi Hartono,budi.h@example.com,0812,https://shop.example/thanks,Langganan Desember,2026-12-31,150000,INV-0042")
		p := e.mustPlan(jobs.InvoiceCreate, in)
		for run := 0; run < 2; run++ {
			e.apply(p.ID)
		}
		res := e.apply(p.ID)
		if n := e.posts("/hl/v1/invoice/create"); n != 2 { // ours once, never again
			t.Errorf("%d invoice creates, want 2", n)
		}
		section("invoice-create: 409 already exist, no matching invoice: unresolved", res.Plan, 1)
	})

	t.Run("invoice-create answered duplicate-429, then resolved by hand", func(t *testing.T) {
		duplicateThenResolved(t, section)
	})
	checkGolden(t, "answers_jobs.golden", golden.String())
}

// duplicateThenResolved: an invoice planned again (-again) is answered duplicate-429, left unresolved and never
// retried; a person resolves it as not applied once the settle interval is over, and the next run sends it.
func duplicateThenResolved(t *testing.T, section func(string, *jobs.Plan, ...int)) {
	ctx := context.Background()
	e := newEnv(t)
	in := e.file("invoices.csv", "name,email,mobile,redirectUrl,description,expiredAt,rate",
		"Budi Hartono,budi.h@example.com,0812,https://shop.example/thanks,Langganan Desember,2026-12-31,150000")
	first := e.mustPlan(jobs.InvoiceCreate, in)
	e.apply(first.ID)
	again := e.mustPlan(jobs.InvoiceCreate, in, func(o *jobs.PlanOptions) { o.Again = true })
	res := e.apply(again.ID)
	if res.Status != jobs.RunIncomplete || res.Unresolved != 1 {
		t.Errorf("run: %+v", res)
	}
	e.apply(again.ID)
	if n := e.posts("/hl/v1/invoice/create"); n != 2 {
		t.Errorf("%d invoice creates, want 2: the duplicate is never retried", n)
	}
	section("invoice-create: 429 duplicate request, its twin claimed by the first plan: unresolved", res.Plan, 1)

	// A person checks, says it was not applied once the settle interval is over (the only invoice like it is
	// the first plan's), and the next run sends it.
	e.sb.Advance(jobs.DefaultSettle + time.Minute)
	j := e.open()
	ro := jobs.ResolveOptions{Client: e.client(testKey), Now: e.sb.Now}
	if _, err := j.Resolve(ctx, again.ID, 1, "not-applied", "", "", ro); err == nil || !strings.Contains(err.Error(), "why") {
		t.Errorf("resolve without a reason: %v", err)
	}
	a, err := j.Resolve(ctx, again.ID, 1, "not-applied", "siti", "the second invoice is wanted: customer ordered twice", ro)
	j.Close()
	if err != nil || a.State != jobs.NotApplied {
		t.Fatalf("resolve: %v %+v", err, a)
	}
	res = e.apply(again.ID)
	if res.Status != jobs.RunCompleted || e.posts("/hl/v1/invoice/create") != 3 {
		t.Errorf("after resolving not-applied: %+v, %d creates", res, e.posts("/hl/v1/invoice/create"))
	}
	if h := history(e, again.ID, 1); h != "planned sent unknown unresolved not_applied sent succeeded" {
		t.Errorf("journal: %q", h)
	}
	j = e.open()
	defer j.Close()
	var by, why string
	if err := j.DB().QueryRow(`SELECT detail->>'$.resolvedBy', detail->>'$.why' FROM job_actions
		WHERE plan_id = ? AND state = 'not_applied' AND run_id IS NULL`, again.ID).Scan(&by, &why); err != nil || by != "siti" ||
		!strings.Contains(why, "ordered twice") {
		t.Errorf("the journal does not say who and why: %q %q %v", by, why, err)
	}
}

// TestInconclusiveReadsEndUnresolved: when the read itself cannot be trusted (records repeated across pages
// on every attempt) or shows neither the old nor the new value, the row is left unresolved, never sent again.
func TestInconclusiveReadsEndUnresolved(t *testing.T) {
	t.Run("customer list repeats records across pages", func(t *testing.T) {
		// The service applies 20 a page whatever is asked: the list takes several pages.
		e := newEnvWith(t, func(o *sandbox.Options) { o.MaxPageSize = 20 })
		cs := e.customers(1)
		p := e.mustPlan(jobs.EmailFix, e.file("emails.csv", "fromEmail,toEmail", cs[0].Email+",moved@fixed.example"))
		if err := e.sb.SetFaults(sandboxFaults("/hl/v1/customer", 1)); err != nil {
			t.Fatal(err)
		}
		e.sb.FailNext(sandboxServerError, 1, "/hl/v1/customer/update") // not applied, outcome unknown
		for run := 0; run < 3; run++ {
			e.apply(p.ID)
		}
		res := e.apply(p.ID)
		a := res.Plan.Actions[0]
		if a.State != jobs.Unresolved || !strings.Contains(a.Detail["missing"], "records moved while paging") || e.posts("/hl/v1/customer/update") != 1 {
			t.Errorf("state %s, detail %v, %d sends; want unresolved after an untrustworthy read, sent once", a.State, a.Detail,
				e.posts("/hl/v1/customer/update"))
		}
	})
	t.Run("the customer has neither e-mail", func(t *testing.T) {
		e := newEnv(t)
		cs := e.customers(1)
		p := e.mustPlan(jobs.EmailFix, e.file("emails.csv", "fromEmail,toEmail", cs[0].Email+",moved@fixed.example"))
		e.sb.FailNext(sandboxServerError, 1, "/hl/v1/customer/update")
		e.apply(p.ID)
		// Someone else changes the address meanwhile.
		if _, err := e.client(testKey).UpdateCustomerEmail(context.Background(), cs[0].Email, "third@fixed.example"); err != nil {
			t.Fatal(err)
		}
		e.apply(p.ID)
		res := e.apply(p.ID)
		a := res.Plan.Actions[0]
		if a.State != jobs.Unresolved || !strings.Contains(a.Detail["missing"], "neither") || e.posts("/hl/v1/customer/update") != 2 {
			t.Errorf("state %s, detail %v, %d sends", a.State, a.Detail, e.posts("/hl/v1/customer/update"))
		}
	})
}

package jobs_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/billsync/billsync/internal/jobs"
	"github.com/billsync/billsync/internal/sandbox"
)

func TestEmailFixAppliesAndReconciles(t *testing.T) {
	e := newEnv(t)
	cs := e.customers(3)
	in := e.file("emails.csv", "fromEmail,toEmail",
		cs[0].Email+",new.one@fixed.example", cs[1].Email+",new.two@fixed.example", cs[2].Email+",new.three@fixed.example")
	p := e.mustPlan(jobs.EmailFix, in)
	if p.Actions[0].Current["customerId"] != cs[0].ID {
		t.Errorf("plan target %v, want customer %s", p.Actions[0].Current, cs[0].ID)
	}
	e.sb.FailNext(sandbox.FaultApplyThen500, 1, "/hl/v1/customer/update")
	res := e.apply(p.ID)
	if res.Status != jobs.RunCompleted || res.Reconciled != 1 || res.Sent != 3 {
		t.Fatalf("run: %+v", res)
	}
	got := map[string]string{}
	for _, c := range records[simCustomer](e, "customers") {
		got[c.ID] = c.Email
	}
	for i, want := range []string{"new.one@fixed.example", "new.two@fixed.example", "new.three@fixed.example"} {
		if got[cs[i].ID] != want {
			t.Errorf("customer %s has %q, want %q", cs[i].ID, got[cs[i].ID], want)
		}
	}
	if n := e.posts("/hl/v1/customer/update"); n != 3 {
		t.Errorf("%d update requests, want 3", n)
	}
}

func TestInvoiceCreateAppliesAndReconciles(t *testing.T) {
	e := newEnv(t)
	in := e.file("invoices.csv", "name,email,mobile,redirectUrl,description,expiredAt,quantity,rate",
		"Budi Hartono,budi.h@example.com,0812000111,https://shop.example/thanks,Langganan Desember,2026-12-31,2,150000",
		"Sari Dewi,sari.d@example.com,0812000222,https://shop.example/thanks,Langganan Desember,2026-12-31,,99000")
	p := e.mustPlan(jobs.InvoiceCreate, in, func(o *jobs.PlanOptions) { o.Location = jakarta(t) })
	if got := p.Actions[0].Request["expiredAt"]; got != "2026-12-31T16:59:59.000Z" {
		t.Errorf("a bare date expires at %s, want the end of that day in Jakarta", got)
	}
	e.sb.FailNext(sandbox.FaultApplyThenReset, 1, "/hl/v1/invoice/create")
	res := e.apply(p.ID)
	if res.Status != jobs.RunCompleted || res.Reconciled != 1 {
		t.Fatalf("run: %+v", res)
	}
	type inv struct {
		ID, Name, Description string
		Amount                int64
		Customer              struct{ Email string }
	}
	found := map[string]int{}
	for _, i := range records[inv](e, "invoices") {
		if i.Description == "Langganan Desember" {
			found[fmt.Sprintf("%s %d", i.Customer.Email, i.Amount)]++
		}
	}
	if found["budi.h@example.com 300000"] != 1 || found["sari.d@example.com 99000"] != 1 || len(found) != 2 {
		t.Errorf("invoices on the service: %v, want one each", found)
	}
	if id := res.Plan.Actions[1].Detail["invoiceId"]; id == "" {
		t.Error("the created invoice's id is not journaled")
	}
}

func TestPaymentEditAppliesAndReconciles(t *testing.T) {
	e := newEnv(t)
	type pr struct {
		ID, Status, Name string
		Amount           int64
	}
	var open []pr
	for _, r := range records[pr](e, "payment_requests") {
		if r.Status != "paid" && len(open) < 2 {
			open = append(open, r)
		}
	}
	in := e.file("edit.csv", "id,name,email,mobile,amount,redirectUrl,description,expiredAt",
		open[0].ID+",Pak Joko,joko@example.com,0812,125000,https://x.example/ok,Cicilan 2,2027-01-31T10:00:00+07:00",
		open[1].ID+",Bu Ani,ani@example.com,0813,75000,https://x.example/ok,Cicilan 3,2027-01-31T10:00:00+07:00")
	p := e.mustPlan(jobs.PaymentEdit, in)
	if !strings.Contains(p.Actions[0].Change, "125000") {
		t.Errorf("change: %s", p.Actions[0].Change)
	}
	e.sb.FailNext(sandbox.FaultApplyThen500, 1, "/hl/v1/payment/edit")
	res := e.apply(p.ID)
	if res.Status != jobs.RunCompleted || res.Reconciled != 1 {
		t.Fatalf("run: %+v", res)
	}
	now := map[string]pr{}
	for _, r := range records[pr](e, "payment_requests") {
		now[r.ID] = r
	}
	if now[open[0].ID].Amount != 125000 || now[open[1].ID].Name != "Bu Ani" {
		t.Errorf("payment requests after the job: %+v %+v", now[open[0].ID], now[open[1].ID])
	}
}

func TestLicenseActivateDeactivate(t *testing.T) {
	e := newEnv(t)
	saas := map[string]bool{}
	for _, p := range records[simProduct](e, "products") {
		saas[p.ID] = p.Type == "saas" && p.Status == "active"
	}
	var ls []simLicense
	for _, l := range records[simLicense](e, "licenses") {
		if saas[l.ProductID] && len(ls) < 2 {
			ls = append(ls, l)
		}
	}
	if len(ls) < 2 {
		t.Fatal("the simulator has too few licenses of active saas products")
	}
	for _, step := range []struct {
		kind jobs.Kind
		want string
	}{{jobs.LicenseDeactivate, "INACTIVE"}, {jobs.LicenseActivate, "ACTIVE"}} {
		in := e.file(string(step.kind)+".csv", "licenseCode,productId",
			ls[0].LicenseCode+","+ls[0].ProductID, ls[1].LicenseCode+","+ls[1].ProductID)
		res := e.apply(e.mustPlan(step.kind, in).ID)
		if res.Status != jobs.RunCompleted {
			t.Fatalf("%s: %+v", step.kind, res)
		}
		status := map[string]string{}
		for _, l := range records[simLicense](e, "licenses") {
			status[l.LicenseCode+l.ProductID] = l.Status
		}
		for _, l := range ls {
			if got := status[l.LicenseCode+l.ProductID]; got != step.want {
				t.Errorf("%s: license %s is %s, want %s", step.kind, l.LicenseCode, got, step.want)
			}
		}
	}
}

func TestCheckoutLinksAreTheOutput(t *testing.T) {
	e := newEnv(t)
	p := e.product(creditUsage)
	in := e.file("links.csv", "productId,name,email,mobile,creditAmount",
		p.ID+",Rina,rina@example.com,0811,500", p.ID+",Tono,tono@example.com,0812,")
	res := e.apply(e.mustPlan(jobs.CheckoutLink, in).ID)
	if res.Status != jobs.RunCompleted {
		t.Fatalf("run: %+v", res)
	}
	for _, a := range res.Plan.Actions {
		u := a.Detail["checkoutUrl"]
		if err := e.sb.VerifyCheckoutURL(u); err != nil {
			t.Errorf("line %d: link %q: %v", a.Line, u, err)
		}
	}
	if u := res.Plan.Actions[0].Detail["checkoutUrl"]; !strings.Contains(u, "creditAmount=500") {
		t.Errorf("the link does not carry the credit amount: %s", u)
	}
	table := jobs.ResultTable(res.Plan, nil, jobs.FileOptions{})
	link := -1
	for i, c := range table.Columns {
		if c.Title == "checkoutUrl" {
			link = i
		}
	}
	if link < 0 || table.Rows[0][link] == "" {
		t.Errorf("result file header %v row %v", table.Columns, table.Rows[0])
	}
}

func TestCouponCheckReportsValidity(t *testing.T) {
	e := newEnv(t)
	type coupon struct {
		Code, EligibleCustomerType string
		PaymentLinkID              *string
		ExpiresAt                  *int64
		MinimumPurchase            *int64
	}
	var good *coupon
	for _, c := range records[coupon](e, "coupons") {
		live := c.ExpiresAt == nil || *c.ExpiresAt > testNow.UnixMilli()+86_400_000
		if c.PaymentLinkID != nil && live && c.MinimumPurchase == nil && c.EligibleCustomerType == "all" {
			good = &c
			break
		}
	}
	if good == nil {
		t.Fatal("no unconditional product coupon in the simulator")
	}
	in := e.file("coupons.csv", "paymentLinkId,couponCode,finalAmount",
		*good.PaymentLinkID+","+good.Code+",100000", *good.PaymentLinkID+",NO-SUCH-CODE,100000")
	reqs := e.requests()
	res := e.apply(e.mustPlan(jobs.CouponCheck, in).ID, func(o *jobs.ApplyOptions) { o.Production = true }) // read-only: no confirmation
	if res.Status != jobs.RunCompleted {
		t.Fatalf("run: %+v", res)
	}
	if a, b := res.Plan.Actions[0].Detail["valid"], res.Plan.Actions[1].Detail["valid"]; a != "true" || b != "false" {
		t.Errorf("valid: %s and %s, want true and false", a, b)
	}
	if n := e.requests() - reqs; n != 2 { // two validations: a check that changes nothing needs no write probe
		t.Errorf("%d requests, want 2", n)
	}
}

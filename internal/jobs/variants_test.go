package jobs_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/billsync/billsync/internal/api"
	"github.com/billsync/billsync/internal/jobs"
	"github.com/billsync/billsync/internal/sandbox"
)

// newEnvWith is newEnv with simulator options changed: the same seeded world (so the shared warehouse
// describes it), answering the way the options say.
func newEnvWith(t *testing.T, mod func(*sandbox.Options)) *env {
	t.Helper()
	o := sandbox.Options{Seed: testSeed, Scale: testScale, Now: testNow, Key: testKey, ReadOnlyKey: roKey}
	mod(&o)
	sb, err := sandbox.New(o)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(sb)
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	return &env{t: t, sb: sb, srv: srv, dir: dir, wh: sharedWarehouse(t), journal: filepath.Join(dir, jobs.JournalFile)}
}

// fault is one way the first send of a plan goes wrong.
type fault struct {
	name    string
	kind    sandbox.FaultKind // injected on the first POST; "" = the process is killed after the send instead
	applied bool              // the write reaches the service's state
}

var faults = []fault{
	{"apply then 500", sandbox.FaultApplyThen500, true},
	{"apply then reset", sandbox.FaultApplyThenReset, true},
	{"apply then hang", sandbox.FaultApplyThenHang, true},
	{"kill -9 between send and journal", "", true},
	{"500 before applying", sandbox.FaultServerError, false},
}

// variant is a simulator that differs from the default in a way the spec allows.
type variant struct {
	name string
	mod  func(*sandbox.Options)
	// unresolved: reading cannot prove the outcome under this variant, so the faulty row must end unresolved.
	unresolved bool
}

func creditVariants() []variant {
	var out []variant
	for _, f := range sandbox.CreditTimeFormats {
		for _, ignore := range []bool{false, true} {
			f, ignore := f, ignore
			name := "times " + string(f)
			if f == "" {
				name = "times millis"
			}
			if ignore {
				name += ", sortOrder ignored"
			}
			out = append(out, variant{name, func(o *sandbox.Options) { o.CreditTimes, o.CreditIgnoresSortOrder = f, ignore },
				f == sandbox.CreditTimeNoZone})
		}
	}
	return out
}

func listVariants() []variant {
	var out []variant
	for _, lo := range sandbox.ListOrders {
		lo := lo
		out = append(out, variant{"lists " + string(lo), func(o *sandbox.Options) { o.ListOrder = lo }, false})
	}
	return out
}

// writeCase plans one kind's two-row file and checks that its effect is on the service exactly once.
type writeCase struct {
	kind     jobs.Kind
	path     string // the write endpoint
	variants []variant
	resendOK bool // sending again is how this kind settles an unknown outcome (absolute values)
	plan     func(e *env) (*jobs.Plan, func(e *env))
}

func writeCases() []writeCase {
	return []writeCase{
		{jobs.CreditTopup, "/credit/v1/credit/customer/add-credit", append(creditVariants(), listVariants()[1:]...), false, planTopups},
		{jobs.EmailFix, "/hl/v1/customer/update", listVariants(), false, planEmailFixes},
		{jobs.InvoiceCreate, "/hl/v1/invoice/create", listVariants(), false, planInvoices},
		{jobs.PaymentEdit, "/hl/v1/payment/edit", listVariants()[:1], true, planPaymentEdits},
		{jobs.LicenseDeactivate, "/saas/v1/license/deactivate", listVariants()[:1], true, planDeactivations},
		{jobs.CheckoutLink, "/credit/v1/credit/generate/immutable/checkout", listVariants()[:1], true, planCheckoutLinks},
		{jobs.CouponCheck, "/hl/v1/coupon/validate", listVariants()[:1], true, planCouponChecks},
	}
}

// planTopups plans two rows of CreditTopup on the simulator and returns the check of their effect.
func planTopups(e *env) (*jobs.Plan, func(*env)) {
	amounts := []int64{700, 300}
	plan, cs, p, before := topupPlan(e, amounts...)
	_, topups0 := e.balance(cs[0].ID, p.ID)
	_, topups1 := e.balance(cs[1].ID, p.ID)
	return plan, func(e *env) {
		e.t.Helper()
		for i, c := range cs {
			got, n := e.balance(c.ID, p.ID)
			if got != before[i]+amounts[i] || n != []int{topups0, topups1}[i]+1 {
				e.t.Errorf("customer %s: balance %d with %d top-ups, want %d + %d by exactly one top-up", c.ID, got, n,
					before[i], amounts[i])
			}
		}
	}
}

// planEmailFixes plans two rows of EmailFix on the simulator and returns the check of their effect.
func planEmailFixes(e *env) (*jobs.Plan, func(*env)) {
	cs := e.customers(2)
	in := e.file("emails.csv", "fromEmail,toEmail", cs[0].Email+",fixed.one@fixed.example", cs[1].Email+",fixed.two@fixed.example")
	return e.mustPlan(jobs.EmailFix, in), func(e *env) {
		e.t.Helper()
		got := map[string]string{}
		for _, c := range records[simCustomer](e, "customers") {
			got[c.ID] = c.Email
		}
		for i, want := range []string{"fixed.one@fixed.example", "fixed.two@fixed.example"} {
			if got[cs[i].ID] != want {
				e.t.Errorf("customer %s has %q, want %q", cs[i].ID, got[cs[i].ID], want)
			}
		}
	}
}

// planInvoices plans two rows of InvoiceCreate on the simulator and returns the check of their effect.
func planInvoices(e *env) (*jobs.Plan, func(*env)) {
	in := e.file("invoices.csv", "name,email,mobile,redirectUrl,description,expiredAt,quantity,rate",
		"Budi Hartono,budi.h@example.com,0812000111,https://shop.example/thanks,Langganan Januari,2026-12-31,2,150000",
		"Sari Dewi,sari.d@example.com,0812000222,https://shop.example/thanks,Langganan Januari,2026-12-31,,99000")
	return e.mustPlan(jobs.InvoiceCreate, in), func(e *env) {
		e.t.Helper()
		type inv struct {
			Description string
			Amount      int64
			Customer    struct{ Email string }
		}
		found := map[string]int{}
		for _, i := range records[inv](e, "invoices") {
			if i.Description == "Langganan Januari" {
				found[fmt.Sprintf("%s %d", i.Customer.Email, i.Amount)]++
			}
		}
		if found["budi.h@example.com 300000"] != 1 || found["sari.d@example.com 99000"] != 1 || len(found) != 2 {
			e.t.Errorf("invoices on the service: %v, want exactly one each", found)
		}
	}
}

// planPaymentEdits plans two rows of PaymentEdit on the simulator and returns the check of their effect.
func planPaymentEdits(e *env) (*jobs.Plan, func(*env)) {
	type pr struct {
		ID, Status, Name, Description string
		Amount                        int64
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
	return e.mustPlan(jobs.PaymentEdit, in), func(e *env) {
		e.t.Helper()
		now := map[string]pr{}
		for _, r := range records[pr](e, "payment_requests") {
			now[r.ID] = r
		}
		if a, b := now[open[0].ID], now[open[1].ID]; a.Amount != 125000 || a.Description != "Cicilan 2" ||
			b.Amount != 75000 || b.Name != "Bu Ani" {
			e.t.Errorf("payment requests after the job: %+v %+v", a, b)
		}
	}
}

// planDeactivations plans two rows of LicenseDeactivate on the simulator and returns the check of their effect.
func planDeactivations(e *env) (*jobs.Plan, func(*env)) {
	saas := map[string]bool{}
	for _, p := range records[simProduct](e, "products") {
		saas[p.ID] = p.Type == "saas" && p.Status == "active"
	}
	var ls []simLicense
	for _, l := range records[simLicense](e, "licenses") {
		if saas[l.ProductID] && l.Status == "ACTIVE" && len(ls) < 2 {
			ls = append(ls, l)
		}
	}
	in := e.file("licenses.csv", "licenseCode,productId", ls[0].LicenseCode+","+ls[0].ProductID,
		ls[1].LicenseCode+","+ls[1].ProductID)
	return e.mustPlan(jobs.LicenseDeactivate, in), func(e *env) {
		e.t.Helper()
		for _, l := range records[simLicense](e, "licenses") {
			if (l.LicenseCode == ls[0].LicenseCode && l.ProductID == ls[0].ProductID ||
				l.LicenseCode == ls[1].LicenseCode && l.ProductID == ls[1].ProductID) && l.Status != "INACTIVE" {
				e.t.Errorf("license %s is %s, want INACTIVE", l.LicenseCode, l.Status)
			}
		}
	}
}

// planCheckoutLinks plans two rows of CheckoutLink on the simulator and returns the check of their effect.
func planCheckoutLinks(e *env) (*jobs.Plan, func(*env)) {
	p := e.product(creditUsage)
	in := e.file("links.csv", "productId,name,email,mobile,creditAmount",
		p.ID+",Rina,rina@example.com,0811,500", p.ID+",Tono,tono@example.com,0812,")
	plan := e.mustPlan(jobs.CheckoutLink, in)
	return plan, func(e *env) {
		e.t.Helper()
		j := e.open()
		defer j.Close()
		got, err := j.LoadPlan(context.Background(), plan.ID)
		if err != nil {
			e.t.Fatal(err)
		}
		for _, a := range got.Actions {
			if err := e.sb.VerifyCheckoutURL(a.Detail["checkoutUrl"]); err != nil {
				e.t.Errorf("row %d: no valid link in the result: %v", a.Seq, err)
			}
		}
	}
}

// planCouponChecks plans two rows of CouponCheck on the simulator and returns the check of their effect.
func planCouponChecks(e *env) (*jobs.Plan, func(*env)) {
	p := e.product(func(p simProduct) bool { return p.Type == "course" })
	in := e.file("coupons.csv", "paymentLinkId,couponCode,finalAmount", p.ID+",KURSUSSAJA10,100000", p.ID+",NONAKTIF10,100000")
	plan := e.mustPlan(jobs.CouponCheck, in)
	return plan, func(e *env) {
		e.t.Helper()
		j := e.open()
		defer j.Close()
		got, err := j.LoadPlan(context.Background(), plan.ID)
		if err != nil {
			e.t.Fatal(err)
		}
		if v1, v2 := got.Actions[0].Detail["valid"], got.Actions[1].Detail["valid"]; v1 != "true" || v2 != "false" {
			e.t.Errorf("coupon results %s and %s, want true and false", v1, v2)
		}
	}
}

// killAfterFirstSend applies the plan in a child process that SIGKILLs itself right after the first request
// returns, before its outcome is journaled.
func killAfterFirstSend(e *env, planID string) {
	e.t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "BILLSYNC_JOBS_CHILD=apply-then-die", "BILLSYNC_TEST_URL="+e.srv.URL,
		"BILLSYNC_TEST_JOURNAL="+e.journal, "BILLSYNC_TEST_PLAN="+planID, "BILLSYNC_TEST_NOW="+e.sb.Now().Format(time.RFC3339Nano))
	err := cmd.Run()
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		e.t.Fatalf("child did not die by SIGKILL: %v", err)
	}
}

// TestExactlyOnceUnderEveryVariant: for every write kind that changes a record, under each simulator variant
// its reconciliation reads through (credit-history time formats and sortOrder ignored for top-ups; every list
// order for the kinds that read lists), each fault on the first send, two more runs at once and one after the
// settle interval: the change is on the service exactly once, nothing is sent again unless a complete read
// proved it absent after the settle interval, and every case reading cannot prove ends unresolved, not sent
// again, with the run reporting it.
func TestExactlyOnceUnderEveryVariant(t *testing.T) {
	for _, wc := range writeCases() {
		for _, v := range wc.variants {
			for _, f := range faults {
				t.Run(fmt.Sprintf("%s/%s/%s", wc.kind, v.name, f.name), func(t *testing.T) {
					e := newEnvWith(t, v.mod)
					if err := e.sb.SetFaults(sandbox.Faults{HangMs: 800}); err != nil {
						t.Fatal(err)
					}
					plan, check := wc.plan(e)
					fast := func(o *jobs.ApplyOptions) {
						c, err := api.New(api.Config{BaseURL: e.srv.URL, APIKey: testKey, Unlimited: true, RequestTimeout: 300 * time.Millisecond,
							MinBackoff: time.Millisecond, MaxBackoff: 5 * time.Millisecond})
						if err != nil {
							t.Fatal(err)
						}
						o.Client = c
					}
					var runs []*jobs.RunResult
					if f.kind == "" {
						killAfterFirstSend(e, plan.ID)
					} else {
						if err := e.sb.FailNext(f.kind, 1, wc.path); err != nil {
							t.Fatal(err)
						}
						runs = append(runs, e.apply(plan.ID, fast))
					}
					for len(runs) < 3 {
						runs = append(runs, e.apply(plan.ID, fast))
					}
					// Three runs in a row, within the settle interval: a row a read did not find is not sent again yet.
					if got := runs[2].Plan.Actions[0]; !f.applied && !wc.resendOK && settles(wc.kind) &&
						(got.State != jobs.Unknown || got.Detail["waiting"] == "" || e.posts(wc.path) != 2) {
						t.Errorf("within the settle interval row 1 is %s (%v) after %d sends; want unknown, waiting, not sent again",
							got.State, got.Detail, e.posts(wc.path))
					}
					// One more after the settle interval.
					e.sb.Advance(jobs.DefaultSettle + time.Minute)
					runs = append(runs, e.apply(plan.ID, fast))
					last := runs[len(runs)-1]
					posts := e.posts(wc.path)
					unresolvedCase := v.unresolved && f.applied
					switch {
					case unresolvedCase:
						if got := last.Plan.Actions[0].State; got != jobs.Unresolved {
							t.Errorf("row 1 is %s, want unresolved: reading cannot prove the outcome", got)
						}
						if last.Unresolved != 1 || last.Status == jobs.RunCompleted {
							t.Errorf("last run: status %s, %d unresolved; want it reported", last.Status, last.Unresolved)
						}
						d := last.Plan.Actions[0].Detail
						if d["read"] == "" || d["missing"] == "" || !strings.Contains(d["settle"], "syncer job resolve "+plan.ID+" 1 ") {
							t.Errorf("unresolved row lacks what was read, what is missing or the command: %v", d)
						}
						if posts != 2 {
							t.Errorf("%d sends, want 2: an unresolved row is never sent again", posts)
						}
					case f.applied && !wc.resendOK:
						if posts != 2 {
							t.Errorf("%d sends, want 2 (one per row, none again)", posts)
						}
					case !f.applied && !wc.resendOK:
						if posts != 3 {
							t.Errorf("%d sends, want 3: the row a complete read proved absent after the settle interval is sent once more", posts)
						}
					}
					if !unresolvedCase && (last.Succeeded != 2 || last.Unresolved != 0) {
						t.Errorf("after four runs: %d succeeded, %d unresolved; states %v", last.Succeeded, last.Unresolved, states(last.Plan))
					}
					check(e)
				})
			}
		}
	}
}

const sandboxServerError = sandbox.FaultServerError

// settles says whether a kind concludes absence from a read, so that the settle interval holds for it.
func settles(k jobs.Kind) bool {
	return k == jobs.CreditTopup || k == jobs.EmailFix || k == jobs.InvoiceCreate
}

// sandboxFaults makes every GET page >= 2 under prefix start one item early (records repeated across pages).
func sandboxFaults(prefix string, fraction float64) sandbox.Faults {
	return sandbox.Faults{PathPrefix: prefix, DuplicatePage: fraction}
}

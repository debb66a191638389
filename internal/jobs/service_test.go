package jobs_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/billsync/billsync/internal/api"
	"github.com/billsync/billsync/internal/jobs"
	"github.com/billsync/billsync/internal/sandbox"
)

const (
	addCreditPath     = "/credit/v1/credit/customer/add-credit"
	creditHistoryPath = "/credit/v1/credit/customer/paginate-credit-history/"
	probePath         = "/hl/v1/coupon/validate"
	threeYears        = 3 * 365 * 24 * 3600
)

// serviceCase is one way the service's clock, identity or timing is off while an add-credit's answer is lost.
type serviceCase struct {
	name   string
	faults sandbox.Faults                     // for the whole test (HangMs is added)
	forced func(e *env)                       // FailNext faults besides the add-credit's
	fail   sandbox.FaultKind                  // on the add-credit of the faulty row
	second bool                               // the faulty row is row 2 (its add-credit is the second), else row 1
	prior  bool                               // every customer already had a top-up of the same amount (an earlier plan)
	want   jobs.State                         // the faulty row's state after the run after the settle interval
	apps   int                                // the faulty row's applications at the service, in this plan
	says   string                             // what its evidence must say (missing, or waiting within the interval)
	within func(t *testing.T, a *jobs.Action) // checks the faulty row after three runs at once, when set
}

func serviceCases() []serviceCase {
	waiting := func(t *testing.T, a *jobs.Action) {
		t.Helper()
		if a.State != jobs.Unknown || !strings.Contains(a.Detail["waiting"], "run apply again after") ||
			a.Detail["settleInterval"] != jobs.DefaultSettle.String() {
			t.Errorf("within the settle interval the row is %s %v; want unknown, waiting, with the interval recorded", a.State, a.Detail)
		}
	}
	return []serviceCase{
		{name: "Date years ahead on every answer", faults: sandbox.Faults{DateOffsetSeconds: threeYears},
			fail: sandbox.FaultApplyThen500, want: jobs.Unresolved, apps: 1, says: "off billsync's"},
		{name: "Date years ahead on the answer before the send", forced: func(e *env) { e.sb.FailNext(sandbox.FaultWildDate, 1, probePath) },
			fail: sandbox.FaultApplyThen500, want: jobs.Succeeded, apps: 1},
		// Armed once the add-credit left: the history read before the send (the repeat check) is not the one meant.
		{name: "Date years ahead on the history's answer", forced: func(e *env) {
			jobs.SetAfterSend(func() { e.sb.FailNext(sandbox.FaultWildDate, 1, creditHistoryPath); jobs.SetAfterSend(func() {}) })
		},
			fail: sandbox.FaultApplyThen500, want: jobs.Unresolved, apps: 1, says: "off billsync's"},
		{name: "Date years behind on every answer, an older top-up of the amount, not applied",
			faults: sandbox.Faults{DateOffsetSeconds: -threeYears}, prior: true,
			fail: sandbox.FaultServerError, want: jobs.Unresolved, apps: 0, says: "off billsync's"},
		{name: "Date years behind on one answer, an older top-up of the amount, not applied",
			faults: sandbox.Faults{WildDateSeconds: -threeYears}, forced: func(e *env) { e.sb.FailNext(sandbox.FaultWildDate, 1, probePath) },
			prior: true, fail: sandbox.FaultServerError, want: jobs.Succeeded, apps: 1},
		{name: "history answers another customer's entries instead, not applied",
			faults: sandbox.Faults{PathPrefix: creditHistoryPath, OtherCustomerCredit: 1},
			fail:   sandbox.FaultServerError, want: jobs.Unresolved, apps: 0, says: "entries of other customers"},
		{name: "history holds another customer's entries too, applied",
			faults: sandbox.Faults{PathPrefix: creditHistoryPath, ForeignCredit: 1},
			fail:   sandbox.FaultApplyThen500, want: jobs.Unresolved, apps: 1, says: "entries of other customers"},
		{name: "history holds the neighbour row's new entry of the same amount, not applied",
			faults: sandbox.Faults{PathPrefix: creditHistoryPath, ForeignCredit: 1}, second: true,
			fail: sandbox.FaultServerError, want: jobs.Unresolved, apps: 0, says: "entries of other customers"},
		{name: "an entry gives its id twice", faults: sandbox.Faults{PathPrefix: creditHistoryPath, RepeatedKey: 1},
			fail: sandbox.FaultApplyThen500, want: jobs.Unresolved, apps: 1, says: `gives "id" twice`},
		{name: "the new entry's createdAt in epoch seconds", faults: sandbox.Faults{TopupEpochSeconds: true},
			fail: sandbox.FaultApplyThen500, want: jobs.Unresolved, apps: 1, says: "looks like epoch seconds"},
		{name: "the new entry shows 10 s after the write, reruns at once", faults: sandbox.Faults{TopupVisibleAfterMs: 10_000},
			fail: sandbox.FaultApplyThen500, want: jobs.Succeeded, apps: 1, within: waiting},
		{name: "a write that shows late, not applied", faults: sandbox.Faults{TopupVisibleAfterMs: 10_000},
			fail: sandbox.FaultServerError, want: jobs.Succeeded, apps: 1, within: waiting},
	}
}

// TestServiceClockIdentityTiming: each way the service's clock, identity or timing is off, with the faulty
// row's add-credit applied or not and its answer lost, then two more applies at once and one after the settle
// interval: every top-up lands exactly once at the service or stays unresolved, and nothing lost is marked
// succeeded (the service's own ledger is counted).
func TestServiceClockIdentityTiming(t *testing.T) {
	for _, sc := range serviceCases() {
		t.Run(sc.name, func(t *testing.T) {
			e := newEnv(t)
			amounts := []int64{700, 700} // one amount: a neighbour's entry could pass for the faulty row's
			plan, cs, p, _ := topupPlan(e, amounts...)
			if sc.prior {
				if res := e.apply(plan.ID); res.Status != jobs.RunCompleted {
					t.Fatalf("earlier top-up: %+v", res)
				}
				e.sb.Advance(time.Hour)
				plan = e.mustPlan(jobs.CreditTopup, e.file("again.csv", "customerId,productId,amount",
					fmt.Sprintf("%s,%s,700", cs[0].ID, p.ID), fmt.Sprintf("%s,%s,700", cs[1].ID, p.ID)),
					func(o *jobs.PlanOptions) { o.Again = true })
			}
			topups := func() []int {
				out := make([]int, len(cs))
				for i, c := range cs {
					_, out[i] = e.balance(c.ID, p.ID)
				}
				return out
			}
			start := topups()
			f := sc.faults
			f.HangMs = 800
			if err := e.sb.SetFaults(f); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { jobs.SetAfterSend(func() {}) })
			if sc.forced != nil {
				sc.forced(e)
			}
			row := 0
			if sc.second {
				row = 1
				sent := 0
				jobs.SetAfterSend(func() {
					if sent++; sent == 1 {
						e.sb.FailNext(sc.fail, 1, addCreditPath)
					}
				})
				t.Cleanup(func() { jobs.SetAfterSend(func() {}) })
			} else if err := e.sb.FailNext(sc.fail, 1, addCreditPath); err != nil {
				t.Fatal(err)
			}
			apps := func() []int {
				now := topups()
				for i := range now {
					now[i] -= start[i]
				}
				return now
			}
			check := func(when string, res *jobs.RunResult) {
				t.Helper()
				for i, a := range res.Plan.Actions {
					n := apps()[i]
					if n > 1 || a.State == jobs.Succeeded && n != 1 {
						t.Errorf("%s: row %d is %s with %d applications at the service", when, a.Seq, a.State, n)
					}
				}
			}
			var res *jobs.RunResult
			for run := 1; run <= 3; run++ {
				res = e.apply(plan.ID)
				check(fmt.Sprintf("run %d", run), res)
			}
			if sc.within != nil {
				sc.within(t, res.Plan.Actions[row])
			}
			e.sb.Advance(jobs.DefaultSettle + time.Minute)
			res = e.apply(plan.ID)
			check("the run after the settle interval", res)
			a := res.Plan.Actions[row]
			if a.State != sc.want || apps()[row] != sc.apps {
				t.Errorf("the faulty row is %s with %d applications, want %s with %d; evidence %v", a.State, apps()[row], sc.want,
					sc.apps, a.Detail)
			}
			if sc.says != "" && !strings.Contains(a.Detail["missing"], sc.says) {
				t.Errorf("the evidence does not say %q: %v", sc.says, a.Detail)
			}
			if other := res.Plan.Actions[1-row]; other.State != jobs.Succeeded || apps()[1-row] != 1 {
				t.Errorf("the other row is %s with %d applications", other.State, apps()[1-row])
			}
			t.Logf("%s: faulty row %s, %d application(s); %s %s", sc.name, a.State, apps()[row], a.Detail["reconciled"], a.Detail["missing"])
		})
	}
}

// resolveOpts reads the simulator with billsync's clock on the simulator's.
func (e *env) resolveOpts(mod ...func(*jobs.ResolveOptions)) jobs.ResolveOptions {
	o := jobs.ResolveOptions{Client: e.client(testKey), Now: e.sb.Now}
	for _, m := range mod {
		m(&o)
	}
	return o
}

func (e *env) resolve(planID string, seq int, outcome, why string, mod ...func(*jobs.ResolveOptions)) (*jobs.Action, error) {
	e.t.Helper()
	j := e.open()
	defer j.Close()
	return j.Resolve(context.Background(), planID, seq, outcome, "siti", why, e.resolveOpts(mod...))
}

// TestResolveAgainstEvidence: a person's sequence. The add-credit applied, its answer lost, the history's
// times without a zone: unresolved with the candidate entry. not-applied is refused while the entry shows
// (naming it and saying applied fits); -force journals it as forced; applied is refused where the read shows
// no candidate at all; after not-applied the next apply reads once more and holds the row when an entry now
// shows.
func TestResolveAgainstEvidence(t *testing.T) {
	t.Run("not-applied while the candidate shows", func(t *testing.T) {
		e := newEnvWith(t, func(o *sandbox.Options) { o.CreditTimes = sandbox.CreditTimeNoZone })
		plan, cs, p, _ := topupPlan(e, 2500)
		e.sb.FailNext(sandbox.FaultApplyThen500, 1, addCreditPath)
		if res := e.apply(plan.ID); res.Plan.Actions[0].State != jobs.Unresolved {
			t.Fatalf("row 1 is %s, want unresolved", res.Plan.Actions[0].State)
		}
		e.sb.Advance(jobs.DefaultSettle + time.Minute)
		_, err := e.resolve(plan.ID, 1, jobs.ResolvedNotApplied, "tidak ada di dasbor")
		if !errors.Is(err, jobs.ErrContradicted) || !strings.Contains(err.Error(), "entry ") || !strings.Contains(err.Error(), "2500") ||
			!strings.Contains(err.Error(), "applied fits") || !strings.Contains(err.Error(), "-force") {
			t.Fatalf("not-applied while the entry shows: %v", err)
		}
		t.Logf("refused: %v", err)
		if h := history(e, plan.ID, 1); h != "planned sent unknown unresolved" {
			t.Errorf("a refused resolution was journaled: %q", h)
		}
		a, err := e.resolve(plan.ID, 1, jobs.ResolvedNotApplied, "the entry is a dashboard top-up of the same amount",
			func(o *jobs.ResolveOptions) { o.Force = true })
		if err != nil || a.State != jobs.NotApplied || a.Detail["forced"] != "true" || a.Detail["contradicted"] == "" ||
			a.Detail["candidates"] == "" {
			t.Fatalf("forced resolution: %v %+v", err, a)
		}
		j := e.open()
		var forced, by string
		err = j.DB().QueryRow(`SELECT detail->>'$.forced', detail->>'$.resolvedBy' FROM job_actions
			WHERE plan_id = ? AND seq = 1 AND state = 'not_applied' AND run_id IS NULL`, plan.ID).Scan(&forced, &by)
		j.Close()
		if err != nil || forced != "true" || by != "siti" {
			t.Errorf("the journal does not say it was forced, and by whom: %q %q %v", forced, by, err)
		}
		// The person overrode what they saw: the next apply sends it (the entry they saw is not new evidence).
		res := e.apply(plan.ID)
		if _, n := e.balance(cs[0].ID, p.ID); res.Plan.Actions[0].State != jobs.Succeeded || e.posts(addCreditPath) != 2 || n < 2 {
			t.Errorf("after the forced not-applied: %s, %d add-credits", res.Plan.Actions[0].State, e.posts(addCreditPath))
		}
	})

	t.Run("applied without any candidate, then not-applied, then an entry shows before the send", func(t *testing.T) {
		e := newEnv(t)
		plan, cs, p, _ := topupPlan(e, 900)
		e.sb.SetFaults(sandbox.Faults{PathPrefix: creditHistoryPath, OtherCustomerCredit: 1})
		e.sb.FailNext(sandbox.FaultServerError, 1, addCreditPath)
		e.apply(plan.ID)
		e.sb.SetFaults(sandbox.Faults{})
		e.sb.Advance(jobs.DefaultSettle + time.Minute)
		_, err := e.resolve(plan.ID, 1, jobs.ResolvedApplied, "saldo terlihat")
		if !errors.Is(err, jobs.ErrContradicted) || !strings.Contains(err.Error(), "no record") {
			t.Fatalf("applied without any candidate: %v", err)
		}
		if _, err := e.resolve(plan.ID, 1, jobs.ResolvedNotApplied, "tidak ada top-up 900 di riwayat"); err != nil {
			t.Fatalf("not-applied with nothing showing: %v", err)
		}
		// Someone tops the customer up by hand meanwhile: the next apply reads first and holds the row.
		c := e.client(testKey)
		if _, err := c.AddCredit(context.Background(), api.AddCreditRequest{CustomerID: cs[0].ID, ProductID: p.ID, Amount: 900}); err != nil {
			t.Fatal(err)
		}
		sends := e.posts(addCreditPath)
		res := e.apply(plan.ID)
		a := res.Plan.Actions[0]
		if a.State != jobs.Unresolved || e.posts(addCreditPath) != sends || !strings.Contains(a.Detail["reconciled"], "resolved as not applied by siti") {
			t.Errorf("after not-applied with an entry showing: %s, %d sends; %v", a.State, e.posts(addCreditPath)-sends, a.Detail)
		}
	})

	t.Run("not-applied within the settle interval", func(t *testing.T) {
		e := newEnv(t)
		plan, _, _, _ := topupPlan(e, 400)
		e.sb.SetFaults(sandbox.Faults{TopupVisibleAfterMs: 10_000})
		e.sb.FailNext(sandbox.FaultApplyThen500, 1, addCreditPath)
		e.apply(plan.ID)
		_, err := e.resolve(plan.ID, 1, jobs.ResolvedNotApplied, "belum terlihat")
		if !errors.Is(err, jobs.ErrContradicted) || !strings.Contains(err.Error(), "run apply again after") {
			t.Fatalf("not-applied within the settle interval: %v", err)
		}
	})
}

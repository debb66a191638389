package jobs_test

import (
	"context"
	"errors"
	"fmt"
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

// The test binary re-executes itself as a job process that SIGKILLs itself right after a request returns
// and before its outcome is journaled: the worst moment for exactly-once.
func TestMain(m *testing.M) {
	if os.Getenv("BILLSYNC_JOBS_CHILD") == "apply-then-die" {
		os.Exit(childApply())
	}
	code := m.Run()
	if whPath != "" {
		os.RemoveAll(filepath.Dir(whPath)) // sharedWarehouse's directory outlives every test
	}
	os.Exit(code)
}

func childApply() int {
	jobs.SetAfterSend(func() { syscall.Kill(os.Getpid(), syscall.SIGKILL) })
	c, err := api.New(api.Config{BaseURL: os.Getenv("BILLSYNC_TEST_URL"), APIKey: testKey, Unlimited: true})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	j, err := jobs.OpenJournal(context.Background(), os.Getenv("BILLSYNC_TEST_JOURNAL"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	// billsync's clock is the simulator's, which stands still between the parent's calls.
	now, err := time.Parse(time.RFC3339Nano, os.Getenv("BILLSYNC_TEST_NOW"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	_, err = j.Apply(context.Background(), os.Getenv("BILLSYNC_TEST_PLAN"), jobs.ApplyOptions{Client: c, Account: "test",
		Now: func() time.Time { return now }})
	fmt.Fprintln(os.Stderr, "child was not killed:", err)
	return 3
}

// topupFile plans one top-up per customer of the given amounts and returns the plan with the balances before.
func topupPlan(e *env, amounts ...int64) (*jobs.Plan, []simCustomer, simProduct, []int64) {
	e.t.Helper()
	cs := e.customers(len(amounts))
	p := e.product(creditUsage)
	lines := []string{"customerId,productId,amount"}
	before := make([]int64, len(cs))
	for i, c := range cs {
		lines = append(lines, fmt.Sprintf("%s,%s,%d", c.ID, p.ID, amounts[i]))
		before[i], _ = e.balance(c.ID, p.ID)
	}
	return e.mustPlan(jobs.CreditTopup, e.file("topup.csv", lines...)), cs, p, before
}

// assertOnce checks that every customer's balance rose by exactly its amount, by exactly one top-up entry.
func assertOnce(e *env, cs []simCustomer, p simProduct, before []int64, amounts ...int64) {
	e.t.Helper()
	for i, c := range cs {
		got, _ := e.balance(c.ID, p.ID)
		if got != before[i]+amounts[i] {
			e.t.Errorf("customer %s: balance %d, want %d + %d exactly once", c.ID, got, before[i], amounts[i])
		}
	}
	if n := e.posts("/credit/v1/credit/customer/add-credit"); n != len(cs) {
		e.t.Errorf("%d add-credit requests, want %d (one per row)", n, len(cs))
	}
}

// history is the journaled state sequence of one action.
func history(e *env, planID string, seq int) string {
	e.t.Helper()
	j := e.open()
	defer j.Close()
	rows, err := j.DB().Query(`SELECT state FROM job_actions WHERE plan_id = ? AND seq = ? ORDER BY id`, planID, seq)
	if err != nil {
		e.t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		rows.Scan(&s)
		out = append(out, s)
	}
	return strings.Join(out, " ")
}

func TestTopupUnknownOutcomeIsReconciledNotResent(t *testing.T) {
	for _, kind := range []sandbox.FaultKind{sandbox.FaultApplyThen500, sandbox.FaultApplyThenReset, sandbox.FaultApplyThenHang} {
		t.Run(string(kind), func(t *testing.T) {
			e := newEnv(t)
			if err := e.sb.SetFaults(sandbox.Faults{HangMs: 1500}); err != nil {
				t.Fatal(err)
			}
			amounts := []int64{700, 300}
			plan, cs, p, before := topupPlan(e, amounts...)
			if err := e.sb.FailNext(kind, 1, "/credit/v1/credit/customer/add-credit"); err != nil {
				t.Fatal(err)
			}
			res := e.apply(plan.ID, func(o *jobs.ApplyOptions) {
				c, _ := api.New(api.Config{BaseURL: e.srv.URL, APIKey: testKey, Unlimited: true, RequestTimeout: 500 * time.Millisecond})
				o.Client = c
			})
			if res.Status != jobs.RunCompleted || res.Sent != 2 || res.Reconciled != 1 {
				t.Errorf("run: status %s, sent %d, reconciled %d", res.Status, res.Sent, res.Reconciled)
			}
			assertOnce(e, cs, p, before, amounts...)
			if h := history(e, plan.ID, 1); h != "planned sent unknown succeeded" {
				t.Errorf("journal of the failed action: %q", h)
			}
			if d := res.Plan.Actions[0].Detail; d["claimed"] == "" || !strings.Contains(d["reconciled"], "ledger entry") {
				t.Errorf("reconciliation evidence: %v", d)
			}
			// A rerun sends nothing more.
			e.apply(plan.ID)
			assertOnce(e, cs, p, before, amounts...)
		})
	}
}

func TestTopupKilledBetweenSendAndJournal(t *testing.T) {
	e := newEnv(t)
	amounts := []int64{400, 600, 800}
	plan, cs, p, before := topupPlan(e, amounts...)

	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "BILLSYNC_JOBS_CHILD=apply-then-die", "BILLSYNC_TEST_URL="+e.srv.URL,
		"BILLSYNC_TEST_JOURNAL="+e.journal, "BILLSYNC_TEST_PLAN="+plan.ID, "BILLSYNC_TEST_NOW="+e.sb.Now().Format(time.RFC3339Nano))
	cmd.Stderr = os.Stderr
	err := cmd.Run()
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("child did not die by SIGKILL: %v", err)
	}
	if got, _ := e.balance(cs[0].ID, p.ID); got != before[0]+amounts[0] {
		t.Fatalf("the child's top-up did not reach the service: balance %d", got)
	}
	if h := history(e, plan.ID, 1); h != "planned sent" {
		t.Fatalf("after the kill the journal says %q, want the action left sent", h)
	}

	res := e.apply(plan.ID)
	if res.Status != jobs.RunCompleted || res.Reconciled != 1 || res.Sent != 2 {
		t.Errorf("rerun after the kill: status %s, reconciled %d, sent %d", res.Status, res.Reconciled, res.Sent)
	}
	assertOnce(e, cs, p, before, amounts...)
	if h := history(e, plan.ID, 1); h != "planned sent succeeded" {
		t.Errorf("journal of the killed action: %q", h)
	}
}

func TestTopupPartialRunThenRerun(t *testing.T) {
	e := newEnv(t)
	amounts := []int64{100, 200, 300}
	plan, cs, p, before := topupPlan(e, amounts...)

	first := e.apply(plan.ID, func(o *jobs.ApplyOptions) { o.Max = 1 })
	if first.Status != jobs.RunIncomplete || first.Sent != 1 || !strings.Contains(first.Stopped, "-max 1") {
		t.Fatalf("capped run: %+v", first)
	}
	if got := states(first.Plan); got[2] != jobs.Succeeded || got[3] != jobs.Planned || got[4] != jobs.Planned {
		t.Fatalf("after the capped run: %v", got)
	}
	second := e.apply(plan.ID)
	if second.Status != jobs.RunCompleted || second.Sent != 2 {
		t.Fatalf("rerun: %+v", second)
	}
	assertOnce(e, cs, p, before, amounts...)
}

func TestReadOnlyKeyFailsBeforeSending(t *testing.T) {
	e := newEnv(t)
	plan, cs, p, before := topupPlan(e, 100)
	_, err := e.applyWith(plan.ID, roKey)
	if err == nil || !strings.Contains(err.Error(), "403") || !strings.Contains(err.Error(), "read-write key") {
		t.Fatalf("apply with a read-only key: %v", err)
	}
	if strings.Contains(err.Error(), roKey) {
		t.Error("the error shows the API key")
	}
	if n := e.posts("/credit/"); n != 0 {
		t.Errorf("%d credit requests sent with a read-only key", n)
	}
	if got, _ := e.balance(cs[0].ID, p.ID); got != before[0] {
		t.Errorf("balance changed: %d", got)
	}
	// The plan is untouched: with the right key it goes through.
	if res := e.apply(plan.ID); res.Status != jobs.RunCompleted {
		t.Errorf("apply with the read-write key afterwards: %+v", res)
	}
}

// TestProductionNeedsConfirmation: an approved plan still needs -confirm-production on the hand path.
func TestProductionNeedsConfirmation(t *testing.T) {
	e := newEnv(t)
	plan, _, _, _ := topupPlan(e, 100)
	j := e.open()
	if _, err := j.Approve(context.Background(), plan.ID, jobs.ApproveOptions{By: "siti", Account: "test", BaseURL: e.srv.URL,
		Production: true}); err != nil {
		t.Fatal(err)
	}
	j.Close()
	reqs := e.requests()
	_, err := e.applyWith(plan.ID, testKey, func(o *jobs.ApplyOptions) { o.Production = true })
	if !errors.Is(err, jobs.ErrNeedsConfirmation) {
		t.Fatalf("apply to production without confirmation: %v", err)
	}
	if e.requests() != reqs {
		t.Errorf("%d requests sent without confirmation", e.requests()-reqs)
	}
	res := e.apply(plan.ID, func(o *jobs.ApplyOptions) { o.Production, o.Confirmed = true, true })
	if res.Status != jobs.RunCompleted {
		t.Errorf("confirmed run: %+v", res)
	}
}

func TestWrongAccountRefused(t *testing.T) {
	e := newEnv(t)
	plan, _, _, _ := topupPlan(e, 100)
	_, err := e.applyWith(plan.ID, testKey, func(o *jobs.ApplyOptions) { o.Account = "other" })
	if err == nil || !strings.Contains(err.Error(), `account "test"`) {
		t.Fatalf("apply under another account: %v", err)
	}
}

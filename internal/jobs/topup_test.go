package jobs_test

import (
	"fmt"
	"testing"

	"github.com/billsync/billsync/internal/jobs"
)

func TestCreditTopupPlanApplyRerun(t *testing.T) {
	e := newEnv(t)
	cs := e.customers(3)
	p := e.product(creditUsage)
	before := make([]int64, len(cs))
	for i, c := range cs {
		before[i], _ = e.balance(c.ID, p.ID)
	}
	in := e.file("topup.csv", "customerId,productId,amount",
		fmt.Sprintf("%s,%s,500", cs[0].ID, p.ID),
		fmt.Sprintf("%s,%s,1000", cs[1].ID, p.ID),
		fmt.Sprintf("%s,%s,250", cs[2].ID, p.ID))

	reqs := e.requests()
	plan := e.mustPlan(jobs.CreditTopup, in)
	if e.requests() != reqs {
		t.Fatalf("planning sent %d requests, want none", e.requests()-reqs)
	}
	if len(plan.Actions) != 3 || plan.Actions[0].Request["amount"] != "500" {
		t.Fatalf("plan actions: %+v", plan.Actions)
	}
	if got, want := plan.Actions[0].Current["balance"], fmt.Sprint(before[0]); got != want {
		t.Errorf("plan shows current balance %s, want %s", got, want)
	}

	res := e.apply(plan.ID)
	if res.Status != jobs.RunCompleted || res.Sent != 3 || res.Succeeded != 3 {
		t.Fatalf("run: %+v", res)
	}
	for i, c := range cs {
		got, _ := e.balance(c.ID, p.ID)
		want := before[i] + []int64{500, 1000, 250}[i]
		if got != want {
			t.Errorf("customer %d balance %d, want %d", i, got, want)
		}
		if a := res.Plan.Actions[i]; a.Detail["balance"] != fmt.Sprint(want) {
			t.Errorf("action %d journaled balance %q, want %d", i, a.Detail["balance"], want)
		}
	}

	// Rerunning the plan, or planning and applying the same file again, sends nothing.
	posts := e.posts("/credit/")
	if again := e.apply(plan.ID); again.Status != jobs.RunNothingToDo || again.Sent != 0 {
		t.Errorf("rerun of a finished plan: %+v", again)
	}
	same := e.mustPlan(jobs.CreditTopup, in)
	if same.ID != plan.ID || !same.Existing {
		t.Errorf("planning the same file again made plan %s (existing %v), want %s", same.ID, same.Existing, plan.ID)
	}
	e.apply(same.ID)
	if n := e.posts("/credit/"); n != posts {
		t.Errorf("%d credit requests after reruns, want none", n-posts)
	}
	for i, c := range cs {
		if got, _ := e.balance(c.ID, p.ID); got != before[i]+[]int64{500, 1000, 250}[i] {
			t.Errorf("customer %d balance changed on rerun: %d", i, got)
		}
	}

	// The balances the service reported are in the journal for the finance reports.
	j := e.open()
	defer j.Close()
	var n int
	var sum float64
	if err := j.DB().QueryRow(`SELECT count(*), sum(balance)::DOUBLE FROM credit_balance_reports
		WHERE account = 'test' AND job_run_id = ?`, res.RunID).Scan(&n, &sum); err != nil {
		t.Fatal(err)
	}
	if n != 3 || int64(sum) != before[0]+before[1]+before[2]+1750 {
		t.Errorf("credit_balance_reports: %d rows summing %v", n, sum)
	}
}

package jobs_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/billsync/billsync/internal/jobs"
)

// TestCreditSends: the syncer's list of customers billsync sent credit to is empty without a
// journal and for a plan never applied, and names every sent add-credit after an apply.
func TestCreditSends(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	if got, err := jobs.CreditSends(ctx, e.journal); err != nil || got != nil {
		t.Fatalf("no journal: %v, %v; want none, no error", got, err)
	}
	cs := e.customers(2)
	p := e.product(creditUsage)
	plan := e.mustPlan(jobs.CreditTopup, e.file("topup.csv", "customerId,productId,amount",
		fmt.Sprintf("%s,%s,500", cs[0].ID, p.ID), fmt.Sprintf("%s,%s,700", cs[1].ID, p.ID)))
	if got, err := jobs.CreditSends(ctx, e.journal); err != nil || len(got) != 0 {
		t.Fatalf("planned, not sent: %v, %v; want none", got, err)
	}
	start := e.sb.Now().Add(-time.Second) // billsync's clock in these tests is the simulator's
	if res := e.apply(plan.ID); res.Sent != 2 {
		t.Fatalf("run: %+v", res)
	}
	got, err := jobs.CreditSends(ctx, e.journal)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, s := range got {
		ids = append(ids, s.CustomerID)
		if s.Account != "test" || s.At.Before(start) {
			t.Errorf("send %+v: want account test, at or after %v", s, start)
		}
	}
	want := []string{cs[0].ID, cs[1].ID}
	slices.Sort(want)
	if !slices.Equal(ids, want) {
		t.Errorf("sends to %v, want %v", ids, want)
	}
}

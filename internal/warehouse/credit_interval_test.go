package warehouse

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/billsync/billsync/internal/entity"
	"github.com/billsync/billsync/internal/syncdata"
)

// TestCreditTargetsPace: a customer is read again after its own mean gap between entries, not
// after the time its credit happened to be unchanged; one whose ledger leaves it nothing to
// spend waits for a reason or the bound. Everyone was read a day ago.
func TestCreditTargetsPace(t *testing.T) {
	ctx := context.Background()
	b := startBuild(t, newPath(t))
	prev := t0.Add(-day)
	run := startRun(t, b, "acct")
	custs := []string{"daily", "weekly", "spent-out", "debits-only"}
	var rows []string
	for _, c := range custs {
		rows = append(rows, fmt.Sprintf(`{"id":%q,"createdAt":1700000000000}`, c))
	}
	load(t, b, entity.Products, run, prev, true, `{"id":"credit-prod","type":"saas","subType":"credit_usage"}`)
	load(t, b, entity.Customers, run, prev, true, rows...)
	var ledger []string
	add := func(c string, i int, at time.Time, credit, debit int) {
		ledger = append(ledger, ledgerRow(fmt.Sprintf("%s-%d", c, i), c, "credit-prod", at, credit, debit, time.Time{}))
	}
	add("daily", 0, prev.Add(-30*day), 1000, 0)
	add("weekly", 0, prev.Add(-85*day), 1000, 0)
	add("spent-out", 0, prev.Add(-30*day), 30, 0)
	for i := 1; i <= 30; i++ {
		add("daily", i, prev.Add(-time.Duration(i)*day+time.Hour), 0, 1)
		add("spent-out", i, prev.Add(-time.Duration(i)*day+time.Hour), 0, 1) // the last one empties it
		add("debits-only", i, prev.Add(-time.Duration(i)*day+time.Hour), 0, 1)
	}
	for i := 1; i <= 12; i++ { // every week, the latest just before the last read
		add("weekly", i, prev.Add(-time.Duration(i-1)*7*day-time.Hour), 0, 1)
	}
	load(t, b, entity.CreditLedger, run, prev, false, ledger...)
	if err := b.markCreditFetched(ctx, "acct", custs, nil, prev, run.ID); err != nil {
		t.Fatal(err)
	}
	if err := b.finishRun(ctx, run.ID, syncdata.RunStats{Status: "succeeded"}); err != nil {
		t.Fatal(err)
	}
	got, err := b.creditTargets(ctx, "acct", syncdata.CreditPlan{Now: t0, Refresh: 7 * day}, 100)
	if err != nil {
		t.Fatal(err)
	}
	reasons := map[string]string{}
	for _, c := range got {
		reasons[c.CustomerID] = c.Reason
	}
	want := map[string]string{"daily": "interval", "debits-only": "interval"}
	for _, c := range custs {
		if reasons[c] != want[c] {
			t.Errorf("%s: reason %q, want %q", c, reasons[c], want[c])
		}
	}
}

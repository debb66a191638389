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

// TestCreditTargetsPaceUnderServiceClockAhead: the last read ran under a service clock 48 hours
// ahead of this machine's, set aside (its time this machine's, the offset in sync_runs), and so
// does this run, a day later. A customer using credit every 8 hours since 40 hours before the
// read, by the service's dates, is read at its pace (after a day, the shortest interval): on main
// its entries, all dated after the read's time on this machine's clock, were not history at all,
// and it waited for the 7-day bound. Expiries are the service's dates too: one that passed by the
// service's clock before the read is no signal (on main it was, each run until the next read);
// one that passed since, by the service's clock now, is (on main, not until this machine's clock
// reached it two days later). A read whose run had no Date header cannot be put on the service's
// clock: that customer waits for the bound (or a signal), said in docs/sync.md. A run whose Date
// a proxy moved 5 years ahead over records dated right flagged nothing: its reads stay as they
// are, and that customer's pace reads it too.
func TestCreditTargetsPaceUnderServiceClockAhead(t *testing.T) {
	ctx := context.Background()
	const ahead = 48 * time.Hour
	b := startBuild(t, newPath(t))
	prev := t0.Add(-day) // the last read, on this machine's clock
	svc := prev.Add(ahead)
	run := startRun(t, b, "acct")
	if err := b.setRunClock(ctx, run.ID, syncdata.RunClock{Source: syncdata.ClockMachine, Offset: ahead}); err != nil {
		t.Fatal(err)
	}
	custs := []string{"paced", "expired-before-read", "expires-since", "paced-no-date", "paced-proxy-date"}
	var rows []string
	for _, c := range custs {
		rows = append(rows, fmt.Sprintf(`{"id":%q,"createdAt":1700000000000}`, c))
	}
	load(t, b, entity.Products, run, prev, true, `{"id":"credit-prod","type":"saas","subType":"credit_usage"}`)
	load(t, b, entity.Customers, run, prev, true, rows...)
	var ledger []string
	add := func(c string, i int, at time.Time, credit, debit int, expires time.Time) {
		ledger = append(ledger, ledgerRow(fmt.Sprintf("%s-%d", c, i), c, "credit-prod", at, credit, debit, expires))
	}
	for _, c := range []string{"paced", "paced-no-date"} {
		add(c, 0, svc.Add(-40*time.Hour), 1000, 0, time.Time{})
		for i := 1; i <= 5; i++ {
			add(c, i, svc.Add(-40*time.Hour+time.Duration(i)*8*time.Hour-time.Minute), 0, 1, time.Time{})
		}
	}
	add("expired-before-read", 0, svc.Add(-10*day), 1000, 0, prev.Add(20*time.Hour))
	add("expires-since", 0, svc.Add(-10*day), 1000, 0, svc.Add(12*time.Hour))
	for i := 1; i <= 5; i++ { // dated right under a Date a proxy moved 5 years ahead
		add("paced-proxy-date", i, prev.Add(-40*time.Hour+time.Duration(i)*8*time.Hour-time.Minute), 0, 1, time.Time{})
	}
	add("paced-proxy-date", 0, prev.Add(-40*time.Hour), 1000, 0, time.Time{})
	load(t, b, entity.CreditLedger, run, svc, false, ledger...)
	// the run found the records dated ahead of this machine's clock: flagged, the evidence
	if n, err := b.flagServiceClock(ctx, run, prev, prev.Add(5*time.Minute), "test"); err != nil || n == 0 {
		t.Fatalf("%d records flagged, err %v", n, err)
	}
	if err := b.markCreditFetched(ctx, "acct", custs[:3], nil, prev, run.ID); err != nil {
		t.Fatal(err)
	}
	if err := b.finishRun(ctx, run.ID, syncdata.RunStats{Status: "partial"}); err != nil {
		t.Fatal(err)
	}
	noDate := startRun(t, b, "acct")
	if err := b.setRunClock(ctx, noDate.ID, syncdata.RunClock{Source: syncdata.ClockMachine, NoDate: true}); err != nil {
		t.Fatal(err)
	}
	if err := b.markCreditFetched(ctx, "acct", custs[3:], nil, prev, noDate.ID); err != nil {
		t.Fatal(err)
	}
	if err := b.finishRun(ctx, noDate.ID, syncdata.RunStats{Status: "succeeded"}); err != nil {
		t.Fatal(err)
	}
	proxy := startRun(t, b, "acct")
	if err := b.setRunClock(ctx, proxy.ID, syncdata.RunClock{Source: syncdata.ClockMachine, Offset: 5 * 365 * day}); err != nil {
		t.Fatal(err)
	}
	if err := b.markCreditFetched(ctx, "acct", custs[4:], nil, prev, proxy.ID); err != nil {
		t.Fatal(err)
	}
	if err := b.finishRun(ctx, proxy.ID, syncdata.RunStats{Status: "partial"}); err != nil {
		t.Fatal(err)
	}
	got, err := b.creditTargets(ctx, "acct", syncdata.CreditPlan{Now: t0, ServiceAhead: ahead, Refresh: 7 * day}, 100)
	if err != nil {
		t.Fatal(err)
	}
	reasons := map[string]string{}
	for _, c := range got {
		reasons[c.CustomerID] = c.Reason
	}
	want := map[string]string{"paced": "interval", "expires-since": "signal", "paced-proxy-date": "interval"}
	for _, c := range custs {
		if reasons[c] != want[c] {
			t.Errorf("%s: reason %q, want %q", c, reasons[c], want[c])
		}
	}
}

package warehouse

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/billsync/billsync/internal/entity"
	"github.com/billsync/billsync/internal/syncdata"
)

const day = 24 * time.Hour

// ledgerRow is a credit-history record of customer at created (ISO, as the API sends it).
func ledgerRow(id, customer, product string, created time.Time, credit, debit int, expires time.Time) string {
	exp := "null"
	if !expires.IsZero() {
		exp = `"` + expires.Format(time.RFC3339) + `"`
	}
	return fmt.Sprintf(`{"id":%q,"customerId":%q,"productId":%q,"createdAt":%q,"credit":%d,"debit":%d,"expiredAt":%s}`,
		id, customer, product, created.Format(time.RFC3339), credit, debit, exp)
}

// TestCreditTargetsReasons: the previous run read every customer a day before now; this run's
// lists brought what each customer's case says. A customer with any kind of signal is read now,
// one whose own history says entries arrive often is read after its interval, one without
// either waits for the refresh bound, which holds even one run before it would pass.
func TestCreditTargetsReasons(t *testing.T) {
	ctx := context.Background()
	b := startBuild(t, newPath(t))
	prev := t0.Add(-day) // the previous run's observation time, when everyone was read
	run1 := startRun(t, b, "acct")
	customers := []string{"quiet", "never", "unpaid-credit", "unpaid-plain", "paid-credit", "invoice-credit",
		"invoice-plain", "hook-member", "hook-plain-payment", "hook-credit-payment", "expiry", "expiry-spent",
		"moved-yesterday", "unchanged-month", "busy-history", "bound", "almost-bound", "ledger-only",
		"topped-up", "topped-before", "topped-unpaid"}
	var rows []string
	for _, c := range customers {
		if c != "ledger-only" {
			rows = append(rows, fmt.Sprintf(`{"id":%q,"createdAt":1700000000000}`, c))
		}
	}
	load(t, b, entity.Products, run1, prev, true, `{"id":"credit-prod","type":"saas","subType":"credit_usage"}`, `{"id":"plain"}`)
	load(t, b, entity.Customers, run1, prev, true, rows...)
	load(t, b, entity.UnpaidTransactions, run1, prev, true,
		`{"id":"u-paid","customerId":"paid-credit","paymentLinkId":"credit-prod"}`,
		`{"id":"u-old","customerId":"quiet","paymentLinkId":"credit-prod"}`)
	load(t, b, entity.Invoices, run1, prev, true,
		`{"id":"i-credit","customerId":"invoice-credit","status":"active","extraData":{"idProd":"credit-prod"}}`,
		`{"id":"i-plain","customerId":"invoice-plain","status":"active"}`)
	ledger := []string{
		ledgerRow("e1", "expiry", "credit-prod", t0.Add(-200*day), 100, 0, t0.Add(-12*time.Hour)),
		ledgerRow("e2", "expiry-spent", "credit-prod", t0.Add(-200*day), 100, 0, t0.Add(-12*time.Hour)),
		ledgerRow("e3", "expiry-spent", "credit-prod", t0.Add(-150*day), 0, 100, time.Time{}),
		ledgerRow("m1", "moved-yesterday", "credit-prod", prev.Add(-day), 50, 0, time.Time{}),
		ledgerRow("m2", "unchanged-month", "credit-prod", prev.Add(-30*day), 50, 0, time.Time{}),
		ledgerRow("o1", "ledger-only", "credit-prod", prev.Add(-40*day), 50, 0, time.Time{}),
	}
	// 100 entries in the 90 days before the last read, the latest three days before it: the
	// mean gap is under a day although the credit had not moved for three.
	for i := range 100 {
		ledger = append(ledger, ledgerRow(fmt.Sprintf("b%d", i), "busy-history", "credit-prod",
			prev.Add(-3*day-time.Duration(i)*87*day/100), 0, 1, time.Time{}))
	}
	load(t, b, entity.CreditLedger, run1, prev, false, ledger...)
	var readPrev []string
	for _, c := range customers {
		if c != "never" && c != "bound" && c != "almost-bound" {
			readPrev = append(readPrev, c)
		}
	}
	mark := func(at time.Time, ids ...string) {
		t.Helper()
		if err := b.markCreditFetched(ctx, "acct", ids, nil, at, run1.ID); err != nil {
			t.Fatal(err)
		}
	}
	mark(prev, readPrev...)
	mark(t0.Add(-6*day-time.Hour), "bound") // its bound passes within the next day: read now
	mark(t0.Add(-5*day), "almost-bound")    // passes in two days: the next run is in time
	if err := b.finishRun(ctx, run1.ID, syncdata.RunStats{Status: "succeeded"}); err != nil {
		t.Fatal(err)
	}

	// This run's lists, observed at t0.
	run2 := startRun(t, b, "acct")
	load(t, b, entity.Customers, run2, t0, true, rows...)
	load(t, b, entity.UnpaidTransactions, run2, t0, true,
		`{"id":"u-old","customerId":"quiet","paymentLinkId":"credit-prod"}`, // unchanged: no signal
		`{"id":"u-new","customerId":"unpaid-credit","paymentLinkId":"credit-prod"}`,
		`{"id":"u-plain","customerId":"unpaid-plain","paymentLinkId":"plain"}`) // u-paid left the list: paid
	load(t, b, entity.Invoices, run2, t0, true,
		`{"id":"i-credit","customerId":"invoice-credit","status":"paid","extraData":{"idProd":"credit-prod"}}`,
		`{"id":"i-plain","customerId":"invoice-plain","status":"paid"}`)
	hook := func(id, event, data string) string {
		payload := fmt.Sprintf(`{"event":%q,"data":%s}`, event, data)
		return fmt.Sprintf(`{"id":%q,"createdAt":%q,"payload":%q,"type":%q}`, id, t0.Add(-time.Hour).Format(time.RFC3339), payload, event)
	}
	load(t, b, entity.WebhookDeliveries, run2, t0, false,
		hook("h1", "membership.memberExpired", `{"customerId":"hook-member","status":"INACTIVE"}`),
		hook("h2", "payment.reminder", `{"customerId":"hook-plain-payment","productId":"plain"}`),
		hook("h3", "payment.received", `{"customerId":"hook-credit-payment","productId":"credit-prod"}`))

	// billsync's own add-credit sends (job journal): after the last read, or before it.
	hints := []syncdata.CreditHint{
		{Account: "acct", CustomerID: "topped-up", At: prev.Add(2 * time.Hour)},
		{Account: "acct", CustomerID: "topped-up", At: prev.Add(-3 * day)},
		{Account: "acct", CustomerID: "topped-before", At: prev.Add(-time.Minute)},
		{Account: "acct", CustomerID: "topped-unpaid", At: prev.Add(time.Minute)},
		{Account: "other", CustomerID: "quiet", At: t0}, // another account's customer of the same id
	}
	load(t, b, entity.UnpaidTransactions, run2, t0, true, `{"id":"u-topped","customerId":"topped-unpaid","paymentLinkId":"credit-prod"}`)
	got, err := b.creditTargets(ctx, "acct", syncdata.CreditPlan{Now: t0, Overlap: time.Hour, Refresh: 7 * day, Hints: hints}, 100)
	if err != nil {
		t.Fatal(err)
	}
	reasons := map[string]string{}
	var order []string
	for _, c := range got {
		reasons[c.CustomerID] = c.Reason
		order = append(order, c.Reason)
	}
	want := map[string]string{
		"never": "never", "unpaid-credit": "signal", "paid-credit": "signal", "invoice-credit": "signal",
		"hook-member": "signal", "hook-credit-payment": "signal", "expiry": "signal",
		"bound": "bound", "moved-yesterday": "interval", "busy-history": "interval",
		"topped-up": "topup", "topped-unpaid": "topup",
	}
	for _, c := range customers {
		if reasons[c] != want[c] {
			t.Errorf("%s: reason %q, want %q", c, reasons[c], want[c])
		}
	}
	if !slices.IsSortedFunc(order, func(a, b string) int {
		rank := func(r string) int { return strings.Index("never topup signal bound interval", r) }
		return rank(a) - rank(b)
	}) {
		t.Errorf("reasons out of order: %v", order)
	}
	for _, c := range got {
		if c.Reason != "never" && !c.Since.Equal(c.LastFetched.Add(-time.Hour)) {
			t.Errorf("%s: since %v, want an hour before its last read %v", c.CustomerID, c.Since, c.LastFetched)
		}
	}
	if few, _ := b.creditTargets(ctx, "acct", syncdata.CreditPlan{Now: t0, Refresh: 7 * day}, 2); len(few) != 2 {
		t.Errorf("limit 2 gave %d", len(few))
	}
	if top, _ := b.creditTargets(ctx, "acct", syncdata.CreditPlan{Now: t0, Refresh: 7 * day, Hints: hints}, 3); len(top) != 3 ||
		top[0].Reason != "never" || top[1].Reason != "topup" || top[2].Reason != "topup" {
		t.Errorf("limit 3: %+v, want never then the two top-ups before any signal", top)
	}
	if other, _ := b.creditTargets(ctx, "other", syncdata.CreditPlan{Now: t0, Refresh: 7 * day, Hints: hints}, 10); len(other) != 0 {
		t.Errorf("other account got %v", other)
	}
}

// TestCreditTargetsBoundsHold runs 40 simulated nights, a few minutes apart from exactly a day,
// reading exactly the targets each time:
// no customer's credit is ever older than the refresh bound, and one with a signal is read the
// night after it (at most a day stale), whatever its history says.
func TestCreditTargetsBoundsHold(t *testing.T) {
	ctx := context.Background()
	b := startBuild(t, newPath(t))
	run := startRun(t, b, "acct")
	start := t0.Add(-100 * day)
	var custs []string
	for i := range 30 {
		custs = append(custs, fmt.Sprintf(`{"id":"c%02d","createdAt":1700000000000}`, i))
	}
	load(t, b, entity.Products, run, start, true, `{"id":"credit-prod","type":"saas","subType":"credit_usage"}`)
	load(t, b, entity.Customers, run, start, true, custs...)
	// Histories from daily to none: c00 moved every day for 90 days, c01 every 2 days, ...
	var ledger []string
	for i := range 10 {
		for d := 1; d <= 90; d += i + 1 {
			ledger = append(ledger, ledgerRow(fmt.Sprintf("l%d-%d", i, d), fmt.Sprintf("c%02d", i), "credit-prod",
				start.Add(-time.Duration(d)*day), 10, 0, time.Time{}))
		}
	}
	load(t, b, entity.CreditLedger, run, start, false, ledger...)
	const refresh = 5 * day
	last := map[string]time.Time{}
	for night := range 40 {
		// cron starts each night's run at about the same time, a few minutes early or late
		now := start.Add(time.Duration(night)*day + time.Duration(night%3-1)*5*time.Minute)
		if night == 20 { // a webhook names c29, which has no history at all
			load(t, b, entity.WebhookDeliveries, run, now, false,
				fmt.Sprintf(`{"id":"h","createdAt":%q,"payload":"{\"event\":\"membership.memberExpired\",\"data\":{\"customerId\":\"c29\"}}"}`,
					now.Format(time.RFC3339)))
		}
		got, err := b.creditTargets(ctx, "acct", syncdata.CreditPlan{Now: now, Refresh: refresh}, 1000)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, c := range got {
			ids = append(ids, c.CustomerID)
		}
		if night == 20 && !slices.Contains(ids, "c29") {
			t.Errorf("night 20: c29 has a webhook naming it but is not read (%v)", ids)
		}
		if night > 0 && len(ids) == len(custs) {
			t.Errorf("night %d: every customer read, the intervals saved nothing", night)
		}
		if err := b.markCreditFetched(ctx, "acct", ids, nil, now, run.ID); err != nil {
			t.Fatal(err)
		}
		for _, id := range ids {
			last[id] = now
		}
		// Before the next night's run, every customer's last read is within the bound.
		next := start.Add(time.Duration(night+1)*day + 5*time.Minute)
		for i := range custs {
			id := fmt.Sprintf("c%02d", i)
			if age := next.Sub(last[id]); age > refresh {
				t.Fatalf("night %d: %s last read %v before the next run, over the bound %v", night, id, age, refresh)
			}
		}
	}
}

// TestCreditTargetsFirstSync: before any credit read of an account is recorded, creditTargets
// answers with credit_never.sql, which must give exactly what credit_targets.sql gives then
// (every customer `never`, newest first, ledger-only customers last, deleted ones left out, a
// hint changing nothing); once the account has a read, the full query answers, also while
// another account has none.
func TestCreditTargetsFirstSync(t *testing.T) {
	ctx := context.Background()
	b := startBuild(t, newPath(t))
	run := startRun(t, b, "acct")
	var customers []string
	for i := range 30 {
		customers = append(customers, fmt.Sprintf(`{"id":"c%02d","createdAt":%d,"updatedAt":%d}`,
			i, 1700000000000+int64(i%7)*86400000, 1700000000000+int64(i%5)*86400000))
	}
	customers = append(customers, `{"id":"","createdAt":1700000000000}`) // no id: validation refuses it
	load(t, b, entity.Customers, run, t0, true, customers[:30]...)
	load(t, b, entity.Customers, startRun(t, b, "other"), t0, true, `{"id":"o1","createdAt":1700000000000}`)
	load(t, b, entity.CreditLedger, run, t0, false,
		ledgerRow("e1", "ledger-only", "p", t0.Add(-day), 5, 0, time.Time{}),
		ledgerRow("e2", "c03", "p", t0.Add(-day), 5, 0, time.Time{}))
	// c29 left the list before this run ended: deleted upstream, not a candidate
	if _, err := b.DB().ExecContext(ctx, `UPDATE customers SET deleted_upstream_at = ? WHERE id = 'c29'`, t0); err != nil {
		t.Fatal(err)
	}
	plan := syncdata.CreditPlan{Now: t0, Refresh: 7 * day, MinInterval: DefaultCreditMinInterval,
		Hints: []syncdata.CreditHint{{Account: "acct", CustomerID: "c05", At: t0.Add(-time.Hour)}}}
	full := func(account string, limit int) []string {
		t.Helper()
		hints, err := hintsJSON(account, plan.Hints)
		if err != nil {
			t.Fatal(err)
		}
		rows, err := b.DB().QueryContext(ctx, creditTargetsSQL, account, plan.Now, plan.ServiceAhead.Microseconds(), plan.Refresh.Microseconds(),
			plan.MinInterval.Microseconds(), hints, limit)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var out []string
		for rows.Next() {
			var id, reason string
			var last any
			if err := rows.Scan(&id, &last, &reason); err != nil {
				t.Fatal(err)
			}
			out = append(out, id+" "+reason)
		}
		return out
	}
	got := func(account string, limit int) []string {
		t.Helper()
		ts, err := b.creditTargets(ctx, account, plan, limit)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, c := range ts {
			out = append(out, c.CustomerID+" "+c.Reason)
		}
		return out
	}
	for _, limit := range []int{1000, 7} {
		want := full("acct", limit)
		if len(want) != min(limit, 30) { // c00..c28 and ledger-only
			t.Fatalf("limit %d: the full query gave %d targets: %v", limit, len(want), want)
		}
		if g := got("acct", limit); !slices.Equal(g, want) {
			t.Errorf("first sync, limit %d:\n got %v\nwant %v", limit, g, want)
		}
	}
	// another account's read does not end acct's first sync
	if err := b.markCreditFetched(ctx, "other", []string{"o1"}, []string{"never"}, t0, run.ID); err != nil {
		t.Fatal(err)
	}
	if g, want := got("acct", 1000), full("acct", 1000); !slices.Equal(g, want) {
		t.Errorf("after other's read:\n got %v\nwant %v", g, want)
	}
	// acct's own read does: c03 was read now, so it is not due, and the rest are still never read
	if err := b.markCreditFetched(ctx, "acct", []string{"c03"}, []string{"never"}, t0, run.ID); err != nil {
		t.Fatal(err)
	}
	g := got("acct", 1000)
	if want := full("acct", 1000); !slices.Equal(g, want) {
		t.Errorf("after acct's read:\n got %v\nwant %v", g, want)
	}
	if slices.Contains(g, "c03 never") {
		t.Errorf("c03, read now, is still never read: %v", g)
	}
}

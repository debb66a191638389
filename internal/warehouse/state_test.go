package warehouse

import (
	"context"
	"strings"
	"testing"
	"time"
)

func TestCreditTargetsOrdering(t *testing.T) {
	ctx := context.Background()
	b := startBuild(t, newPath(t))
	run := startRun(t, b, "acct")
	load(t, b, Products, run, t0, true, `{"id":"credit-prod","subType":"credit_usage"}`, `{"id":"plain"}`)
	load(t, b, Customers, run, t0, true,
		`{"id":"new-old","createdAt":1000000000000}`,
		`{"id":"new-recent","createdAt":1700000000000}`,
		`{"id":"stale-ledger","createdAt":1000000000000}`,
		`{"id":"fresh-ledger","createdAt":1000000000000}`,
		`{"id":"fetched-nothing","createdAt":1000000000000}`,
		`{"id":"fetched-linked","createdAt":1000000000000}`)
	load(t, b, CreditLedger, run, t0, false,
		`{"id":"l1","customerId":"stale-ledger","amount":5}`, `{"id":"l2","customerId":"fresh-ledger","amount":5}`)
	load(t, b, UnpaidTransactions, run, t0, true, `{"id":"u1","customerId":"fetched-linked","paymentLinkId":"credit-prod"}`)
	for id, at := range map[string]time.Time{
		"stale-ledger": t0.Add(-48 * time.Hour), "fresh-ledger": t0.Add(-time.Hour),
		"fetched-nothing": t0.Add(-72 * time.Hour), "fetched-linked": t0.Add(-24 * time.Hour),
	} {
		if err := b.MarkCreditFetched(ctx, "acct", id, at, run.ID); err != nil {
			t.Fatal(err)
		}
	}
	// Customers fetched more than 60 hours before t0 are due by staleness alone.
	got, err := b.CreditTargets(ctx, "acct", 10*time.Minute, t0.Add(-60*time.Hour), 10)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, c := range got {
		ids = append(ids, c.CustomerID)
	}
	// Tiers: never fetched (most recently active first), holders of credit (stalest first),
	// then fetched-nothing, due only because its last fetch is older than the refresh bound.
	want := "new-recent,new-old,stale-ledger,fetched-linked,fresh-ledger,fetched-nothing"
	if strings.Join(ids, ",") != want {
		t.Fatalf("order %v, want %s", ids, want)
	}
	fresh, err := b.CreditTargets(ctx, "acct", 0, t0.Add(-100*time.Hour), 10)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range fresh {
		if c.CustomerID == "fetched-nothing" {
			t.Error("fetched-nothing is due although its last fetch is within the refresh bound")
		}
	}
	if !got[0].Since.IsZero() || !got[0].LastFetched.IsZero() {
		t.Errorf("never fetched: %+v", got[0])
	}
	if want := t0.Add(-48*time.Hour - 10*time.Minute); !got[2].Since.Equal(want) {
		t.Errorf("since = %v, want %v", got[2].Since, want)
	}
	if few, _ := b.CreditTargets(ctx, "acct", 0, t0, 2); len(few) != 2 {
		t.Errorf("limit 2 gave %d", len(few))
	}
	if other, _ := b.CreditTargets(ctx, "other", 0, t0, 10); len(other) != 0 {
		t.Errorf("other account got %v", other)
	}
}

func TestRunsStreamsAndFreshness(t *testing.T) {
	ctx := context.Background()
	b := startBuild(t, newPath(t))
	run := startRun(t, b, "acct")
	s := StreamStats{Stream: "products:ebook", Entity: "products", Started: t0, Finished: t0.Add(time.Minute), Pages: 2, Records: 15}
	if err := b.RecordStream(ctx, run.ID, s); err != nil {
		t.Fatal(err)
	}
	s.Complete = true
	if err := b.RecordStream(ctx, run.ID, s); err != nil { // replaces the first record
		t.Fatal(err)
	}
	if n := queryInt(t, b.DB(), `SELECT count(*) FROM sync_streams`); n != 1 {
		t.Errorf("%d stream rows", n)
	}
	if err := b.FinishRun(ctx, run.ID, RunStats{Status: "done"}); err == nil {
		t.Error("unknown status accepted")
	}
	if err := b.FinishRun(ctx, 999, RunStats{Status: "failed"}); err == nil {
		t.Error("unknown run accepted")
	}
	if err := b.FinishRun(ctx, run.ID, RunStats{Status: "partial", Records: 15, Error: "ebooks: timeout"}); err != nil {
		t.Fatal(err)
	}
	got := queryString(t, b.DB(), `SELECT account || ' ' || entity || ' ' || records || ' ' || last_complete_at::VARCHAR FROM table_freshness`)
	if got != "acct products 15 2026-06-01 05:01:00+00" {
		t.Errorf("freshness %q", got)
	}
	if next := startRun(t, b, "acct"); next.ID == run.ID || next.Resumed {
		t.Errorf("finished run reused: %+v", next)
	}
}

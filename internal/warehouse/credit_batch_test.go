package warehouse

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/billsync/billsync/internal/entity"
	"github.com/billsync/billsync/internal/syncdata"
)

func TestMarkCreditFetchedBatch(t *testing.T) {
	ctx := context.Background()
	b := startBuild(t, newPath(t))
	run := startRun(t, b, "acct")
	load(t, b, entity.Customers, run, t0, true, `{"id":"a","createdAt":1000000000000}`, `{"id":"b","createdAt":1000000000000}`, `{"id":"c","createdAt":1000000000000}`)
	if err := b.markCreditFetched(ctx, "acct", []string{"a", "b", "a"}, nil, t0.Add(-time.Hour), run.ID); err != nil {
		t.Fatal(err)
	}
	// Marking again moves the time, keeps one row per customer and records why it was read.
	if err := b.markCreditFetched(ctx, "acct", []string{"a"}, []string{"signal"}, t0, run.ID); err != nil {
		t.Fatal(err)
	}
	var rows, aAt int64
	if err := b.DB().QueryRow(`SELECT count(*), max(epoch_ms(last_fetched_at)) FILTER (WHERE customer_id = 'a')
		FROM credit_fetch_state WHERE account = 'acct'`).Scan(&rows, &aAt); err != nil {
		t.Fatal(err)
	}
	if rows != 2 || aAt != t0.UnixMilli() {
		t.Fatalf("rows=%d a fetched at %d, want 2 rows and a at %d", rows, aAt, t0.UnixMilli())
	}
	reasons := map[string]string{}
	rs, err := b.DB().Query(`SELECT customer_id, coalesce(reason, '<none>') FROM credit_fetch_state`)
	if err != nil {
		t.Fatal(err)
	}
	for rs.Next() {
		var id, r string
		if err := rs.Scan(&id, &r); err != nil {
			t.Fatal(err)
		}
		reasons[id] = r
	}
	if rs.Err() != nil || reasons["a"] != "signal" || reasons["b"] != "<none>" {
		t.Fatalf("reasons %v (%v), want a read for a signal and b for none given", reasons, rs.Err())
	}
	// Only c is still never fetched, so it leads the targets.
	got, err := b.creditTargets(ctx, "acct", syncdata.CreditPlan{Now: t0, Refresh: 48 * time.Hour}, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].CustomerID != "c" {
		t.Fatalf("targets %+v, want only c", got)
	}
}

// TestCreditReasonsAreAContract: the Go side and the credit queries agree on the reasons. A query
// that does not name a reason refuses to load; a reason the Go side does not know fails the run
// instead of being counted as nothing owed.
func TestCreditReasonsAreAContract(t *testing.T) {
	for _, r := range syncdata.CreditReasons {
		if got := mustNameReasons("x.sql", "SELECT '"+r+"'", r); got != "SELECT '"+r+"'" {
			t.Fatalf("text changed: %q", got)
		}
	}
	func() {
		defer func() {
			if p := recover(); p == nil || !strings.Contains(fmt.Sprint(p), "x.sql does not name the credit reason 'bound'") {
				t.Errorf("a query without 'bound': %v", p)
			}
		}()
		mustNameReasons("x.sql", "SELECT 'never', 'bonud'", syncdata.CreditNever, syncdata.CreditBound)
	}()

	ctx := context.Background()
	b := startBuild(t, newPath(t))
	run := startRun(t, b, "acct")
	load(t, b, entity.Customers, run, t0, true, `{"id":"a","createdAt":1000000000000}`)
	if err := b.markCreditFetched(ctx, "acct", []string{"a"}, nil, t0.Add(-time.Hour), run.ID); err != nil {
		t.Fatal(err)
	}
	saved := creditTargetsSQL
	t.Cleanup(func() { creditTargetsSQL = saved })
	creditTargetsSQL = strings.Replace(saved, "THEN 'bound'", "THEN 'bonud'", 1)
	_, err := b.creditTargets(ctx, "acct", syncdata.CreditPlan{Now: t0.Add(30 * 24 * time.Hour), Refresh: 48 * time.Hour}, 10)
	if err == nil || !strings.Contains(err.Error(), `customer a due for "bonud", a reason the syncer does not know`) {
		t.Fatalf("an unknown reason: %v", err)
	}
}

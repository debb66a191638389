package warehouse

import (
	"context"
	"fmt"
	"testing"

	"github.com/billsync/billsync/internal/entity"
	"github.com/billsync/billsync/internal/syncdata"
)

// TestBatchedFullList: a list merged in batches, then its deletion marking, marks exactly the rows no
// batch saw, and seenInRun counts distinct records across batches (a record in two batches once).
func TestBatchedFullList(t *testing.T) {
	ctx := context.Background()
	path := newPath(t)
	b := startBuild(t, path)
	run1 := startRun(t, b, "acct")
	load(t, b, entity.Customers, run1, t0, true, `{"id":"a"}`, `{"id":"b"}`, `{"id":"c"}`)
	if err := b.finishRun(ctx, run1.ID, syncdata.RunStats{Status: "succeeded"}); err != nil {
		t.Fatal(err)
	}

	run2 := startRun(t, b, "acct")
	load(t, b, entity.Customers, run2, t0, false, `{"id":"a"}`, `{"id":"d"}`)
	load(t, b, entity.Customers, run2, t0, false, `{"id":"d"}`, `{"id":"b"}`) // d shifted across the batch edge
	seen, err := b.seenInRun(ctx, entity.Customers, "acct", run2.ID)
	if err != nil {
		t.Fatal(err)
	}
	if seen != 3 {
		t.Fatalf("seen in run = %d, want 3 (a, b, d)", seen)
	}
	res := load(t, b, entity.Customers, run2, t0, true) // nothing staged: only the deletion step
	if res.Deleted != 1 {
		t.Fatalf("deletion marking deleted %d, want 1 (c)", res.Deleted)
	}
	var deleted string
	if err := b.DB().QueryRow(`SELECT string_agg(id, ',') FROM customers WHERE deleted_upstream_at IS NOT NULL`).Scan(&deleted); err != nil {
		t.Fatal(err)
	}
	if deleted != "c" {
		t.Fatalf("deleted upstream: %q, want c", deleted)
	}
	if _, err := b.seenInRun(ctx, entity.ProductDetails, "acct", run2.ID); err == nil {
		t.Error("seenInRun accepted a detail entity")
	}
}

// TestFirstSyncInBatches: during an account's first sync every batch is a plain insert unless
// one of its records was already stored by an earlier batch (pages shifted), which takes the
// comparing path: the later version wins, nothing is stored twice, and no `_created` history is
// written for records of the first sync, while a record new in the next run gets one.
func TestFirstSyncInBatches(t *testing.T) {
	ctx := context.Background()
	b := startBuild(t, newPath(t))
	run1 := startRun(t, b, "acct")
	steps := []struct {
		records []string
		want    syncdata.MergeResult
	}{
		{[]string{`{"id":"a","email":"a@x"}`, `{"id":"b","email":"b@x"}`}, syncdata.MergeResult{Inserted: 2}},
		{[]string{`{"id":"b","email":"b2@x"}`, `{"id":"c","email":"c@x"}`}, syncdata.MergeResult{Inserted: 1, Updated: 1}},
		{[]string{`{"id":"d","email":"d@x"}`, `{"id":"d","email":"d2@x"}`}, syncdata.MergeResult{Inserted: 1}},
		{nil, syncdata.MergeResult{}},
	}
	for i, s := range steps {
		if got := load(t, b, entity.Customers, run1, t0, i == len(steps)-1, s.records...); got != s.want {
			t.Errorf("batch %d: %+v, want %+v", i+1, got, s.want)
		}
	}
	if got := queryString(t, b.DB(), `SELECT string_agg(id || '=' || email, ',' ORDER BY id) FROM customers`); got != "a=a@x,b=b2@x,c=c@x,d=d2@x" {
		t.Errorf("customers after first sync: %s", got)
	}
	if n := queryInt(t, b.DB(), `SELECT count(*) FROM record_changes WHERE field = '_created'`); n != 0 {
		t.Errorf("%d _created rows for the first sync", n)
	}
	if err := b.finishRun(ctx, run1.ID, syncdata.RunStats{Status: "succeeded"}); err != nil {
		t.Fatal(err)
	}

	run2 := startRun(t, b, "acct")
	if got := load(t, b, entity.Customers, run2, t0, false, `{"id":"e","email":"e@x"}`); got != (syncdata.MergeResult{Inserted: 1}) {
		t.Errorf("next run: %+v", got)
	}
	if got := queryString(t, b.DB(), `SELECT string_agg(record_id, ',') FROM record_changes WHERE field = '_created'`); got != "e" {
		t.Errorf("_created after the next run: %q, want e", got)
	}
}

// TestStageWhileMerging: a stream stages its next batch on another connection while the
// previous batch of the same entity merges; both batches arrive intact.
func TestStageWhileMerging(t *testing.T) {
	ctx := context.Background()
	b := startBuild(t, newPath(t))
	run := startRun(t, b, "acct")
	first, err := b.newLoader(ctx, entity.Customers, run.ID, run.Account, t0)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 5000 {
		if err := first.Add(1+i/100, i%100, []byte(fmt.Sprintf(`{"id":"a%d","email":"a%d@x"}`, i, i))); err != nil {
			t.Fatal(err)
		}
	}
	merged := make(chan error, 1)
	go func() {
		_, err := first.Merge(ctx)
		merged <- err
	}()
	second, err := b.newLoader(ctx, entity.Customers, run.ID, run.Account, t0)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 5000 {
		if err := second.Add(51+i/100, i%100, []byte(fmt.Sprintf(`{"id":"b%d","email":"b%d@x"}`, i, i))); err != nil {
			t.Fatal(err)
		}
	}
	if err := <-merged; err != nil {
		t.Fatal(err)
	}
	if r, err := second.Merge(ctx); err != nil || r.Inserted != 5000 {
		t.Fatalf("second merge: %+v, %v", r, err)
	}
	if n := queryInt(t, b.DB(), `SELECT count(DISTINCT id) FROM customers WHERE email = id || '@x'`); n != 10000 {
		t.Fatalf("%d customers stored intact, want 10000", n)
	}
}

package warehouse

import (
	"context"
	"testing"
)

// TestBatchedFullList: a list merged in batches, then an empty full merge, marks exactly the rows no
// batch saw, and SeenInRun counts distinct records across batches (a record in two batches once).
func TestBatchedFullList(t *testing.T) {
	ctx := context.Background()
	path := newPath(t)
	b := startBuild(t, path)
	run1 := startRun(t, b, "acct")
	load(t, b, Customers, run1, t0, true, `{"id":"a"}`, `{"id":"b"}`, `{"id":"c"}`)
	if err := b.FinishRun(ctx, run1.ID, RunStats{Status: "succeeded"}); err != nil {
		t.Fatal(err)
	}

	run2 := startRun(t, b, "acct")
	load(t, b, Customers, run2, t0, false, `{"id":"a"}`, `{"id":"d"}`)
	load(t, b, Customers, run2, t0, false, `{"id":"d"}`, `{"id":"b"}`) // d shifted across the batch edge
	seen, err := b.SeenInRun(ctx, Customers, "acct", run2.ID)
	if err != nil {
		t.Fatal(err)
	}
	if seen != 3 {
		t.Fatalf("seen in run = %d, want 3 (a, b, d)", seen)
	}
	res := load(t, b, Customers, run2, t0, true) // nothing staged: only the deletion step
	if res.Deleted != 1 {
		t.Fatalf("empty full merge deleted %d, want 1 (c)", res.Deleted)
	}
	var deleted string
	if err := b.DB().QueryRow(`SELECT string_agg(id, ',') FROM customers WHERE deleted_upstream_at IS NOT NULL`).Scan(&deleted); err != nil {
		t.Fatal(err)
	}
	if deleted != "c" {
		t.Fatalf("deleted upstream: %q, want c", deleted)
	}
	if _, err := b.SeenInRun(ctx, ProductDetails, "acct", run2.ID); err == nil {
		t.Error("SeenInRun accepted a detail entity")
	}
}

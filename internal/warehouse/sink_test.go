package warehouse

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/billsync/billsync/internal/entity"
	"github.com/billsync/billsync/internal/syncdata"
)

func startSink(t *testing.T, b *Build, account string, now time.Time) *Sink {
	t.Helper()
	s, err := b.StartSink(context.Background(), account, now, func() time.Time { return now })
	if err != nil {
		t.Fatalf("StartSink: %v", err)
	}
	t.Cleanup(s.Close)
	return s
}

// A call queued behind a write that then fails is skipped; it must return that failure, not
// wait forever (a failed merge once hung the whole sync this way).
func TestSinkCallQueuedBehindFailure(t *testing.T) {
	ctx := context.Background()
	s := startSink(t, startBuild(t, newPath(t)), "acct", t0)
	release := make(chan struct{})
	boom := errors.New("merge failed")
	if err := s.submit(ctx, func(context.Context) error { <-release; return boom }); err != nil {
		t.Fatal(err)
	}
	ran := false
	done := make(chan error, 1)
	go func() { done <- s.call(ctx, func(context.Context) error { ran = true; return nil }) }()
	// the call is queued while the first write still runs, so it passed the failed() check
	for len(s.ops) == 0 {
		time.Sleep(time.Millisecond)
	}
	close(release)
	select {
	case err := <-done:
		if !errors.Is(err, boom) {
			t.Fatalf("call returned %v, want the earlier failure %v", err, boom)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("call queued behind a failed write never returned")
	}
	if ran {
		t.Fatal("a write queued after a failure ran")
	}
	if err := s.submit(ctx, func(context.Context) error { return nil }); !errors.Is(err, boom) {
		t.Fatalf("submit after failure returned %v, want %v", err, boom)
	}
	if err := s.Flush(ctx); !errors.Is(err, boom) {
		t.Fatalf("flush after failure returned %v, want %v", err, boom)
	}
}

// One writer per build: a second sink while one is open would be a second writer of every table.
func TestOneSinkPerBuild(t *testing.T) {
	ctx := context.Background()
	b := startBuild(t, newPath(t))
	s, err := b.StartSink(ctx, "one", t0, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.StartSink(ctx, "two", t0, nil); err == nil || !strings.Contains(err.Error(), "already has an open sink") {
		t.Fatalf("second sink: %v", err)
	}
	s.Close()
	if _, err := b.StartSink(ctx, "two", t0, nil); err != nil {
		t.Fatalf("sink after the first closed: %v", err)
	}
}

// A list read in batches through the sink: every batch merges, a pass that saw fewer distinct
// records than announced (or an unstable count, or conflicts) is not whole and marks nothing,
// and a whole pass marks exactly the rows no batch saw, as its own step after the merges.
func TestSinkListDecidesDeletions(t *testing.T) {
	ctx := context.Background()
	b := startBuildWith(t, newPath(t), BuildOptions{Log: quietLog, ListBatch: 2})
	recs := func(ids ...string) (out [][]byte) {
		for _, id := range ids {
			out = append(out, []byte(`{"id":"`+id+`"}`))
		}
		return out
	}
	list := func(s *Sink, ids []string, ends ...syncdata.ListEnd) (bool, syncdata.MergeResult) {
		t.Helper()
		li, err := s.List(entity.Customers)
		if err != nil {
			t.Fatal(err)
		}
		var whole bool
		for _, end := range ends {
			for i, r := range recs(ids...) {
				if err := li.Add(ctx, 1+i, []json.RawMessage{r}); err != nil {
					t.Fatal(err)
				}
			}
			if whole, err = li.EndPass(ctx, end); err != nil {
				t.Fatal(err)
			}
		}
		if err := li.Finish(ctx); err != nil {
			t.Fatal(err)
		}
		return whole, s.Merged(entity.Customers)
	}
	s1 := startSink(t, b, "acct", t0)
	if whole, res := list(s1, []string{"a", "b", "c", "d", "e"}, syncdata.ListEnd{Stream: "customers", Expected: 5, Stable: true}); !whole || res != (syncdata.MergeResult{Inserted: 5}) {
		t.Fatalf("first list: whole %v, %+v", whole, res)
	}
	if err := s1.FinishRun(ctx, syncdata.RunStats{Status: "succeeded"}); err != nil {
		t.Fatal(err)
	}
	s1.Close()

	cases := []struct {
		name string
		end  syncdata.ListEnd
	}{
		{"fewer than announced", syncdata.ListEnd{Stream: "customers", Expected: 4, Stable: true}},
		{"count moved", syncdata.ListEnd{Stream: "customers", Expected: 3, Stable: false}},
		{"conflicts", syncdata.ListEnd{Stream: "customers", Expected: 3, Stable: true, Conflicts: []syncdata.Conflict{{ID: "a", Path: "/c"}}}},
	}
	for _, c := range cases {
		s := startSink(t, b, "acct", t0.Add(time.Hour))
		if whole, res := list(s, []string{"a", "b", "c"}, c.end); whole || res.Deleted != 0 {
			t.Errorf("%s: whole %v, %+v", c.name, whole, res)
		}
		s.Close()
	}
	if n := queryInt(t, b.DB(), `SELECT count(*) FROM data_quality_conflicts`); n != 1 {
		t.Errorf("%d conflicts recorded, want 1", n)
	}
	s := startSink(t, b, "acct", t0.Add(2*time.Hour))
	whole, res := list(s, []string{"a", "b", "c"}, syncdata.ListEnd{Stream: "customers", Expected: 4, Stable: true},
		syncdata.ListEnd{Stream: "customers", Expected: 3, Stable: true})
	if !whole || res.Deleted != 2 {
		t.Fatalf("whole second pass: whole %v, %+v", whole, res)
	}
	if got := queryString(t, b.DB(), `SELECT string_agg(id, ',' ORDER BY id) FROM customers WHERE deleted_upstream_at IS NOT NULL`); got != "d,e" {
		t.Errorf("deleted upstream %q, want d,e", got)
	}
	li, err := s.List(entity.WebhookDeliveries)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := li.EndPass(ctx, syncdata.ListEnd{Expected: 0, Stable: true}); err == nil {
		t.Error("an incremental list ended a pass as whole")
	}
}

// A list batch holds exactly ListBatch records (one DuckDB row group by default): a page that
// crosses the bound is split, its rest staged into the next batch, and its records keep their
// place in the page for error messages.
func TestSinkListBatchSplitsPages(t *testing.T) {
	ctx := context.Background()
	b := startBuildWith(t, newPath(t), BuildOptions{Log: quietLog, ListBatch: 3})
	s := startSink(t, b, "acct", t0)
	defer s.Close()
	li, err := s.List(entity.Customers)
	if err != nil {
		t.Fatal(err)
	}
	var page []json.RawMessage
	for i := range 7 {
		created := `1700000000000`
		if i == 5 {
			created = `"nope"`
		}
		page = append(page, json.RawMessage(fmt.Sprintf(`{"id":"p%d","createdAt":%s}`, i, created)))
	}
	err = li.Add(ctx, 4, page)
	if err == nil {
		err = li.Finish(ctx)
	}
	if err == nil || !strings.Contains(err.Error(), "customers page 4 item 5 (id p5): createdAt") {
		t.Fatalf("error %v, want the bad record located as page 4 item 5", err)
	}
	// the first batch (items 0-2) merged; the second (3-5) failed whole; 6 never merged
	if got := queryString(t, b.DB(), `SELECT string_agg(id, ',' ORDER BY id) FROM customers`); got != "p0,p1,p2" {
		t.Errorf("stored %q, want p0,p1,p2 (batches of exactly 3)", got)
	}
}

package warehouse

import (
	"context"
	"testing"
	"time"

	"github.com/billsync/billsync/internal/syncdata"
)

func TestRunsStreamsAndFreshness(t *testing.T) {
	ctx := context.Background()
	b := startBuild(t, newPath(t))
	run := startRun(t, b, "acct")
	s := syncdata.StreamStats{Stream: "products:ebook", Entity: "products", Started: t0, Finished: t0.Add(time.Minute), Pages: 2, Records: 15}
	if err := b.recordStream(ctx, run.ID, s); err != nil {
		t.Fatal(err)
	}
	s.Complete = true
	if err := b.recordStream(ctx, run.ID, s); err != nil { // replaces the first record
		t.Fatal(err)
	}
	if n := queryInt(t, b.DB(), `SELECT count(*) FROM sync_streams`); n != 1 {
		t.Errorf("%d stream rows", n)
	}
	if err := b.finishRun(ctx, run.ID, syncdata.RunStats{Status: "done"}); err == nil {
		t.Error("unknown status accepted")
	}
	if err := b.finishRun(ctx, 999, syncdata.RunStats{Status: "failed"}); err == nil {
		t.Error("unknown run accepted")
	}
	if err := b.finishRun(ctx, run.ID, syncdata.RunStats{Status: "partial", Records: 15, Error: "ebooks: timeout"}); err != nil {
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

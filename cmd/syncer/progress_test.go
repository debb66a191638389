package main

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/billsync/billsync/internal/api"
	"github.com/billsync/billsync/internal/fetch"
	"github.com/billsync/billsync/internal/logbuf"
)

// TestProgressLog: off a terminal, a running sync logs one progress record per interval with
// the totals so far (finished streams included) and nothing once it is over.
func TestProgressLog(t *testing.T) {
	var out logbuf.Buffer
	p := newProgressLog(slog.New(slog.NewJSONHandler(&out, nil)), 20*time.Millisecond)
	p.update(fetch.Progress{Stream: "customers", Records: 100, Pages: 1})
	p.update(fetch.Progress{Stream: "customers", Records: 200, Pages: 2, Done: true})
	p.update(fetch.Progress{Stream: "invoices", Records: 50, Pages: 1})
	// A tick may fall between the updates on a loaded machine and log a partial figure first.
	want := `"msg":"sync progress","records":250,"pages":3,"running":"invoices"`
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(out.String(), want) && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	p.close()
	logs := out.String()
	if !strings.Contains(logs, want) {
		t.Fatalf("progress record: %s", logs)
	}
	n := strings.Count(logs, "\n")
	time.Sleep(60 * time.Millisecond)
	if strings.Count(out.String(), "\n") != n {
		t.Errorf("progress logged after close")
	}
}

// TestProgressShowsWaits: the terminal status line shows a wait of the client with its cause while
// it lasts, beside the streams' counts, and no longer once it is over.
func TestProgressShowsWaits(t *testing.T) {
	var out bytes.Buffer
	p := newProgress(&out)
	var relay waitRelay
	relay.wait(api.Wait{Delay: time.Second, Cause: "nobody listens"}) // no run: dropped
	relay.set(p)
	p.update(fetch.Progress{Stream: "customers", Records: 300})
	relay.wait(api.Wait{Delay: 12 * time.Second, Cause: "429 Retry-After", Where: "GET /hl/v1/customer page 4"})
	if got := out.String(); !strings.HasSuffix(got, "  … customers 300 · waiting 12 s (429 Retry-After)") {
		t.Errorf("status line %q", got)
	}
	relay.wait(api.Wait{Delay: 2 * time.Second, Cause: "retry after HTTP 503"})
	if strings.Contains(out.String(), "HTTP 503") {
		t.Error("a shorter wait replaced the longer one under way")
	}
	if strings.Contains(out.String(), "nobody listens") {
		t.Error("a wait outside a run was drawn")
	}
	if got := waitLine(api.Wait{Cause: "x"}, -time.Second); got != "" {
		t.Errorf("an elapsed wait still shows: %q", got)
	}
	if got := waitLine(api.Wait{Cause: "rate limit 20/min"}, 5400*time.Millisecond); got != "waiting 5 s (rate limit 20/min)" {
		t.Errorf("waitLine %q", got)
	}
}

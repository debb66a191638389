package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/billsync/billsync/internal/api"
	"github.com/billsync/billsync/internal/fetch"
)

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

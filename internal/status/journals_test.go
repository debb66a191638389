package status_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/billsync/billsync/internal/delivery"
	"github.com/billsync/billsync/internal/status"
)

// TestReadsTheDeliveryJournalAsWritten: status reads the delivery journal its own package wrote
// (a change of the journal's tables that status's SQL misses fails here): an alert raised is
// active and a need; resolved, it is gone.
func TestReadsTheDeliveryJournalAsWritten(t *testing.T) {
	dir := t.TempDir()
	journal := filepath.Join(dir, delivery.JournalName)
	a := &delivery.Alerter{Options: delivery.Options{DB: filepath.Join(dir, "billsync.duckdb"), Journal: journal}}
	ctx := context.Background()
	a.State(ctx, delivery.KeySyncFailed, false, "the sync failed", "HTTP 500")
	src := status.Sources{DB: filepath.Join(dir, "billsync.duckdb"), DeliveryJournal: journal, Now: time.Now(),
		Deliveries: []status.ScheduledDelivery{{Name: "daily", Next: func(t time.Time) time.Time { return t.Add(time.Hour) }}}}
	r, err := status.Gather(ctx, src)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Alerts) != 1 || r.Alerts[0].Key != delivery.KeySyncFailed || r.Alerts[0].What != "the sync failed" ||
		!strings.Contains(strings.Join(r.Needs, "\n"), "alert sync_failed: the sync failed") || len(r.Unreadable) != 0 {
		t.Errorf("alerts %+v, needs %q, unreadable %q", r.Alerts, r.Needs, r.Unreadable)
	}
	if len(r.Deliveries) != 1 || r.Deliveries[0].Name != "daily" || r.Deliveries[0].Next.IsZero() {
		t.Errorf("deliveries %+v: want the scheduled one with its next occurrence", r.Deliveries)
	}
	a.State(ctx, delivery.KeySyncFailed, true, "", "")
	if r, err = status.Gather(ctx, src); err != nil || len(r.Alerts) != 0 {
		t.Errorf("after the resolution: %v, alerts %+v", err, r.Alerts)
	}
}

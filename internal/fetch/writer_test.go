package fetch

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/billsync/billsync/internal/warehouse"
)

// A call queued behind a write that then fails is skipped; it must return that failure, not
// wait forever (a failed merge once hung the whole sync this way).
func TestWriterCallQueuedBehindFailure(t *testing.T) {
	ctx := context.Background()
	w := startWriter(ctx, nil, warehouse.Run{ID: 1, Account: "acct"}, "acct", nil)
	defer w.stop()
	release := make(chan struct{})
	boom := errors.New("merge failed")
	if err := w.submit(ctx, func(context.Context) error { <-release; return boom }); err != nil {
		t.Fatal(err)
	}
	ran := false
	done := make(chan error, 1)
	go func() { done <- w.call(ctx, func(context.Context) error { ran = true; return nil }) }()
	// the call is queued while the first write still runs, so it passed the failed() check
	for len(w.ops) == 0 {
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
	if err := w.submit(ctx, func(context.Context) error { return nil }); !errors.Is(err, boom) {
		t.Fatalf("submit after failure returned %v, want %v", err, boom)
	}
}

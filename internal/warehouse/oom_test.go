package warehouse

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/billsync/billsync/internal/config"
	"github.com/billsync/billsync/internal/entity"
)

// TestMergeOutOfMemorySaysWhatToRaise: a merge that runs out of DuckDB's memory limit runs again
// alone (other merges may have held the memory), and if that still does not fit it fails naming
// the limit and the setting that raises it; it is never taken for bad JSON and parsed again.
func TestMergeOutOfMemorySaysWhatToRaise(t *testing.T) {
	var logs bytes.Buffer
	b, err := StartBuild(context.Background(), newPath(t), BuildOptions{Build: config.Build{MemoryLimit: "16MB"},
		Log: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	run := startRun(t, b, "acct")
	pad := strings.Repeat("x", 4000)
	records := make([]string, 4000)
	for i := range records {
		records[i] = fmt.Sprintf(`{"id":"r%d","message":"%s %d","rating":5,"createdAt":1780000000000}`, i, pad, i)
	}
	_, err = tryLoad(b, entity.Reviews, run, t0, true, records...)
	if err == nil {
		t.Fatal("a 16 MB batch merged under a 16MB memory limit: the test no longer provokes running out of memory")
	}
	if !strings.Contains(err.Error(), "Out of Memory") || !strings.Contains(err.Error(), "memory limit is 16MB: raise BILLSYNC_MEMORY_LIMIT") {
		t.Errorf("err = %v", err)
	}
	if n := strings.Count(logs.String(), "merging it alone"); n != 1 {
		t.Errorf("the merge ran alone %d times, want once:\n%s", n, logs.String())
	}
	if strings.Contains(logs.String(), "retries with checked JSON parse") {
		t.Errorf("running out of memory was taken for bad JSON:\n%s", logs.String())
	}
}

// TestStagingOutOfMemorySaysWhatToRaise: staging that runs out of DuckDB's memory limit (the
// Appender's flush, which reports it as text without DuckDB's error type) names the record, the
// limit and the setting that raises it, not DuckDB's SET advice alone.
func TestStagingOutOfMemorySaysWhatToRaise(t *testing.T) {
	b, err := StartBuild(context.Background(), newPath(t), BuildOptions{Build: config.Build{MemoryLimit: "4MB"}, Log: quietLog})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	run := startRun(t, b, "acct")
	l, err := b.newLoader(context.Background(), entity.Reviews, run.ID, run.Account, t0)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Discard()
	pad := strings.Repeat("x", 40000)
	for i := range 3000 {
		if err = l.Add(1, i, []byte(fmt.Sprintf(`{"id":"r%d","message":"%s"}`, i, pad))); err != nil {
			break
		}
	}
	if err == nil {
		t.Fatal("120 MB staged under a 4MB memory limit: the test no longer provokes running out of memory")
	}
	for _, want := range []string{"reviews page 1 item ", ": stage: ", "memory limit is 4MB: raise BILLSYNC_MEMORY_LIMIT"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("err = %v\nwant it to contain %q", err, want)
		}
	}
	if n := strings.Count(err.Error(), "BILLSYNC_MEMORY_LIMIT"); n != 1 {
		t.Errorf("the hint appears %d times: %v", n, err)
	}
}

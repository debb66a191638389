package warehouse

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"
)

// TestMergeOutOfMemorySaysWhatToRaise: a merge that runs out of DuckDB's memory limit runs again
// alone (other merges may have held the memory), and if that still does not fit it fails naming
// the limit and the setting that raises it; it is never taken for bad JSON and parsed again.
func TestMergeOutOfMemorySaysWhatToRaise(t *testing.T) {
	var logs bytes.Buffer
	b, err := StartBuild(context.Background(), newPath(t), BuildOptions{MemoryLimit: "16MB",
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
	_, err = tryLoad(b, Reviews, run, t0, true, records...)
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

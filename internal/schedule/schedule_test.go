package schedule

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/billsync/billsync/internal/logbuf"
)

func TestParse(t *testing.T) {
	jakarta, err := time.LoadLocation("Asia/Jakarta")
	if err != nil {
		t.Fatal(err)
	}
	from := time.Date(2026, 11, 20, 18, 0, 0, 0, time.UTC) // 01:00 on the 21st in Jakarta
	tests := []struct {
		spec    string
		want    time.Time
		wantErr string
	}{
		{spec: "0 2 * * *", want: time.Date(2026, 11, 20, 19, 0, 0, 0, time.UTC)},
		{spec: "@hourly", want: time.Date(2026, 11, 20, 19, 0, 0, 0, time.UTC)},
		{spec: "*/15 * * * *", want: time.Date(2026, 11, 20, 18, 15, 0, 0, time.UTC)},
		{spec: "0 2 * *", wantErr: "expected exactly 5 fields"},
		{spec: "61 * * * *", wantErr: "above maximum"},
		{spec: "CRON_TZ=Nowhere/Bogus 0 2 * * *", wantErr: "BILLSYNC_TZ"},
		{spec: "", wantErr: "empty spec"},
	}
	for _, tc := range tests {
		t.Run(tc.spec, func(t *testing.T) {
			s, err := Parse(tc.spec, jakarta)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Parse(%q) error = %v, want it to contain %q", tc.spec, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := s.Next(from); !got.Equal(tc.want) {
				t.Errorf("Next = %v, want %v", got.UTC(), tc.want)
			}
		})
	}
}

// every fires each d; a real cron spec has minute resolution, too slow for a test.
type every time.Duration

func (e every) Next(t time.Time) time.Time { return t.Add(time.Duration(e)) }

func TestRunnerSkipsOverlapAndFinishesOnStop(t *testing.T) {
	var runs, concurrent, maxConcurrent atomic.Int32
	release := make(chan struct{})
	var logs logbuf.Buffer // read while the runner writes it
	r := &Runner{
		Log:      slog.New(slog.NewJSONHandler(&logs, nil)),
		Schedule: every(10 * time.Millisecond),
		Grace:    5 * time.Second,
		Job: func(ctx context.Context) error {
			runs.Add(1)
			n := concurrent.Add(1)
			defer concurrent.Add(-1)
			for {
				m := maxConcurrent.Load()
				if n <= m || maxConcurrent.CompareAndSwap(m, n) {
					break
				}
			}
			select {
			case <-release:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		},
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- r.Run(ctx) }()
	for runs.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	// Ticks while the first run is busy: each skipped. Waited for, not timed: a loaded machine
	// can hold the cron loop back longer than any fixed sleep.
	deadline := time.Now().Add(10 * time.Second)
	for strings.Count(logs.String(), "skipping this tick") < 2 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	cancel()
	close(release) // the running job finishes within the grace period
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if runs.Load() != 1 || maxConcurrent.Load() != 1 {
		t.Fatalf("runs=%d max concurrent=%d, want one run and no overlap", runs.Load(), maxConcurrent.Load())
	}
	// Each skipped tick is a warning naming it; the run finishes, nothing is cancelled.
	out := logs.String()
	for _, want := range []string{`"level":"WARN","msg":"previous run still going; skipping this tick","tick":"20`,
		`"level":"INFO","msg":"stopping"`, `"level":"INFO","msg":"stopped"`} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %s:\n%s", want, out)
		}
	}
	if strings.Contains(out, "cancel") || strings.Contains(out, `"level":"ERROR"`) {
		t.Errorf("a run that finished within the grace logged as cancelled or failed:\n%s", out)
	}
}

func TestRunnerCancelsAfterGrace(t *testing.T) {
	started := make(chan struct{})
	var jobErr atomic.Value
	var logs bytes.Buffer
	r := &Runner{
		Log:      slog.New(slog.NewJSONHandler(&syncWriter{w: &logs}, nil)),
		Schedule: every(time.Millisecond),
		Grace:    20 * time.Millisecond,
		Job: func(ctx context.Context) error {
			close(started)
			<-ctx.Done()
			jobErr.Store(ctx.Err())
			// What a cancelled job returns need not wrap context.Canceled (DuckDB's
			// "Interrupted!"): the stop still is no failure.
			return errors.New("merge invoices: INTERRUPT Error: Interrupted!")
		},
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- r.Run(ctx) }()
	<-started
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if err, _ := jobErr.Load().(error); !errors.Is(err, context.Canceled) {
		t.Fatalf("job saw %v, want context.Canceled after the grace period", err)
	}
	// A stop is not a failure: INFO stopping, the run cancelled, stopped; nothing at ERROR.
	out := logs.String()
	for _, want := range []string{`"level":"INFO","msg":"stopping"`, `"msg":"scheduled run cancelled"`, `"level":"INFO","msg":"stopped"`} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %s:\n%s", want, out)
		}
	}
	if strings.Contains(out, `"level":"ERROR"`) || strings.Contains(out, "failed") {
		t.Errorf("a stop logged as a failure:\n%s", out)
	}
}

// TestRunnerGraceLetsTheRunFinish: a stop seen while a run is going waits for it (within the grace),
// and the run is neither cancelled nor a failure.
func TestRunnerGraceLetsTheRunFinish(t *testing.T) {
	started := make(chan struct{})
	release := make(chan struct{})
	var sawCancel atomic.Bool
	var logs bytes.Buffer
	w := &syncWriter{w: &logs}
	r := &Runner{
		Log:      slog.New(slog.NewJSONHandler(w, nil)),
		Schedule: every(time.Millisecond),
		Grace:    time.Minute,
		Job: func(ctx context.Context) error {
			close(started)
			<-release
			sawCancel.Store(ctx.Err() != nil)
			return nil
		},
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- r.Run(ctx) }()
	<-started
	cancel()
	for !strings.Contains(w.String(), `"msg":"stopping","running_sync_grace":`) {
		time.Sleep(time.Millisecond)
	}
	select {
	case <-done:
		t.Fatal("Run returned while the run was still going")
	case <-time.After(20 * time.Millisecond):
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	out := w.String()
	if sawCancel.Load() || strings.Contains(out, "cancel") || !strings.Contains(out, `"level":"INFO","msg":"stopped"`) {
		t.Errorf("the run was cancelled (%v) or the stop not logged:\n%s", sawCancel.Load(), out)
	}
}

// TestRunnerAnnouncesNextRun: at start and after every run, in the schedule's zone.
func TestRunnerAnnouncesNextRun(t *testing.T) {
	wib, err := time.LoadLocation("Asia/Jakarta")
	if err != nil {
		t.Fatal(err)
	}
	sched, err := Parse("@every 20ms", wib)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var announced []time.Time
	var runs atomic.Int32
	r := &Runner{
		Schedule: sched,
		Job:      func(context.Context) error { runs.Add(1); return nil },
		Announce: func(next time.Time) { mu.Lock(); announced = append(announced, next); mu.Unlock() },
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- r.Run(ctx) }()
	for runs.Load() < 2 {
		time.Sleep(time.Millisecond)
	}
	time.Sleep(5 * time.Millisecond)
	cancel()
	<-done
	mu.Lock()
	defer mu.Unlock()
	if len(announced) < 2 {
		t.Fatalf("announced %d times for %d runs, want at start and after each run", len(announced), runs.Load())
	}
	for _, a := range announced {
		if a.Location().String() != "Asia/Jakarta" {
			t.Errorf("next run %v not in the schedule's zone", a)
		}
	}
}

type syncWriter struct {
	mu sync.Mutex
	w  *bytes.Buffer
}

func (s *syncWriter) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.String()
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

// TestRunnerRunsAtStartAndWhenAsked: with Start the job runs at once, not at the schedule's
// first tick (an hour away); a request runs it once more; a request while it runs is served by
// that run, never beside it; a stop waits for a run that was asked for.
func TestRunnerRunsAtStartAndWhenAsked(t *testing.T) {
	var runs, concurrent, maxConcurrent atomic.Int32
	release := make(chan struct{}, 10)
	var logs logbuf.Buffer
	now := make(chan struct{})
	r := &Runner{
		Log:      slog.New(slog.NewJSONHandler(&logs, nil)),
		Schedule: every(time.Hour),
		Grace:    5 * time.Second,
		Start:    true,
		Now:      now,
		Job: func(ctx context.Context) error {
			runs.Add(1)
			n := concurrent.Add(1)
			defer concurrent.Add(-1)
			if m := maxConcurrent.Load(); n > m {
				maxConcurrent.Store(n)
			}
			select {
			case <-release:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		},
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- r.Run(ctx) }()
	waitFor := func(what string, ok func() bool) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for !ok() {
			if time.Now().After(deadline) {
				t.Fatalf("waiting for %s; log:\n%s", what, logs.String())
			}
			time.Sleep(time.Millisecond)
		}
	}
	waitFor("the run at start", func() bool { return runs.Load() == 1 })
	now <- struct{}{} // while the first runs: served by it
	waitFor("the request's log", func() bool { return strings.Contains(logs.String(), "it serves the request for one now") })
	release <- struct{}{}
	// Asked again after it ended (until the runner no longer sees it running): one more run.
	waitFor("the asked run", func() bool {
		select {
		case now <- struct{}{}:
		default:
		}
		return runs.Load() == 2
	})
	cancel()
	release <- struct{}{}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if runs.Load() != 2 || maxConcurrent.Load() != 1 {
		t.Fatalf("runs=%d max concurrent=%d, want two runs, never together", runs.Load(), maxConcurrent.Load())
	}
	out := logs.String()
	for _, want := range []string{`"msg":"run now","why":"start"`, `"msg":"run now","why":"asked"`, `"msg":"stopped"`} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %s:\n%s", want, out)
		}
	}
}

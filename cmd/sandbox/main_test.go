package main

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/billsync/billsync/internal/sandbox"
)

// TestRunServesAndStops starts the command on a free port, calls it with the
// printed key, and stops it with SIGTERM.
func TestRunServesAndStops(t *testing.T) {
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- run([]string{"-addr", "127.0.0.1:0", "-scale", "0.05", "-key", "K", "-admin", "-now", "2025-09-01T00:00:00Z"}, pw, io.Discard)
		pw.Close()
	}()
	sc := bufio.NewScanner(pr)
	var base string
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "billing sandbox at "); ok {
			base = rest
			break
		}
	}
	if base == "" {
		t.Fatalf("no address printed: %v", <-done)
	}
	go io.Copy(io.Discard, pr)
	req, _ := http.NewRequest("GET", base+"/hl/v1/customer", nil)
	req.Header.Set("Authorization", "Bearer K")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Date") != "Mon, 01 Sep 2025 00:00:00 GMT" {
		t.Errorf("status %d, Date %q", resp.StatusCode, resp.Header.Get("Date"))
	}
	if err := syscall.Kill(syscall.Getpid(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("run returned %v after SIGTERM", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("did not stop on SIGTERM")
	}
}

func TestRunRejectsBadFlags(t *testing.T) {
	for _, args := range [][]string{{"-now", "yesterday"}, {"-scale", "-1"}, {"-fault-5xx", "0.8", "-fault-reset", "0.8"}, {"-list-order", "oldest"}, {"-nope"}} {
		if err := run(append(args, "-addr", "127.0.0.1:0"), io.Discard, io.Discard); err == nil {
			t.Errorf("%v accepted", args)
		}
	}
}

// TestLiveClockRuns: by default the simulated clock runs with the wall clock, so a client that
// compares the service's time with its own (write reconciliation does) sees time pass; -clock
// frozen keeps it still, and anything else is refused.
func TestLiveClockRuns(t *testing.T) {
	s, err := sandbox.New(sandbox.Options{Seed: 1, Scale: 0.01, Now: time.Date(2025, 9, 1, 0, 0, 0, 0, time.UTC)})
	if err != nil {
		t.Fatal(err)
	}
	before := s.Now()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { runClock(ctx, s, 5*time.Millisecond); close(done) }()
	wall := time.Now()
	for s.Now().Sub(before) < 20*time.Millisecond {
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	<-done
	// the simulated time moved no further than the wall clock did
	if moved, elapsed := s.Now().Sub(before), time.Since(wall); moved > elapsed+10*time.Millisecond {
		t.Errorf("the simulated clock moved %v in %v of wall time", moved, elapsed)
	}
	if err := run([]string{"-clock", "stopped"}, io.Discard, io.Discard); err == nil || !strings.Contains(err.Error(), "live or frozen") {
		t.Errorf("-clock stopped: %v", err)
	}
}

// TestParseNow: -now takes a time, or an offset from the machine's clock for a service whose clock
// is wrong.
func TestParseNow(t *testing.T) {
	wall := time.Date(2026, 11, 28, 6, 0, 0, 500, time.UTC)
	for _, tt := range []struct{ in, want string }{
		{"2025-09-01T07:00:00+07:00", "2025-09-01T00:00:00Z"},
		{"+48h", "2026-11-30T06:00:00Z"},
		{"-90m", "2026-11-28T04:30:00Z"},
		{"+43800h", "2031-11-27T06:00:00Z"},
	} {
		got, err := parseNow(tt.in, wall)
		if err != nil || got.Format(time.RFC3339) != tt.want {
			t.Errorf("%s: %v %v, want %s", tt.in, got, err, tt.want)
		}
	}
	for _, in := range []string{"yesterday", "+2d", ""} {
		if _, err := parseNow(in, wall); err == nil || !strings.Contains(err.Error(), "an offset such as +48h") {
			t.Errorf("%q: %v", in, err)
		}
	}
}

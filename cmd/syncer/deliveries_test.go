package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/billsync/billsync/internal/cli"
	"github.com/billsync/billsync/internal/logbuf"
	"github.com/sethvargo/go-envconfig"
)

// TestDaemonDeliveriesNeverFailTheSync: the daemon runs the schedule file's deliveries beside
// its syncs; with the SMTP server unreachable each delivery fails, is retried and journaled,
// and every sync still succeeds on time. (The delivery is due a minute or so after the start:
// an occurrence before the daemon's first start is owed to nobody.)
func TestDaemonDeliveriesNeverFailTheSync(t *testing.T) {
	t.Parallel() // waits on the wall clock for most of its time: the other waiting test runs meanwhile
	srv := newSandbox(t)
	dir := t.TempDir()
	db := filepath.Join(dir, "w.duckdb")
	sched := filepath.Join(dir, "deliveries.yaml")
	wib, _ := time.LoadLocation("Asia/Jakarta")
	due := time.Now().In(wib).Add(100 * time.Second).Truncate(time.Minute) // 40 to 100 s after the start
	os.WriteFile(sched, []byte(fmt.Sprintf("deliveries:\n  - name: nightly\n    reports: [aging]\n    schedule: \"%d %d * * *\"\n"+
		"    as_of: yesterday\n    to: [finance@toko.example]\n", due.Minute(), due.Hour())), 0o644)
	pw := filepath.Join(dir, "smtp-password")
	os.WriteFile(pw, []byte("app-password-never-logged\n"), 0o600)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close() // nothing listens there
	cmd := exec.Command(os.Args[0], "-schedule", "@every 1s")
	cmd.Env = append(os.Environ(), "SYNCER_TEST_MAIN=1", "BILLSYNC_BASE_URL="+srv.URL,
		"BILLSYNC_API_KEY="+secret, "BILLSYNC_DB="+db, "BILLSYNC_RATE_PER_MIN=0", "BILLSYNC_DELIVERIES="+sched,
		"BILLSYNC_SMTP_URL=smtp://bot@127.0.0.1:"+strconv.Itoa(port), "BILLSYNC_SMTP_PASSWORD_FILE="+pw,
		"BILLSYNC_REPORTS_OUT="+filepath.Join(dir, "out"))
	var out logbuf.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(150 * time.Second)
	failed := regexp.MustCompile(`"msg":"delivery failed; trying again later".*connection refused`)
	for !failed.MatchString(out.String()) {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("no delivery failure within 150s:\n%s", out.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	cmd.Process.Signal(syscall.SIGTERM)
	cmd.Wait()
	logs := out.String()
	if n := strings.Count(logs, `"msg":"sync finished"`); n < 3 || strings.Contains(logs, `"msg":"sync failed"`) {
		t.Errorf("%d syncs finished while the deliveries failed, or one failed:\n%s", n, logs)
	}
	if !strings.Contains(logs, `"msg":"send failed; retrying"`) {
		t.Errorf("no retry logged:\n%s", logs)
	}
	if strings.Contains(logs, "app-password-never-logged") || strings.Contains(logs, secret) {
		t.Fatal("a password or the API key is in the logs")
	}
	if _, err := os.Stat(filepath.Join(dir, "billsync-deliveries.duckdb")); err != nil {
		t.Errorf("no delivery journal: %v", err)
	}
}

// TestBadScheduleFileStopsAtStart: a mistake in the schedule file stops the syncer at start
// with its line, exit 2.
func TestBadScheduleFileStopsAtStart(t *testing.T) {
	dir := t.TempDir()
	sched := filepath.Join(dir, "deliveries.yaml")
	os.WriteFile(sched, []byte("deliveries:\n  - name: nightly\n    reports: [agin]\n    schedule: \"0 0 * * *\"\n"+
		"    as_of: yesterday\n    to: [finance]\n"), 0o644)
	_, err := loadConfig(context.Background(), []string{"-once"}, envconfig.MapLookuper(map[string]string{
		"BILLSYNC_DELIVERIES": sched}))
	var usage *cli.UsageError
	if !errors.As(err, &usage) || !strings.Contains(err.Error(), "deliveries.yaml:3: no report named \"agin\"") ||
		!strings.Contains(err.Error(), "deliveries.yaml:6: to: address \"finance\"") {
		t.Fatalf("%v", err)
	}
}

// TestDaemonStartsUseful: a new install's daemon, its schedule's first run hours away (02:00),
// syncs at start; the deliveries and alerts wait for that sync and owe nothing from before the
// install (no "PROBLEM: delivery failed", no late pack); syncer -now asks it for one more sync;
// once it stopped, syncer -now says no daemon runs.
func TestDaemonStartsUseful(t *testing.T) {
	srv := newSandbox(t)
	dir := t.TempDir()
	db := filepath.Join(dir, "w.duckdb")
	outbox := filepath.Join(dir, "outbox")
	sched := filepath.Join(dir, "deliveries.yaml")
	// Due at 00:00 WIB each day, as of yesterday: today's occurrence is before the install.
	os.WriteFile(sched, []byte("deliveries:\n  - name: nightly\n    reports: [aging]\n    schedule: \"0 0 * * *\"\n"+
		"    as_of: yesterday\n    late_window: 25h\n    to: [finance@toko.example]\n"), 0o644)
	env := []string{"BILLSYNC_BASE_URL=" + srv.URL, "BILLSYNC_API_KEY=" + secret, "BILLSYNC_DB=" + db,
		"BILLSYNC_RATE_PER_MIN=0", "BILLSYNC_DELIVERIES=" + sched, "BILLSYNC_OUTBOX=" + outbox,
		"BILLSYNC_ALERTS_TO=ops@toko.example", "BILLSYNC_REPORTS_OUT=" + filepath.Join(dir, "out")}
	cmd := exec.Command(os.Args[0], "-schedule", "0 2 * * *")
	cmd.Env = append(append(os.Environ(), "SYNCER_TEST_MAIN=1"), env...)
	var out logbuf.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	waitLog := func(what string, n int) {
		t.Helper()
		deadline := time.Now().Add(60 * time.Second)
		for strings.Count(out.String(), what) < n {
			if time.Now().After(deadline) {
				t.Fatalf("no %d× %s within 60s:\n%s", n, what, out.String())
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	waitLog(`"msg":"sync finished"`, 1)
	if !published(db) {
		t.Fatal("the sync at start published nothing")
	}
	lookup := map[string]string{}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		lookup[k] = v
	}
	var stdout, stderr strings.Builder
	if err := run(context.Background(), []string{"-now"}, envconfig.MapLookuper(lookup), &stdout, &stderr); err != nil ||
		!strings.Contains(stdout.String(), "asked the syncer daemon (pid "+strconv.Itoa(cmd.Process.Pid)+")") {
		t.Fatalf("syncer -now: %v %q %q", err, stdout.String(), stderr.String())
	}
	waitLog(`"msg":"sync finished"`, 2)
	time.Sleep(500 * time.Millisecond) // the deliveries' check after the sync
	cmd.Process.Signal(syscall.SIGTERM)
	cmd.Wait()
	logs := out.String()
	for _, want := range []string{`"msg":"no warehouse published yet: the first sync runs now"`, `"msg":"run now","why":"start"`,
		`"msg":"a sync was asked for (SIGUSR1, syncer -now)"`, `"msg":"run now","why":"asked"`} {
		if !strings.Contains(logs, want) {
			t.Errorf("logs lack %s:\n%s", want, logs)
		}
	}
	if strings.Contains(logs, "delivery failed") || strings.Contains(logs, `"level":"ERROR"`) {
		t.Errorf("a delivery failed or an error was logged:\n%s", logs)
	}
	if m, _ := filepath.Glob(filepath.Join(outbox, "*.eml")); len(m) != 0 {
		t.Errorf("the new install sent %v: an occurrence before it, or an alert", m)
	}
	stdout.Reset()
	err := run(context.Background(), []string{"-now"}, envconfig.MapLookuper(lookup), &stdout, &stderr)
	if err == nil || !strings.Contains(err.Error(), "no syncer daemon runs beside") {
		t.Errorf("syncer -now without a daemon: %v", err)
	}
}

package main

import (
	"context"
	"errors"
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
// and every sync still succeeds on time.
func TestDaemonDeliveriesNeverFailTheSync(t *testing.T) {
	srv := newSandbox(t)
	dir := t.TempDir()
	db := filepath.Join(dir, "w.duckdb")
	sched := filepath.Join(dir, "deliveries.yaml")
	os.WriteFile(sched, []byte("deliveries:\n  - name: nightly\n    reports: [aging]\n    schedule: \"0 0 * * *\"\n"+
		"    as_of: yesterday\n    late_window: 25h\n    to: [finance@toko.example]\n"), 0o644)
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
	deadline := time.Now().Add(90 * time.Second)
	failed := regexp.MustCompile(`"msg":"delivery failed; trying again later".*connection refused`)
	for !failed.MatchString(out.String()) {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("no delivery failure within 90s:\n%s", out.String())
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

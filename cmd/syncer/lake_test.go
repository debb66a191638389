package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	conf "github.com/billsync/billsync/internal/config"
	"github.com/billsync/billsync/internal/lake"
	"github.com/billsync/billsync/internal/logbuf"
	"github.com/sethvargo/go-envconfig"
)

// TestLakeBehindAsAnOperatorSeesIt: the daemon syncs into a lake that refuses every write (its
// root is a file). Each run still publishes; syncer status says the lake is behind by the runs
// it missed, with the error; the operators get one alert however many runs it lasts. The root
// repaired, the next run commits what was missing, status is well again and the alert ends;
// the daemon's lake maintenance runs on its schedule beside the syncs.
func TestLakeBehindAsAnOperatorSeesIt(t *testing.T) {
	srv := newSandbox(t)
	dir := t.TempDir()
	db := filepath.Join(dir, "w.duckdb")
	outbox := filepath.Join(dir, "outbox")
	root := filepath.Join(dir, "lake")
	if err := os.WriteFile(root, []byte("not a directory"), 0o644); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"BILLSYNC_BASE_URL": srv.URL, "BILLSYNC_API_KEY": secret, "BILLSYNC_DB": db,
		"BILLSYNC_RATE_PER_MIN": "0", "BILLSYNC_ACCOUNT": "toko", "BILLSYNC_OUTBOX": outbox, "BILLSYNC_ALERTS_TO": "ops@toko.example",
		"BILLSYNC_LAKE": "file://" + root, "BILLSYNC_LAKE_CATALOG": "sqlite://" + filepath.Join(dir, "catalog.db"),
		"BILLSYNC_TZ": "Asia/Jakarta", "BILLSYNC_LAKE_MAINTAIN": "* * * * *"}
	cmd := exec.Command(os.Args[0], "-schedule", "0 2 * * *")
	cmd.Env = append(os.Environ(), "SYNCER_TEST_MAIN=1")
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	var out logbuf.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	waitFor := func(what string, ok func() bool) {
		t.Helper()
		for deadline := time.Now().Add(90 * time.Second); !ok(); time.Sleep(50 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("no %s within 90s:\n%s", what, out.String())
			}
		}
	}
	// n runs have ended (the daemon announces its next run after each, and once at its start)
	syncs := func(n int) {
		t.Helper()
		waitFor(`"next run at"`, func() bool { return strings.Count(out.String(), `"msg":"next run at"`) >= n+1 })
	}
	alerts := func() (problem, resolved int) {
		files, _ := filepath.Glob(filepath.Join(outbox, "*.eml"))
		for _, f := range files {
			b, _ := os.ReadFile(f)
			problem += strings.Count(string(b), "Subject: [billsync] PROBLEM: the lake is behind the published warehouse")
			resolved += strings.Count(string(b), "Subject: [billsync] RESOLVED: the lake is behind the published warehouse")
		}
		return problem, resolved
	}
	now := func() {
		t.Helper()
		var stdout, stderr strings.Builder
		if err := run(context.Background(), []string{"-now"}, envconfig.MapLookuper(env), &stdout, &stderr); err != nil {
			t.Fatalf("syncer -now: %v %s", err, stderr.String())
		}
	}
	status := func() (string, int) {
		o, e, code := syncer(t, env, "status")
		return o + e, code
	}

	syncs(1) // a new install syncs at start
	now()
	syncs(2)
	if !published(db) {
		t.Fatal("the syncs published nothing")
	}
	waitFor("the lake alert", func() bool { p, _ := alerts(); return p >= 1 })
	st, code := status()
	t.Logf("two runs into a lake that refuses:\n%s", st)
	for _, want := range []string{"lake: behind by 2 runs since", "not a directory",
		"account toko: the lake is behind the published warehouse by 2 runs:"} {
		if code != 3 || !strings.Contains(st, want) {
			t.Errorf("status: exit %d, no %q", code, want)
		}
	}
	if p, r := alerts(); p != 1 || r != 0 {
		t.Errorf("alerts: %d PROBLEM, %d RESOLVED; want one PROBLEM for two runs", p, r)
	}

	// The operator repairs the lake's root; the next run catches up.
	if err := os.Remove(root); err != nil {
		t.Fatal(err)
	}
	now()
	syncs(3)
	waitFor("the lake's RESOLVED alert", func() bool { _, r := alerts(); return r >= 1 })
	st, code = status()
	t.Logf("the next run after the repair:\n%s", st)
	if code != 0 || !strings.Contains(st, "lake: committed") || strings.Contains(st, "behind") {
		t.Errorf("status after the catch-up: exit %d\n%s", code, st)
	}
	// the daemon's maintenance (every minute here) runs beside the syncs
	mark := len(out.String())
	waitFor("the daemon's lake maintenance", func() bool { return strings.Contains(out.String()[mark:], `"msg":"lake maintained"`) })
	cmd.Process.Signal(syscall.SIGTERM)
	cmd.Wait()
	if strings.Contains(out.String(), "lake maintenance failed") {
		t.Errorf("the daemon's lake maintenance failed:\n%s", out.String())
	}
	if p, r := alerts(); p != 1 || r != 1 {
		t.Errorf("alerts: %d PROBLEM, %d RESOLVED; want one each", p, r)
	}
	lk, err := lake.Open(context.Background(), conf.Lake{LakeAccess: conf.LakeAccess{Root: env["BILLSYNC_LAKE"], Catalog: env["BILLSYNC_LAKE_CATALOG"], Namespace: "billsync"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer lk.Close()
	for _, name := range []string{"customers", "invoices", "reviews"} {
		if run, err := lk.LastRun(context.Background(), name, "toko"); err != nil || run != 3 {
			t.Errorf("lake table %s holds run %d of toko (%v); want the published run 3", name, run, err)
		}
	}
}

// TestLakeRefusesTheSyncPublishes: whichever way the lake refuses (its root unwritable, its
// catalog down), -once runs publish and exit 0, and syncer status counts the runs the lake
// missed, with the error.
func TestLakeRefusesTheSyncPublishes(t *testing.T) {
	for _, tc := range []struct {
		name      string
		lake      func(dir string) (root, catalog string)
		wantError string
	}{
		{"root unwritable", func(dir string) (string, string) {
			root := filepath.Join(dir, "lake")
			os.WriteFile(root, nil, 0o644)
			return "file://" + root, "sqlite://" + filepath.Join(dir, "catalog.db")
		}, "not a directory"},
		{"catalog down", func(dir string) (string, string) {
			return "file://" + filepath.Join(dir, "lake"), "postgres://billsync:hunter2@127.0.0.1:1/billsync?connect_timeout=2"
		}, "open the lake's catalog postgres://billsync:xxxxx@127.0.0.1:1/billsync"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := newSandbox(t)
			dir := t.TempDir()
			root, catalog := tc.lake(dir)
			env := map[string]string{"BILLSYNC_BASE_URL": srv.URL, "BILLSYNC_API_KEY": secret, "BILLSYNC_DB": filepath.Join(dir, "w.duckdb"),
				"BILLSYNC_RATE_PER_MIN": "0", "BILLSYNC_ACCOUNT": "toko", "BILLSYNC_LAKE": root, "BILLSYNC_LAKE_CATALOG": catalog}
			for range 2 {
				if o, e, code := syncer(t, env, "-once"); code != 0 {
					t.Fatalf("syncer -once: exit %d\n%s%s", code, o, e)
				}
			}
			o, e, code := syncer(t, env, "status")
			st := o + e
			if code != 3 || !strings.Contains(st, "lake: behind by 2 runs") || !strings.Contains(st, tc.wantError) || strings.Contains(st, "hunter2") {
				t.Errorf("status: exit %d, want the lake behind by 2 runs with %q (and no password)\n%s", code, tc.wantError, st)
			}
		})
	}
}

// TestLakeMaintainAsAnOperatorRunsIt: after two nights committed to the lake, syncer lake
// maintain reports each table's maintenance and exits 0; asked wrong, it says how to ask.
func TestLakeMaintainAsAnOperatorRunsIt(t *testing.T) {
	srv := newSandbox(t)
	dir := t.TempDir()
	env := map[string]string{"BILLSYNC_BASE_URL": srv.URL, "BILLSYNC_API_KEY": secret, "BILLSYNC_DB": filepath.Join(dir, "w.duckdb"),
		"BILLSYNC_RATE_PER_MIN": "0", "BILLSYNC_ACCOUNT": "toko", "BILLSYNC_LAKE": "file://" + filepath.Join(dir, "lake"),
		"BILLSYNC_LAKE_CATALOG": "sqlite://" + filepath.Join(dir, "catalog.db")}
	for range 2 {
		if o, e, code := syncer(t, env, "-once"); code != 0 {
			t.Fatalf("syncer -once: exit %d\n%s%s", code, o, e)
		}
	}
	o, e, code := syncer(t, env, "lake", "maintain", "-lake-keep", "48h")
	t.Logf("syncer lake maintain:\n%s%s", o, e)
	if code != 0 || !strings.Contains(o, "customers              0 month-end tags, 0 snapshots expired, 0 partitions compacted (0 files), 0 orphan files removed") ||
		!strings.Contains(o, "lake maintained in") {
		t.Errorf("syncer lake maintain: exit %d", code)
	}
	noLake := map[string]string{"BILLSYNC_DB": env["BILLSYNC_DB"]}
	for _, tc := range []struct {
		env  map[string]string
		args []string
		want string
	}{
		{env, []string{"lake"}, "no subcommand: want syncer lake maintain"},
		{env, []string{"lake", "compact"}, `unknown subcommand "compact"`},
		{env, []string{"lake", "maintain", "now"}, `unexpected argument "now"`},
		{env, []string{"lake", "maintain", "-lake-keep", "0s"}, "BILLSYNC_LAKE_KEEP"},
		{noLake, []string{"lake", "maintain"}, "no lake: set BILLSYNC_LAKE and BILLSYNC_LAKE_CATALOG"},
	} {
		o, e, code := syncer(t, tc.env, tc.args...)
		if code != 2 || !strings.Contains(o+e, tc.want) {
			t.Errorf("syncer %s: exit %d, want 2 and %q\n%s%s", strings.Join(tc.args, " "), code, tc.want, o, e)
		}
	}
}

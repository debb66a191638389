package main

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/billsync/billsync/internal/cli"
	"github.com/billsync/billsync/internal/cli/clitest"
	conf "github.com/billsync/billsync/internal/config"
	"github.com/billsync/billsync/internal/logbuf"
	"github.com/billsync/billsync/internal/sandbox"
	"github.com/billsync/billsync/internal/warehouse"
	"github.com/sethvargo/go-envconfig"
)

const secret = "sk-live-5f4e3d2c1b0a-do-not-log"

func TestMain(m *testing.M) {
	// Child mode: the test binary runs as the real command so a test can signal it.
	if os.Getenv("SYNCER_TEST_MAIN") == "1" {
		if as := os.Getenv("SYNCER_TEST_LOGIN"); as != "" {
			login = testLogin(as) // only this test binary: the command itself never takes a login from the environment
		}
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func TestLoadConfig(t *testing.T) {
	tests := []struct {
		name    string
		env     map[string]string
		args    []string
		check   func(*testing.T, *config)
		wantErr string
	}{
		{
			name: "defaults",
			check: func(t *testing.T, c *config) {
				if c.DB != "./data/billsync.duckdb" || c.RatePerMin != 20 || c.PageSize != 100 ||
					c.Schedule != "0 2 * * *" || c.TZ.String() != "Asia/Jakarta" || !c.Details || c.StopGrace != 30*time.Second ||
					c.MemoryLimit != conf.DefaultMemoryLimit {
					t.Errorf("defaults: %+v", c)
				}
			},
		},
		{
			name: "environment",
			env:  map[string]string{"BILLSYNC_DB": "/x.duckdb", "BILLSYNC_RATE_PER_MIN": "0", "BILLSYNC_MAX_DURATION": "45m"},
			check: func(t *testing.T, c *config) {
				if c.DB != "/x.duckdb" || c.RatePerMin != 0 || c.MaxDuration != 45*time.Minute {
					t.Errorf("env not applied: %+v", c)
				}
			},
		},
		{
			name: "flags override the environment",
			env:  map[string]string{"BILLSYNC_DB": "/env.duckdb", "BILLSYNC_PAGE_SIZE": "50"},
			args: []string{"-db", "/flag.duckdb", "-once"},
			check: func(t *testing.T, c *config) {
				if c.DB != "/flag.duckdb" || c.PageSize != 50 || !c.once {
					t.Errorf("flags: %+v", c)
				}
			},
		},
		{
			// report's old account variable is not the syncer's: it must not retag a sync's rows
			name: "account",
			env:  map[string]string{"BILLSYNC_REPORT_ACCOUNT": "prod"},
			check: func(t *testing.T, c *config) {
				if c.Account != "default" {
					t.Errorf("account %q, want default", c.Account)
				}
			},
		},
		{
			name: "options new to flags",
			env:  map[string]string{"BILLSYNC_STOP_GRACE": "1m", "BILLSYNC_LOCALE": "id"},
			args: []string{"-stop-grace", "2m", "-locale", "en", "-journal", "/j.duckdb", "-apply-approved", "-account", "prod"},
			check: func(t *testing.T, c *config) {
				if c.StopGrace != 2*time.Minute || c.Locale != "en" || c.Journal != "/j.duckdb" || !c.ApplyApproved || c.Account != "prod" {
					t.Errorf("flags: %+v", c)
				}
			},
		},
		{name: "bad number", env: map[string]string{"BILLSYNC_PAGE_SIZE": "many"}, wantErr: "BILLSYNC_PAGE_SIZE"},
		{name: "bad duration", env: map[string]string{"BILLSYNC_STOP_GRACE": "soon"}, wantErr: `BILLSYNC_STOP_GRACE (-stop-grace) "soon"`},
		{name: "zero page size", args: []string{"-page-size", "0"}, wantErr: "BILLSYNC_PAGE_SIZE (-page-size) 0"},
		{name: "negative rate", args: []string{"-rate", "-1"}, wantErr: "BILLSYNC_RATE_PER_MIN (-rate) -1"},
		{name: "log format", args: []string{"-log-format", "xml"}, wantErr: `BILLSYNC_LOG_FORMAT (-log-format) "xml"`},
		{name: "memory limit", env: map[string]string{"BILLSYNC_MEMORY_LIMIT": "lots"}, wantErr: `BILLSYNC_MEMORY_LIMIT (-memory-limit) "lots"`},
		{
			name: "memory limit sizes",
			env:  map[string]string{"BILLSYNC_MEMORY_LIMIT": "1.5 GiB"},
			check: func(t *testing.T, c *config) {
				if c.MemoryLimit != "1.5 GiB" {
					t.Errorf("memory limit %q", c.MemoryLimit)
				}
			},
		},
		{name: "stray argument", args: []string{"now"}, wantErr: `unexpected argument "now"`},
		// Checked whatever the mode: a -once run with a bad zone or schedule fails at once.
		{name: "zone checked with -once", args: []string{"-once", "-tz", "Jakarta"}, wantErr: `time zone "Jakarta"`},
		{name: "schedule checked with -demo", args: []string{"-demo", "-schedule", "61 * * * *"}, wantErr: "schedule"},
		{name: "CRON_TZ prefix", env: map[string]string{"BILLSYNC_SCHEDULE": "CRON_TZ=Asia/Jakarta 0 2 * * *"}, wantErr: "BILLSYNC_TZ"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := loadConfig(context.Background(), tc.args, envconfig.MapLookuper(tc.env))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want it to contain %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, c)
		})
	}
}

// TestHelpListsEveryOption: syncer -h shows every option with its flag and variable (the key
// has no flag), and -h exits 0 with the usage on stdout whatever the environment holds.
func TestHelpListsEveryOption(t *testing.T) {
	out, errs, code := syncer(t, map[string]string{"BILLSYNC_PAGE_SIZE": "50"}, "-h")
	if code != 0 || errs != "" || !strings.HasPrefix(out, "usage: syncer") {
		t.Fatalf("-h: exit %d, stderr %q, stdout %q", code, errs, out)
	}
	for _, o := range conf.Options(&config{}) {
		if o.Flag == "" {
			if o.Env != "BILLSYNC_API_KEY" {
				t.Errorf("%s has no flag", o.Env)
			}
			continue
		}
		if !strings.Contains(out, "  -"+o.Flag+" ") && !strings.Contains(out, "  -"+o.Flag+"\n") || !strings.Contains(out, "("+o.Env+")") {
			t.Errorf("-h does not show -%s with (%s)", o.Flag, o.Env)
		}
	}
	if !strings.Contains(out, "(BILLSYNC_PAGE_SIZE) (default 50)") {
		t.Errorf("-h does not show the environment's value as the default:\n%s", out)
	}
	if strings.Contains(out, "-api-key ") {
		t.Errorf("-h shows a flag for the key:\n%s", out)
	}
}

func TestAccounts(t *testing.T) {
	keyFile := filepath.Join(t.TempDir(), "key")
	os.WriteFile(keyFile, []byte(secret+"\n"), 0o600)
	tests := []struct {
		name    string
		env     map[string]string
		want    []accountSpec
		wantErr string
	}{
		{name: "no base url", wantErr: "BILLSYNC_BASE_URL (-base-url) is not set"},
		{name: "no key", env: map[string]string{"BILLSYNC_BASE_URL": "http://x"}, wantErr: "no API key"},
		{
			name: "key file, trimmed",
			env:  map[string]string{"BILLSYNC_BASE_URL": "http://x", "BILLSYNC_API_KEY_FILE": keyFile},
			want: []accountSpec{{name: "default", baseURL: "http://x", key: secret}},
		},
		{
			name:    "key and key file",
			env:     map[string]string{"BILLSYNC_BASE_URL": "http://x", "BILLSYNC_API_KEY": "a", "BILLSYNC_API_KEY_FILE": keyFile},
			wantErr: "use one",
		},
		{
			name: "several accounts",
			env: map[string]string{
				"BILLSYNC_ACCOUNTS":                "prod=https://a.example, sandbox-eu=http://b.example",
				"BILLSYNC_API_KEY_PROD":            "k1",
				"BILLSYNC_API_KEY_FILE_SANDBOX_EU": keyFile,
			},
			want: []accountSpec{{"prod", "https://a.example", "k1"}, {"sandbox-eu", "http://b.example", secret}},
		},
		{name: "account twice", env: map[string]string{"BILLSYNC_ACCOUNTS": "a=http://x,a=http://y"}, wantErr: "twice"},
		{name: "malformed accounts", env: map[string]string{"BILLSYNC_ACCOUNTS": "prod"}, wantErr: "want name=base-url"},
		{name: "account without key", env: map[string]string{"BILLSYNC_ACCOUNTS": "prod=http://x"}, wantErr: "BILLSYNC_API_KEY_PROD"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			lookup := envconfig.MapLookuper(tc.env)
			c, err := loadConfig(context.Background(), nil, lookup)
			if err != nil && !strings.Contains(err.Error(), "BILLSYNC_ACCOUNTS") {
				t.Fatal(err)
			}
			var got []accountSpec
			if err == nil {
				got, err = c.accounts(lookup)
			}
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want it to contain %q", err, tc.wantErr)
				}
				if strings.Contains(err.Error(), secret) {
					t.Fatal("error reveals the key")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Errorf("account %d = %+v, want %+v", i, got[i], tc.want[i])
				}
			}
		})
	}
}

func newSandbox(t *testing.T) *httptest.Server {
	t.Helper()
	sb, err := sandbox.New(sandbox.Options{Seed: 1, Scale: 0.02, Key: secret,
		Now: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(sb)
	t.Cleanup(srv.Close)
	return srv
}

func TestOnceSyncsTwoAccountsIntoOneWarehouse(t *testing.T) {
	a, b := newSandbox(t), newSandbox(t)
	db := filepath.Join(t.TempDir(), "w.duckdb")
	env := envconfig.MapLookuper(map[string]string{
		"BILLSYNC_ACCOUNTS":       "shop-a=" + a.URL + ",shop-b=" + b.URL,
		"BILLSYNC_API_KEY_SHOP_A": secret,
		"BILLSYNC_API_KEY_SHOP_B": secret,
		"BILLSYNC_DB":             db,
		"BILLSYNC_RATE_PER_MIN":   "0",
	})
	var stdout, stderr bytes.Buffer
	if err := run(context.Background(), []string{"-once"}, env, &stdout, &stderr); err != nil {
		t.Fatalf("run: %v\n%s", err, stderr.String())
	}
	if strings.Contains(stdout.String()+stderr.String(), secret) {
		t.Fatal("the API key appears in the output")
	}
	if !strings.Contains(stderr.String(), `"msg":"sync finished"`) {
		t.Errorf("no JSON log line for the finished sync (not a terminal):\n%s", stderr.String())
	}
	w, err := warehouse.OpenReadOnly(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	counts := map[string]int64{}
	rows, err := w.Query("SELECT account, count(*) FROM customers GROUP BY account")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var acct string
		var n int64
		rows.Scan(&acct, &n)
		counts[acct] = n
	}
	// Both simulators hold the same seeded customers; each account has its own copy.
	if len(counts) != 2 || counts["shop-a"] == 0 || counts["shop-a"] != counts["shop-b"] {
		t.Fatalf("customers per account: %v", counts)
	}
}

func TestOnceFailsNamingThe401AndNoKey(t *testing.T) {
	srv := newSandbox(t)
	db := filepath.Join(t.TempDir(), "w.duckdb")
	env := envconfig.MapLookuper(map[string]string{
		"BILLSYNC_BASE_URL": srv.URL, "BILLSYNC_API_KEY": secret + "-wrong", "BILLSYNC_DB": db, "BILLSYNC_RATE_PER_MIN": "0",
	})
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), []string{"-once"}, env, &stdout, &stderr)
	if err == nil {
		t.Fatal("a wrong key synced")
	}
	if msg := err.Error(); !strings.Contains(msg, "401") || !strings.Contains(msg, "refused the API key") ||
		!strings.Contains(msg, "BILLSYNC_API_KEY or BILLSYNC_API_KEY_FILE") || strings.Contains(msg, "/hl/") {
		t.Errorf("exit message %q: want it to name the 401 as the key's, with the variable to check, and no endpoint", msg)
	}
	if n := strings.Count(stderr.String(), "refused the API key"); n != 1 {
		t.Errorf("the refusal is logged %d times, want once:\n%s", n, stderr.String())
	}
	if strings.Contains(err.Error()+stdout.String()+stderr.String(), secret) {
		t.Fatal("the API key appears in the error or the logs")
	}
	if _, err := os.Stat(db); !os.IsNotExist(err) {
		t.Errorf("a failed first sync published a warehouse: %v", err)
	}
}

// TestExitShowsEveryProblem: a failure with several problems (here applying approved plans fails
// for each of two accounts) ends the command with all of them, as the person sees it on stderr.
func TestExitShowsEveryProblem(t *testing.T) {
	a, b := newSandbox(t), newSandbox(t)
	dir := t.TempDir()
	journal := filepath.Join(dir, "not-a-journal.duckdb")
	if err := os.WriteFile(journal, []byte("this is not a DuckDB file\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-once")
	cmd.Env = append(os.Environ(), "SYNCER_TEST_MAIN=1", "BILLSYNC_ACCOUNTS=shop-a="+a.URL+",shop-b="+b.URL,
		"BILLSYNC_API_KEY_SHOP_A="+secret, "BILLSYNC_API_KEY_SHOP_B="+secret, "BILLSYNC_DB="+filepath.Join(dir, "w.duckdb"),
		"BILLSYNC_RATE_PER_MIN=0", "BILLSYNC_APPLY_APPROVED=true", "BILLSYNC_JOURNAL="+journal)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Fatalf("exit %v, want status 1\n%s", err, stderr.String())
	}
	_, msg, ok := strings.Cut(stderr.String(), "\nsyncer: ")
	if !ok {
		t.Fatalf("no final syncer: message on stderr:\n%s", stderr.String())
	}
	for _, want := range []string{"apply approved plans of shop-a: job journal " + journal,
		"\napply approved plans of shop-b: job journal " + journal} {
		if !strings.Contains(msg, want) {
			t.Errorf("exit message lacks %q:\n%s", want, msg)
		}
	}
	if strings.Contains(stdout.String()+stderr.String(), secret) {
		t.Fatal("the API key appears in the output")
	}
}

func TestDaemonStopsCleanlyOnSIGTERM(t *testing.T) {
	srv := newSandbox(t)
	dir := t.TempDir()
	db := filepath.Join(dir, "w.duckdb")
	cmd := exec.Command(os.Args[0], "-schedule", "@every 1s", "-metrics-addr", "127.0.0.1:0")
	cmd.Env = append(os.Environ(), "SYNCER_TEST_MAIN=1", "BILLSYNC_BASE_URL="+srv.URL,
		"BILLSYNC_API_KEY="+secret, "BILLSYNC_DB="+db, "BILLSYNC_RATE_PER_MIN=0", "BILLSYNC_STOP_GRACE=20s")
	var out logbuf.Buffer // read while the process writes it
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Stopped between runs once one has been published and the next announced: a stop that
	// arrives before the run's own announcement rightly suppresses it.
	deadline := time.Now().Add(30 * time.Second)
	for !published(db) || strings.Count(out.String(), `"msg":"next run at"`) < 2 {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("no sync published and the next announced within 30s:\n%s", out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	// The operators' alerts are on /metrics beside the sync's, each at 0 while all is well.
	addr := regexp.MustCompile(`"msg":"metrics served","addr":"([^"]+)"`).FindStringSubmatch(out.String())
	if addr == nil {
		cmd.Process.Kill()
		t.Fatalf("no metrics address logged:\n%s", out.String())
	}
	var exposition string
	for _, want := range []string{`billsync_alert_active{alert="sync_failed"} 0`, `billsync_alert_active{alert="unresolved_jobs"} 0`,
		`billsync_deliveries_total{outcome="sent"} 0`, "billsync_last_delivery_success_timestamp_seconds 0"} {
		for !strings.Contains(exposition, want+"\n") && time.Now().Before(deadline.Add(30*time.Second)) {
			if resp, err := http.Get("http://" + addr[1] + "/metrics"); err == nil {
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				exposition = string(b)
			}
			time.Sleep(50 * time.Millisecond)
		}
		if !strings.Contains(exposition, want+"\n") {
			t.Errorf("/metrics lacks %q:\n%s", want, exposition)
		}
	}
	// syncer status sees the daemon at work, and its next tick.
	stEnv := map[string]string{"BILLSYNC_DB": db, "BILLSYNC_SCHEDULE": "@every 1s"}
	if st, _, _ := syncer(t, stEnv, "status"); !strings.Contains(st, fmt.Sprintf("  daemon, pid %d", cmd.Process.Pid)) {
		t.Errorf("syncer status does not see the daemon (pid %d):\n%s", cmd.Process.Pid, st)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("daemon exit: %v\n%s", err, out.String())
		}
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("daemon did not stop after SIGTERM:\n%s", out.String())
	}
	logs := out.String()
	for _, want := range []string{`"msg":"syncer started"`, `"msg":"sync finished"`, `"msg":"metrics served"`,
		`"level":"INFO","msg":"stopping"`, `"level":"INFO","msg":"stopped"`} {
		if !strings.Contains(logs, want) {
			t.Errorf("logs lack %s:\n%s", want, logs)
		}
	}
	// The next run is announced at start and after each run, in the schedule's zone (WIB).
	if n := strings.Count(logs, `"msg":"next run at"`); n < 2 || !strings.Contains(logs, "+07:00") {
		t.Errorf("%d next-run announcements in +07:00, want at start and after the run:\n%s", n, logs)
	}
	// One format off a terminal, durations as Go writes them, and a stop is no failure.
	for _, line := range strings.Split(strings.TrimSpace(logs), "\n") {
		if !strings.HasPrefix(line, "{") {
			t.Errorf("not a JSON log line: %q", line)
		}
	}
	if strings.Contains(logs, `"msg":"merged"`) && strings.Contains(logs, `"staged":0,`) {
		t.Errorf("an empty merge logged beside the batch's own merged line:\n%s", logs)
	}
	if regexp.MustCompile(`"(took|elapsed)":\d`).MatchString(logs) || strings.Contains(logs, `"level":"ERROR"`) {
		t.Errorf("a duration in nanoseconds or an ERROR on a clean stop:\n%s", logs)
	}
	if strings.Contains(logs, secret) {
		t.Fatal("the API key appears in the daemon's logs")
	}
	if _, err := os.Stat(db + ".lock"); !os.IsNotExist(err) {
		t.Errorf("the lock file stayed behind: %v", err)
	}
	if st, _, code := syncer(t, stEnv, "status"); code != 0 || !strings.Contains(st, "no daemon runs; the last one stopped") {
		t.Errorf("syncer status after the stop: exit %d\n%s", code, st)
	}
}

func published(path string) bool {
	db, err := sql.Open("duckdb", path+"?access_mode=READ_ONLY")
	if err != nil {
		return false
	}
	defer db.Close()
	var n int
	return db.QueryRow("SELECT count(*) FROM sync_runs WHERE status = 'succeeded'").Scan(&n) == nil && n > 0
}

// TestTextLogsOffATerminal: BILLSYNC_LOG_FORMAT=text without a terminal still says that the syncer
// started and how the run ended.
func TestTextLogsOffATerminal(t *testing.T) {
	srv := newSandbox(t)
	env := envconfig.MapLookuper(map[string]string{
		"BILLSYNC_BASE_URL": srv.URL, "BILLSYNC_API_KEY": secret, "BILLSYNC_DB": filepath.Join(t.TempDir(), "w.duckdb"),
		"BILLSYNC_RATE_PER_MIN": "0", "BILLSYNC_LOG_FORMAT": "text", "BILLSYNC_MAX_CLOCK_SKEW": "8760h",
	})
	var stdout, stderr bytes.Buffer
	if err := run(context.Background(), []string{"-once"}, env, &stdout, &stderr); err != nil {
		t.Fatalf("run: %v\n%s", err, stderr.String())
	}
	for _, want := range []string{"level=INFO msg=\"syncer started\"", "level=INFO msg=\"sync finished\" status=succeeded"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("text log lacks %q:\n%s", want, stderr.String())
		}
	}
	// The log's times are on the clock of every other output: BILLSYNC_TZ (the default, Jakarta),
	// RFC 3339 with the offset, text and JSON alike.
	jkt, _ := time.LoadLocation("Asia/Jakarta")
	if bad := clitest.Unzoned(stderr.String(), jkt, time.Now()); len(bad) > 0 || !strings.Contains(stderr.String(), "+07:00 level=INFO") {
		t.Errorf("text log times %q off the WIB clock:\n%s", bad, stderr.String())
	}
	stderr.Reset()
	jsonEnv := envconfig.MapLookuper(map[string]string{
		"BILLSYNC_BASE_URL": srv.URL, "BILLSYNC_API_KEY": secret, "BILLSYNC_DB": filepath.Join(t.TempDir(), "w.duckdb"),
		"BILLSYNC_RATE_PER_MIN": "0", "BILLSYNC_LOG_FORMAT": "json", "BILLSYNC_MAX_CLOCK_SKEW": "8760h",
	})
	if err := run(context.Background(), []string{"-once"}, jsonEnv, &stdout, &stderr); err != nil {
		t.Fatalf("run: %v\n%s", err, stderr.String())
	}
	if bad := clitest.Unzoned(stderr.String(), jkt, time.Now()); len(bad) > 0 || !regexp.MustCompile(`"time":"[0-9-]+T[0-9:.]+\+07:00"`).MatchString(stderr.String()) {
		t.Errorf("JSON log times %q off the WIB clock:\n%s", bad, stderr.String())
	}
}

// TestConfigErrorPointsToHelp: a configuration mistake prints the problem and one line pointing
// to -h, exit 2, not the whole usage.
func TestConfigErrorPointsToHelp(t *testing.T) {
	for _, tc := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"BILLSYNC_PAGE_SIZE": "0"}, "syncer: BILLSYNC_PAGE_SIZE (-page-size) 0: 0 has no meaning here: want a value above 0; default 100\n"},
		{map[string]string{"BILLSYNC_MAX_CLOCK_SKEW": "-1m"}, "syncer: BILLSYNC_MAX_CLOCK_SKEW (-max-clock-skew) -1m0s: cannot be negative; default 5m\n"},
	} {
		err := run(context.Background(), []string{"-once"}, envconfig.MapLookuper(tc.env), io.Discard, io.Discard)
		var stdout, stderr bytes.Buffer
		code := cli.Exit("syncer", err, &stdout, &stderr)
		if code != 2 || !strings.Contains(stderr.String(), tc.want) || strings.Count(stderr.String(), "\n") != 2 ||
			!strings.HasSuffix(stderr.String(), "run 'syncer -h' for the flags and their environment variables\n") {
			t.Errorf("%v: exit %d, stderr %q", tc.env, code, stderr.String())
		}
	}
}

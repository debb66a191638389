package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/billsync/billsync/internal/cli"
	conf "github.com/billsync/billsync/internal/config"

	"github.com/sethvargo/go-envconfig"
)

func TestConfig(t *testing.T) {
	for _, tc := range []struct {
		name    string
		env     map[string]string
		args    []string
		check   func(*config) bool
		wantErr string
	}{
		{"defaults", nil, nil, func(c *config) bool {
			return c.DB == "./data/billsync.duckdb" && c.TZ.String() == "Asia/Jakarta" && c.Currency == "IDR" && c.ReportsOut == "./out"
		}, ""},
		{"env", map[string]string{"BILLSYNC_DB": "/d/w.duckdb", "BILLSYNC_REPORTS_OUT": "/r", "BILLSYNC_JOURNAL": "/d/j.duckdb"}, nil,
			func(c *config) bool {
				return c.DB == "/d/w.duckdb" && c.ReportsOut == "/r" && c.Journal == "/d/j.duckdb"
			}, ""},
		{"flags override env", map[string]string{"BILLSYNC_TZ": "UTC"}, []string{"-tz", "Asia/Makassar", "-var", "bucket_1=15", "aging", "credit"},
			func(c *config) bool {
				return c.TZ.String() == "Asia/Makassar" && c.vars["bucket_1"] == "15" && strings.Join(c.names, ",") == "aging,credit"
			}, ""},
		{"account", map[string]string{"BILLSYNC_ACCOUNT": "prod"}, nil, func(c *config) bool { return c.Account == "prod" && len(c.warnings) == 0 }, ""},
		{"old account variable", map[string]string{"BILLSYNC_REPORT_ACCOUNT": "prod"}, nil, func(c *config) bool {
			return c.Account == "prod" && len(c.warnings) == 1 && strings.Contains(c.warnings[0], "BILLSYNC_REPORT_ACCOUNT is deprecated")
		}, ""},
		{"account flag over both variables", map[string]string{"BILLSYNC_REPORT_ACCOUNT": "old", "BILLSYNC_ACCOUNT": "new"}, []string{"-account", "flag"},
			func(c *config) bool { return c.Account == "flag" && len(c.warnings) == 1 }, ""},
		{"-out", map[string]string{"BILLSYNC_REPORTS_OUT": "/env"}, []string{"-out", "/flag"}, func(c *config) bool { return c.ReportsOut == "/flag" }, ""},
		{"-reports-out", nil, []string{"-reports-out", "/flag"}, func(c *config) bool { return c.ReportsOut == "/flag" }, ""},
		{"bad date", nil, []string{"-as-of", "31/10/2026"}, nil, "-as-of"},
		{"bad var", nil, []string{"-var", "bucket_1"}, nil, "name=value"},
		{"two modes", nil, []string{"-list", "-sql", "SELECT 1"}, nil, "only one"},
		{"export format", nil, []string{"-export", "orc"}, nil, "parquet"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := loadConfig(context.Background(), tc.args, envconfig.MapLookuper(tc.env))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !tc.check(c) {
				t.Errorf("config %+v", c)
			}
		})
	}
}

// TestExitStatus: -h is no error (usage on stdout, 0); a usage mistake is 2 with the usage on
// stderr; a runtime failure is 1.
func TestExitStatus(t *testing.T) {
	for _, tc := range []struct {
		args           []string
		code           int
		stdout, stderr string
	}{
		{[]string{"-h"}, 0, "usage: report", ""},
		{[]string{"--help"}, 0, "-sql @queries/", ""},
		{[]string{"-format", "pdf", "aging"}, 2, "", "-format \"pdf\""},
		{[]string{"-var", "bucket_1=100", "aging"}, 2, "", "bucket_2=60 must be above bucket_1=100"},
		{[]string{"-list", "aging"}, 2, "", "go without -list"},
		{[]string{"-tz", "Jakarta", "-list"}, 2, "", `invalid value "Jakarta" for flag -tz: time zone "Jakarta": want an IANA name`},
		{[]string{"-db", "/nonexistent/w.duckdb", "aging"}, 1, "", "does not exist yet"},
		{[]string{"-db", "/nonexistent/w.duckdb", "-sql", "@/nonexistent/q.sql"}, 1, "", "/nonexistent/q.sql"},
	} {
		var stdout, stderr bytes.Buffer
		err := run(context.Background(), tc.args, envconfig.MapLookuper(nil), strings.NewReader(""), &stdout, &stderr)
		code := cli.Exit("report", err, &stdout, &stderr)
		if code != tc.code || !strings.Contains(stdout.String(), tc.stdout) || !strings.Contains(stderr.String(), tc.stderr) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want %d, %q, %q", tc.args, code, stdout.String(), stderr.String(), tc.code, tc.stdout, tc.stderr)
		}
	}
}

// TestOldAccountVariableWarns: a cron line that still sets BILLSYNC_REPORT_ACCOUNT keeps working
// and its log says what to change.
func TestOldAccountVariableWarns(t *testing.T) {
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), []string{"-list"}, envconfig.MapLookuper(map[string]string{"BILLSYNC_REPORT_ACCOUNT": "prod"}),
		strings.NewReader(""), &stdout, &stderr)
	if err != nil {
		t.Fatal(err)
	}
	if want := "BILLSYNC_REPORT_ACCOUNT is deprecated: set BILLSYNC_ACCOUNT instead"; !strings.Contains(stderr.String(), want) ||
		!strings.Contains(stderr.String(), "level=WARN") {
		t.Errorf("stderr %q, want a warning %q", stderr.String(), want)
	}
}

// TestHelpListsEveryOption: -h shows every option report reads with its flag and variable. The
// options come from the declarations (a new setting is walked without a line here), so no count
// of them is pinned: a pinned count failed for every new setting, naming none that was missing.
func TestHelpListsEveryOption(t *testing.T) {
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), []string{"-h"}, envconfig.MapLookuper(nil), strings.NewReader(""), &stdout, &stderr)
	if cli.Exit("report", err, &stdout, &stderr) != 0 {
		t.Fatalf("-h: %v", err)
	}
	opts := conf.Options(&config{})
	if len(opts) == 0 {
		t.Fatal("report declares no options: nothing to look for in -h")
	}
	for _, o := range opts {
		if want := "  -" + o.Flag + " "; !strings.Contains(stdout.String(), want) || !strings.Contains(stdout.String(), "("+o.Env+")") {
			t.Errorf("-h does not show -%s with (%s):\n%s", o.Flag, o.Env, stdout.String())
		}
	}
	if !strings.Contains(stdout.String(), "  -out string\n    \tsame as -reports-out") {
		t.Errorf("-h does not show -out:\n%s", stdout.String())
	}
}

func TestSQLText(t *testing.T) {
	f := filepath.Join(t.TempDir(), "q.sql")
	os.WriteFile(f, []byte("SELECT 1;"), 0o644)
	for _, tc := range []struct{ arg, stdin, want string }{
		{"SELECT 2", "", "SELECT 2"},
		{"@" + f, "", "SELECT 1;"},
		{"-", "SELECT 3", "SELECT 3"},
	} {
		got, err := sqlText(tc.arg, strings.NewReader(tc.stdin))
		if err != nil || got != tc.want {
			t.Errorf("sqlText(%q) = %q, %v; want %q", tc.arg, got, err, tc.want)
		}
	}
}

// TestNoAPIClient: report reads the warehouse and the journal and never needs a key, so it must
// not even link the API client or the job writer (only the journal's small reader package).
func TestNoAPIClient(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	deps := strings.Fields(string(out))
	if !slices.Contains(deps, "github.com/billsync/billsync/internal/jobs/journalfile") {
		t.Fatalf("go list shows no journalfile among report's dependencies: %v", deps)
	}
	for _, d := range deps {
		if d == "github.com/billsync/billsync/internal/api" || d == "github.com/billsync/billsync/internal/jobs" {
			t.Errorf("report depends on %s", d)
		}
	}
}

package config_test

import (
	"bytes"
	"context"
	"flag"
	"strings"
	"testing"
	"time"

	"github.com/billsync/billsync/internal/config"
	"github.com/sethvargo/go-envconfig"
)

// all is every group, as a command embeds them.
type all struct {
	config.Files
	config.Scope
	config.Service
	config.Sync
	config.Report
	config.Delivery
	config.Jobs
	config.Approvals
}

func load(t *testing.T, env map[string]string, args ...string) (*all, []string, error) {
	t.Helper()
	var c all
	warnings, err := config.Load(context.Background(), &c, envconfig.MapLookuper(env), config.ReportAccountAlias)
	if err != nil {
		return nil, nil, err
	}
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	fs.SetOutput(new(bytes.Buffer))
	config.Bind(fs, &c)
	return &c, warnings, fs.Parse(args)
}

func TestEnvThenFlags(t *testing.T) {
	c, _, err := load(t, nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.DB != "./data/billsync.duckdb" || c.TZ != "Asia/Jakarta" || c.PageSize != 100 || c.RatePerMin != 20 ||
		!c.Details || c.StopGrace != 30*time.Second || c.CreditRefresh != 168*time.Hour || c.Account != "" || c.ReportsOut != "./out" {
		t.Errorf("defaults: %+v", c)
	}
	env := map[string]string{"BILLSYNC_DB": "/env.duckdb", "BILLSYNC_PAGE_SIZE": "50", "BILLSYNC_DETAILS": "false",
		"BILLSYNC_MAX_DURATION": "45m", "BILLSYNC_TZ": "UTC"}
	c, _, err = load(t, env, "-db", "/flag.duckdb", "-stop-grace", "1m", "-rate", "0", "-max-requests", "7")
	if err != nil {
		t.Fatal(err)
	}
	if c.DB != "/flag.duckdb" || c.PageSize != 50 || c.Details || c.MaxDuration != 45*time.Minute || c.TZ != "UTC" ||
		c.StopGrace != time.Minute || c.RatePerMin != 0 || c.MaxRequests != 7 {
		t.Errorf("env then flags: %+v", c)
	}
}

func TestEnvErrorNamesTheVariable(t *testing.T) {
	for env, want := range map[string]string{
		"BILLSYNC_PAGE_SIZE":      "environment BILLSYNC_PAGE_SIZE:",
		"BILLSYNC_STOP_GRACE":     "environment BILLSYNC_STOP_GRACE:",
		"BILLSYNC_DETAILS":        "environment BILLSYNC_DETAILS:",
		"BILLSYNC_APPLY_APPROVED": "environment BILLSYNC_APPLY_APPROVED:",
	} {
		_, _, err := load(t, map[string]string{env: "many"})
		if err == nil || !strings.HasPrefix(err.Error(), want) || !strings.Contains(err.Error(), `"many"`) {
			t.Errorf("%s=many: %v, want an error starting %q and quoting the value", env, err, want)
		}
	}
}

func TestReportAccountAlias(t *testing.T) {
	for _, tc := range []struct {
		name    string
		env     map[string]string
		want    string
		warning string
	}{
		{"new name", map[string]string{"BILLSYNC_ACCOUNT": "prod"}, "prod", ""},
		{"old name", map[string]string{"BILLSYNC_REPORT_ACCOUNT": "prod"}, "prod",
			"BILLSYNC_REPORT_ACCOUNT is deprecated: set BILLSYNC_ACCOUNT instead"},
		{"both", map[string]string{"BILLSYNC_REPORT_ACCOUNT": "old", "BILLSYNC_ACCOUNT": "new"}, "new",
			"BILLSYNC_REPORT_ACCOUNT is deprecated and ignored: BILLSYNC_ACCOUNT is set"},
		{"neither", nil, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, warnings, err := load(t, tc.env)
			if err != nil {
				t.Fatal(err)
			}
			if c.Account != tc.want {
				t.Errorf("account %q, want %q", c.Account, tc.want)
			}
			if got := strings.Join(warnings, "\n"); got != tc.warning {
				t.Errorf("warnings %q, want %q", got, tc.warning)
			}
		})
	}
	// Without the alias (the syncer) the old name means nothing: it must not retag a sync's rows.
	var c all
	warnings, err := config.Load(context.Background(), &c, envconfig.MapLookuper(map[string]string{"BILLSYNC_REPORT_ACCOUNT": "prod"}))
	if err != nil || c.Account != "" || len(warnings) != 0 {
		t.Errorf("without the alias: account %q, warnings %v, err %v", c.Account, warnings, err)
	}
}

// Every option is declared whole: a unique variable, a unique flag with help unless it is
// environment only, and Bind can make its flag.
func TestDeclarations(t *testing.T) {
	envs, flags := map[string]bool{}, map[string]bool{}
	for _, o := range config.Options(&all{}) {
		if !strings.HasPrefix(o.Env, "BILLSYNC_") || envs[o.Env] {
			t.Errorf("variable %q: not BILLSYNC_ or declared twice", o.Env)
		}
		envs[o.Env] = true
		if o.Flag == "" {
			if o.Env != "BILLSYNC_API_KEY" {
				t.Errorf("%s has no flag", o.Env)
			}
			continue
		}
		if flags[o.Flag] || o.Help == "" {
			t.Errorf("flag -%s: declared twice or without help", o.Flag)
		}
		flags[o.Flag] = true
	}
	if len(envs) < 25 {
		t.Errorf("only %d options found: is a group missing from the walk?", len(envs))
	}
	if config.DefaultTZ != "Asia/Jakarta" {
		t.Errorf("DefaultTZ %q", config.DefaultTZ)
	}
}

func TestBindSomeAndAlias(t *testing.T) {
	var c all
	if _, err := config.Load(context.Background(), &c, envconfig.MapLookuper(map[string]string{"BILLSYNC_REPORTS_OUT": "/env"})); err != nil {
		t.Fatal(err)
	}
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	config.Bind(fs, &c, "db", "reports-out")
	config.FlagAlias(fs, "reports-out", "out")
	var names []string
	fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name+"="+f.DefValue) })
	if got := strings.Join(names, " "); got != "db=./data/billsync.duckdb out=/env reports-out=/env" {
		t.Errorf("flags %s", got)
	}
	if err := fs.Parse([]string{"-out", "/flag"}); err != nil || c.ReportsOut != "/flag" {
		t.Errorf("-out: %q, %v", c.ReportsOut, err)
	}
	defer func() {
		if recover() == nil {
			t.Error("Bind of an undeclared flag did not panic")
		}
	}()
	config.Bind(flag.NewFlagSet("t", flag.ContinueOnError), &c, "no-such-flag")
}

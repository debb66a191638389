package config_test

import (
	"bytes"
	"context"
	"flag"
	"slices"
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
	if c.DB != "./data/billsync.duckdb" || c.TZ.String() != "Asia/Jakarta" || c.PageSize != 100 || c.RatePerMin != 20 ||
		!c.Details || c.StopGrace != 30*time.Second || c.CreditRefresh != 168*time.Hour || c.Account != "" || c.ReportsOut != "./out" {
		t.Errorf("defaults: %+v", c)
	}
	env := map[string]string{"BILLSYNC_DB": "/env.duckdb", "BILLSYNC_PAGE_SIZE": "50", "BILLSYNC_DETAILS": "false",
		"BILLSYNC_MAX_DURATION": "45m", "BILLSYNC_TZ": "UTC"}
	c, _, err = load(t, env, "-db", "/flag.duckdb", "-stop-grace", "1m", "-rate", "0", "-max-requests", "7")
	if err != nil {
		t.Fatal(err)
	}
	if c.DB != "/flag.duckdb" || c.PageSize != 50 || c.Details || c.MaxDuration != 45*time.Minute || c.TZ.String() != "UTC" ||
		c.StopGrace != time.Minute || c.RatePerMin != 0 || c.MaxRequests != 7 {
		t.Errorf("env then flags: %+v", c)
	}
}

func TestEnvErrorNamesTheVariable(t *testing.T) {
	for env, want := range map[string]string{
		"BILLSYNC_PAGE_SIZE":      `BILLSYNC_PAGE_SIZE (-page-size) "many": want a whole number; default 100`,
		"BILLSYNC_STOP_GRACE":     `BILLSYNC_STOP_GRACE (-stop-grace) "many": want a duration such as 90s, 5m or 26h; default 30s`,
		"BILLSYNC_DETAILS":        `BILLSYNC_DETAILS (-details) "many": want true or false; default true`,
		"BILLSYNC_APPLY_APPROVED": `BILLSYNC_APPLY_APPROVED (-apply-approved) "many": want true or false; default false`,
		"BILLSYNC_RATE_PER_MIN":   `BILLSYNC_RATE_PER_MIN (-rate) "many": want a number; default 20`,
	} {
		_, _, err := load(t, map[string]string{env: "many"})
		if err == nil || err.Error() != want {
			t.Errorf("%s=many: %v, want %q", env, err, want)
		}
	}
	// every mistake at once
	_, _, err := load(t, map[string]string{"BILLSYNC_PAGE_SIZE": "x", "BILLSYNC_JOB_SETTLE": "y"})
	if err == nil || !strings.Contains(err.Error(), "BILLSYNC_PAGE_SIZE") || !strings.Contains(err.Error(), "BILLSYNC_JOB_SETTLE") {
		t.Errorf("two mistakes: %v", err)
	}
}

// TestCheck: a value that parses but means nothing is refused, naming the variable and flag;
// nothing is replaced by a default.
func TestCheck(t *testing.T) {
	for _, tc := range []struct {
		env  map[string]string
		args []string
		want string // "" = accepted
	}{
		{nil, nil, ""},
		{map[string]string{"BILLSYNC_JOB_SETTLE": "0s"}, nil, "BILLSYNC_JOB_SETTLE (-settle) 0s: 0 has no meaning here: want a value above 0; default 5m"},
		{map[string]string{"BILLSYNC_JOB_SETTLE": "-5m"}, nil, "BILLSYNC_JOB_SETTLE (-settle) -5m0s: cannot be negative; default 5m"},
		{nil, []string{"-settle", "0"}, "BILLSYNC_JOB_SETTLE (-settle) 0s: 0 has no meaning"},
		{map[string]string{"BILLSYNC_RATE_PER_MIN": "0", "BILLSYNC_MAX_DURATION": "0", "BILLSYNC_ALERT_DQ_MIN": "0", "BILLSYNC_STOP_GRACE": "0s"}, nil, ""},
		{map[string]string{"BILLSYNC_RATE_PER_MIN": "-1"}, nil, "BILLSYNC_RATE_PER_MIN (-rate) -1: cannot be negative (0 = off); default 20"},
		{map[string]string{"BILLSYNC_PAGE_SIZE": "0"}, nil, "BILLSYNC_PAGE_SIZE (-page-size) 0: 0 has no meaning here"},
		{map[string]string{"BILLSYNC_CREDIT_REFRESH": "0s"}, nil, "BILLSYNC_CREDIT_REFRESH (-credit-refresh) 0s: 0 has no meaning"},
		{map[string]string{"BILLSYNC_BASE_URL": "127.0.0.1:8080"}, nil, `BILLSYNC_BASE_URL (-base-url) "127.0.0.1:8080": want a scheme and a host, e.g. http://127.0.0.1:8080`},
		{map[string]string{"BILLSYNC_BASE_URL": "ftp://x.example"}, nil, `scheme "ftp"`},
		{map[string]string{"BILLSYNC_BASE_URL": "https://api.example.com"}, nil, ""},
		{map[string]string{"BILLSYNC_BASE_URL": "https://me:sk-secret@api.example.com"}, nil, `BILLSYNC_BASE_URL (-base-url) "https://…@api.example.com": a user or password`},
		{map[string]string{"BILLSYNC_ACCOUNTS": "a=https://a.example,a=b.example"}, nil, `account "a" named twice`},
		{map[string]string{"BILLSYNC_LOG_FORMAT": "yaml"}, nil, `BILLSYNC_LOG_FORMAT (-log-format) "yaml": want auto, json, text`},
		{map[string]string{"BILLSYNC_TZ": "Local"}, nil, `BILLSYNC_TZ (-tz) "Local": time zone "Local": want an IANA name`},
		{map[string]string{"BILLSYNC_MEMORY_LIMIT": "lots"}, nil, `BILLSYNC_MEMORY_LIMIT (-memory-limit) "lots": want a size`},
		{map[string]string{"BILLSYNC_MAIL_FROM": "billsync"}, nil, `BILLSYNC_MAIL_FROM (-mail-from) "billsync": address`},
		{map[string]string{"BILLSYNC_METRICS_ADDR": ":9090"}, nil, ""},
		{map[string]string{"BILLSYNC_METRICS_ADDR": "9090"}, nil, `BILLSYNC_METRICS_ADDR (-metrics-addr) "9090": want host:port`},
	} {
		c, _, err := load(t, tc.env, tc.args...)
		if err == nil {
			err = config.Check(c)
		}
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%v %v: %v, want %q", tc.env, tc.args, err, tc.want)
		}
	}
}

// TestRefusedIsRefused: the value each setting says it refuses (for the commands' tests that walk
// every setting) is refused by Load or Check here, for the kinds this package checks itself.
func TestRefusedIsRefused(t *testing.T) {
	domain := map[string]bool{"keyfile": true, "cron": true, "smtp": true, "reports": true, "locale": true, "dialect": true}
	for _, o := range config.Options(&all{}) {
		for _, v := range o.Refused() {
			if domain[o.Check] {
				continue // refused by the package that reads it; the commands' tests run it
			}
			c, _, err := load(t, map[string]string{o.Env: v})
			if err == nil {
				err = config.Check(c)
			}
			if err == nil || !strings.Contains(err.Error(), o.Env) {
				t.Errorf("%s=%q: %v, want it refused naming the variable", o.Env, v, err)
			}
		}
	}
}

// TestEmptyIsUnset: a variable set to "" gets its declared default, whatever its type.
func TestEmptyIsUnset(t *testing.T) {
	env := map[string]string{}
	for _, o := range config.Options(&all{}) {
		env[o.Env] = ""
	}
	c, _, err := load(t, env)
	if err != nil {
		t.Fatal(err)
	}
	d, _, _ := load(t, nil)
	if *c != *d {
		t.Errorf("empty variables: %+v\nwant the defaults %+v", c, d)
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
		if o.Flag == "" && o.Env != "BILLSYNC_API_KEY" {
			t.Errorf("%s has no flag", o.Env)
		}
		if o.Flag != "" && (flags[o.Flag] || o.Help == "") {
			t.Errorf("flag -%s: declared twice or without help", o.Flag)
		}
		flags[o.Flag] = true
		if o.Check != "" && o.Values() == nil && !slices.Contains(config.CheckKinds(), o.Check) {
			t.Errorf("%s: check %q is no kind (%v or oneof ...)", o.Env, o.Check, config.CheckKinds())
		}
		if (o.Check != "" || o.Kind() != "string") && len(o.Refused()) == 0 {
			t.Errorf("%s: a %s with check %q refuses nothing the commands' tests could try (Refused)", o.Env, o.Kind(), o.Check)
		}
		if o.Check != "" && o.Kind() != "string" {
			t.Errorf("%s: a check on a %s", o.Env, o.Kind())
		}
		// what 0 means is said in the help too, as the docs say it
		if o.Zero != "" && !strings.Contains(o.Help, "0 = "+o.Zero) {
			t.Errorf("%s: zero means %q, its help does not say \"0 = %s\": %q", o.Env, o.Zero, o.Zero, o.Help)
		}
		if o.Zero != "" && o.Kind() == "string" {
			t.Errorf("%s: a zero rule on text", o.Env)
		}
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

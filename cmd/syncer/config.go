package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"reflect"
	"regexp"
	"strings"
	"time"

	"github.com/billsync/billsync/internal/cli"
	"github.com/billsync/billsync/internal/report"
	"github.com/billsync/billsync/internal/schedule"
	"github.com/robfig/cron/v3"
	"github.com/sethvargo/go-envconfig"
)

// config is read from the environment first; command-line flags override it. Every field is
// documented in the README's configuration table.
type config struct {
	APIKey        string        `env:"BILLSYNC_API_KEY"`
	APIKeyFile    string        `env:"BILLSYNC_API_KEY_FILE"`
	BaseURL       string        `env:"BILLSYNC_BASE_URL"`
	Account       string        `env:"BILLSYNC_ACCOUNT, default=default"`
	Accounts      string        `env:"BILLSYNC_ACCOUNTS"`
	DB            string        `env:"BILLSYNC_DB, default=./data/billsync.duckdb"`
	Schedule      string        `env:"BILLSYNC_SCHEDULE, default=0 2 * * *"`
	TZ            string        `env:"BILLSYNC_TZ, default=Asia/Jakarta"`
	RatePerMin    float64       `env:"BILLSYNC_RATE_PER_MIN, default=20"`
	Concurrency   int           `env:"BILLSYNC_CONCURRENCY, default=4"`
	PageSize      int           `env:"BILLSYNC_PAGE_SIZE, default=100"`
	MaxRequests   int64         `env:"BILLSYNC_MAX_REQUESTS, default=0"`
	MaxDuration   time.Duration `env:"BILLSYNC_MAX_DURATION, default=0s"`
	Details       bool          `env:"BILLSYNC_DETAILS, default=true"`
	CreditRefresh time.Duration `env:"BILLSYNC_CREDIT_REFRESH, default=168h"`
	MetricsAddr   string        `env:"BILLSYNC_METRICS_ADDR"`
	LogFormat     string        `env:"BILLSYNC_LOG_FORMAT, default=auto"`
	StopGrace     time.Duration `env:"BILLSYNC_STOP_GRACE, default=30s"`
	MemoryLimit   string        `env:"BILLSYNC_MEMORY_LIMIT, default=192MB"`
	// Reports names the reports to write after each successful sync: "all", or a comma-separated
	// list (report -list); empty writes none.
	Reports    string `env:"BILLSYNC_REPORTS"`
	ReportsOut string `env:"BILLSYNC_REPORTS_OUT, default=./out"`
	Currency   string `env:"BILLSYNC_CURRENCY, default=IDR"`
	Locale     string `env:"BILLSYNC_LOCALE, default=id"` // language of the reports: id or en
	// ApplyApproved lets the daemon send approved job plans after each successful sync.
	ApplyApproved bool `env:"BILLSYNC_APPLY_APPROVED, default=false"`

	once      bool
	demo      bool
	demoScale float64

	loc   *time.Location // TZ, loaded by validate
	sched cron.Schedule  // Schedule in loc, parsed by validate
}

func loadConfig(ctx context.Context, args []string, lookup envconfig.Lookuper) (*config, error) {
	var c config
	if err := envconfig.ProcessWith(ctx, &envconfig.Config{Target: &c, Lookuper: lookup}); err != nil {
		return nil, envError(err)
	}
	fs := flag.NewFlagSet("syncer", flag.ContinueOnError)
	fs.Usage = func() {
		w := fs.Output()
		fmt.Fprint(w, `usage: syncer [flags]          daemon: syncs on the schedule until SIGTERM/SIGINT
       syncer -once [flags]    one sync, exit 0 on success
       syncer -demo            one sync from the embedded simulator into -db (no key needed)
       syncer job ...          audited write jobs: plan, apply, approve, show, list (syncer job -h)

Every flag has an environment variable (in brackets); the flag wins. The API key comes from
BILLSYNC_API_KEY or BILLSYNC_API_KEY_FILE, never from a flag.

flags:
`)
		fs.PrintDefaults()
	}
	fs.StringVar(&c.APIKeyFile, "api-key-file", c.APIKeyFile, "file holding the API key (BILLSYNC_API_KEY_FILE); the key itself is never a flag")
	fs.StringVar(&c.BaseURL, "base-url", c.BaseURL, "scheme and host of the billing service (BILLSYNC_BASE_URL)")
	fs.StringVar(&c.Account, "account", c.Account, "name tagging this account's rows (BILLSYNC_ACCOUNT)")
	fs.StringVar(&c.DB, "db", c.DB, "warehouse file (BILLSYNC_DB)")
	fs.StringVar(&c.Schedule, "schedule", c.Schedule, "cron spec of the daemon (BILLSYNC_SCHEDULE)")
	fs.StringVar(&c.TZ, "tz", c.TZ, "time zone of the schedule (BILLSYNC_TZ)")
	fs.Float64Var(&c.RatePerMin, "rate", c.RatePerMin, "client-side request limit per minute; the real service allows about 20; 0 = off, for a local simulator (BILLSYNC_RATE_PER_MIN)")
	fs.IntVar(&c.Concurrency, "concurrency", c.Concurrency, "requests in flight (BILLSYNC_CONCURRENCY)")
	fs.IntVar(&c.PageSize, "page-size", c.PageSize, "requested page size (BILLSYNC_PAGE_SIZE)")
	fs.Int64Var(&c.MaxRequests, "max-requests", c.MaxRequests, "request budget of the fan-outs per run, 0 = none (BILLSYNC_MAX_REQUESTS)")
	fs.DurationVar(&c.MaxDuration, "max-duration", c.MaxDuration, "time budget of the fan-outs per run, 0 = none (BILLSYNC_MAX_DURATION)")
	fs.DurationVar(&c.CreditRefresh, "credit-refresh", c.CreditRefresh, "re-read every customer's credit history at least this often (BILLSYNC_CREDIT_REFRESH)")
	fs.BoolVar(&c.Details, "details", c.Details, "fetch product and payment-request details (BILLSYNC_DETAILS)")
	fs.StringVar(&c.MemoryLimit, "memory-limit", c.MemoryLimit, "DuckDB's memory limit while a sync builds the warehouse, e.g. 256MB (BILLSYNC_MEMORY_LIMIT)")
	fs.StringVar(&c.MetricsAddr, "metrics-addr", c.MetricsAddr, "serve Prometheus metrics on this address (BILLSYNC_METRICS_ADDR)")
	fs.StringVar(&c.LogFormat, "log-format", c.LogFormat, "auto, json or text (BILLSYNC_LOG_FORMAT)")
	fs.StringVar(&c.Reports, "reports", c.Reports, `reports to write after each successful sync: "all" or names (BILLSYNC_REPORTS)`)
	fs.StringVar(&c.ReportsOut, "reports-out", c.ReportsOut, "directory of those reports (BILLSYNC_REPORTS_OUT)")
	fs.BoolVar(&c.once, "once", false, "run one sync and exit")
	fs.BoolVar(&c.demo, "demo", false, "sync once from the embedded simulator (no key needed)")
	fs.Float64Var(&c.demoScale, "demo-scale", 1, "simulator scale for -demo (1 = about 10,000 records)")
	if err := cli.Parse(fs, args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, cli.Usagef(fs, "unexpected argument %q", fs.Arg(0))
	}
	return &c, cli.Usage(fs, c.validate())
}

// envError names the variable a user set, where envconfig names the Go field.
func envError(err error) error {
	msg := err.Error()
	t := reflect.TypeOf(config{})
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("env"), ",")
		if name != "" && strings.HasPrefix(msg, f.Name+":") {
			return fmt.Errorf("environment %s%s", name, strings.TrimPrefix(msg, f.Name))
		}
	}
	return fmt.Errorf("environment: %w", err)
}

// memoryLimitRE is the size syntax DuckDB's memory_limit takes, checked here so a typo stops
// the syncer at start rather than fail the first sync.
var memoryLimitRE = regexp.MustCompile(`(?i)^\s*\d+(\.\d+)?\s*(B|KB|MB|GB|TB|KIB|MIB|GIB|TIB)\s*$`)

func (c *config) validate() error {
	var errs []error
	if c.PageSize < 1 {
		errs = append(errs, fmt.Errorf("page size %d: must be at least 1", c.PageSize))
	}
	if err := report.CheckLocale(c.Locale); err != nil {
		errs = append(errs, err)
	}
	if c.Concurrency < 1 {
		errs = append(errs, fmt.Errorf("concurrency %d: must be at least 1", c.Concurrency))
	}
	if c.RatePerMin < 0 {
		errs = append(errs, fmt.Errorf("rate %g: must be 0 (off) or positive", c.RatePerMin))
	}
	switch c.LogFormat {
	case "auto", "json", "text":
	default:
		errs = append(errs, fmt.Errorf("log format %q: want auto, json or text", c.LogFormat))
	}
	if !memoryLimitRE.MatchString(c.MemoryLimit) {
		errs = append(errs, fmt.Errorf("memory limit %q: want a size such as 512MB or 1GB", c.MemoryLimit))
	}
	if c.DB == "" {
		errs = append(errs, errors.New("BILLSYNC_DB is empty"))
	}
	if c.demoScale <= 0 {
		errs = append(errs, fmt.Errorf("demo scale %g: must be positive", c.demoScale))
	}
	if c.MaxRequests < 0 || c.MaxDuration < 0 || c.StopGrace < 0 || c.CreditRefresh < 0 {
		errs = append(errs, errors.New("budgets, grace and refresh periods cannot be negative"))
	}
	// The zone and the schedule are checked in every mode, so a typo shows in a -once test run
	// rather than when the daemon starts.
	loc, err := time.LoadLocation(c.TZ)
	if err != nil || c.TZ == "" || c.TZ == "Local" {
		errs = append(errs, fmt.Errorf("time zone %q (BILLSYNC_TZ / -tz): want an IANA name such as Asia/Jakarta", c.TZ))
	} else {
		c.loc = loc
		if c.sched, err = schedule.Parse(c.Schedule, loc); err != nil {
			errs = append(errs, fmt.Errorf("schedule (BILLSYNC_SCHEDULE / -schedule): %w", err))
		}
	}
	return errors.Join(errs...)
}

// accountSpec is one account to sync with its key (never logged).
type accountSpec struct {
	name, baseURL, key string
}

// accounts resolves BILLSYNC_ACCOUNTS ("prod=https://a.example,sandbox=https://b.example", keys
// from BILLSYNC_API_KEY_<NAME> or BILLSYNC_API_KEY_FILE_<NAME>) or, without it, the single
// account of BILLSYNC_BASE_URL and BILLSYNC_API_KEY(_FILE).
func (c *config) accounts(lookup envconfig.Lookuper) ([]accountSpec, error) {
	if c.Accounts == "" {
		if c.BaseURL == "" {
			return nil, errors.New("BILLSYNC_BASE_URL is not set (or run with -demo to sync from the embedded simulator)")
		}
		key, err := readKey(c.APIKey, c.APIKeyFile, "BILLSYNC_API_KEY")
		if err != nil {
			return nil, err
		}
		return []accountSpec{{name: c.Account, baseURL: c.BaseURL, key: key}}, nil
	}
	var out []accountSpec
	seen := map[string]bool{}
	for _, part := range strings.Split(c.Accounts, ",") {
		name, base, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok || name == "" || base == "" {
			return nil, fmt.Errorf("BILLSYNC_ACCOUNTS entry %q: want name=base-url", part)
		}
		if seen[name] {
			return nil, fmt.Errorf("BILLSYNC_ACCOUNTS names account %q twice", name)
		}
		seen[name] = true
		out = append(out, accountSpec{name: name, baseURL: base})
	}
	for i, a := range out {
		suffix := strings.ToUpper(strings.NewReplacer("-", "_", ".", "_").Replace(a.name))
		keyVar, fileVar := "BILLSYNC_API_KEY_"+suffix, "BILLSYNC_API_KEY_FILE_"+suffix
		val, _ := lookup.Lookup(keyVar)
		file, _ := lookup.Lookup(fileVar)
		key, err := readKeyFrom(val, file, keyVar, fileVar)
		if err != nil {
			return nil, fmt.Errorf("account %s: %w", a.name, err)
		}
		out[i].key = key
	}
	return out, nil
}

func readKey(val, file, env string) (string, error) {
	return readKeyFrom(val, file, env, env+"_FILE")
}

func readKeyFrom(val, file, keyVar, fileVar string) (string, error) {
	if val != "" && file != "" {
		return "", fmt.Errorf("both %s and %s are set; use one", keyVar, fileVar)
	}
	if file != "" {
		b, err := os.ReadFile(file)
		if err != nil {
			return "", fmt.Errorf("read API key file: %w", err)
		}
		val = strings.TrimSpace(string(b))
	}
	if val == "" {
		return "", fmt.Errorf("no API key: set %s or %s", keyVar, fileVar)
	}
	return val, nil
}

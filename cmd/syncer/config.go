package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/billsync/billsync/internal/cli"
	conf "github.com/billsync/billsync/internal/config"
	"github.com/billsync/billsync/internal/delivery"
	"github.com/billsync/billsync/internal/report"
	"github.com/billsync/billsync/internal/schedule"
	"github.com/robfig/cron/v3"
	"github.com/sethvargo/go-envconfig"
)

// config is read from the environment first; command-line flags override it. The options are
// declared in internal/config, which docs/configuration.md's tables follow.
type config struct {
	conf.Files
	conf.Scope
	conf.Service
	conf.Sync
	conf.Report
	conf.Delivery
	conf.Jobs
	conf.Approvals // the daemon sends an approved plan only under the rules syncer job apply follows

	once      bool
	now       bool
	demo      bool
	demoScale float64

	loc   *time.Location // TZ, loaded by validate
	sched cron.Schedule  // Schedule in loc, parsed by validate

	deliveries *delivery.File   // BILLSYNC_DELIVERIES, loaded by validate; nil = none
	delivery   delivery.Options // how deliveries and alerts leave, checked by validate
}

func loadConfig(ctx context.Context, args []string, lookup envconfig.Lookuper) (*config, error) {
	var c config
	if _, err := conf.Load(ctx, &c, lookup); err != nil {
		return nil, err
	}
	fs := c.flagSet()
	if err := cli.Parse(fs, args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, cli.Usagef(fs, "unexpected argument %q", fs.Arg(0))
	}
	if c.Account == "" {
		c.Account = conf.DefaultAccount
	}
	return &c, cli.Usage(fs, c.validate())
}

// flagSet is syncer's flag set over c (its defaults what c holds).
func (c *config) flagSet() *flag.FlagSet {
	fs := flag.NewFlagSet("syncer", flag.ContinueOnError)
	fs.Usage = func() {
		w := fs.Output()
		fmt.Fprint(w, `usage: syncer [flags]          daemon: syncs on the schedule until SIGTERM/SIGINT
       syncer -once [flags]    one sync, exit 0 on success
       syncer -now             ask the daemon running beside -db for one sync now (SIGUSR1)
       syncer -demo            one sync from the embedded simulator into -db (no key needed)
       syncer job ...          audited write jobs: plan, apply, approve, show, list (syncer job -h)
       syncer status [-json]   where things stand; exit 0 when nothing needs a person (syncer status -h)

Every flag but -once, -now, -demo and -demo-scale has an environment variable (in brackets); the flag
wins. The API key comes from BILLSYNC_API_KEY or BILLSYNC_API_KEY_FILE, never from a flag.

flags:
`)
		fs.PrintDefaults()
	}
	conf.Bind(fs, c)
	fs.BoolVar(&c.once, "once", false, "run one sync and exit")
	fs.BoolVar(&c.now, "now", false, "ask the daemon running beside -db for one sync now (as SIGUSR1 to it does) and exit")
	fs.BoolVar(&c.demo, "demo", false, "sync once from the embedded simulator (no key needed)")
	fs.Float64Var(&c.demoScale, "demo-scale", 1, "simulator scale for -demo (1 = about 10,000 records)")
	return fs
}

func (c *config) validate() error {
	var errs []error
	if err := c.Fetch.Check(); err != nil {
		errs = append(errs, err)
	}
	if err := report.CheckLocale(c.Locale); err != nil {
		errs = append(errs, err)
	}
	if err := report.CheckCSVDialect(c.CSVDialect); err != nil {
		errs = append(errs, err)
	}
	if c.RatePerMin < 0 {
		errs = append(errs, fmt.Errorf("rate %g: must be 0 (off) or positive", c.RatePerMin))
	}
	switch c.LogFormat {
	case "auto", "json", "text":
	default:
		errs = append(errs, fmt.Errorf("log format %q: want auto, json or text", c.LogFormat))
	}
	if err := c.Build.Check(); err != nil {
		errs = append(errs, err)
	}
	if c.DB == "" {
		errs = append(errs, errors.New("BILLSYNC_DB is empty"))
	}
	if c.demoScale <= 0 {
		errs = append(errs, fmt.Errorf("demo scale %g: must be positive", c.demoScale))
	}
	if c.MaxRequests < 0 || c.MaxDuration < 0 || c.StopGrace < 0 || c.CreditRefresh < 0 || c.MaxClockSkew < 0 {
		errs = append(errs, errors.New("budgets, grace and refresh periods and the clock skew cannot be negative"))
	}
	// The zone and the schedule are checked in every mode, so a typo shows in a -once test run
	// rather than when the daemon starts.
	loc, err := time.LoadLocation(c.TZ)
	if err != nil || c.TZ == "" || c.TZ == "Local" {
		errs = append(errs, fmt.Errorf("time zone %q (BILLSYNC_TZ / -tz): want an IANA name such as %s", c.TZ, conf.DefaultTZ))
	} else {
		c.loc = loc
		if c.sched, err = schedule.Parse(c.Schedule, loc); err != nil {
			errs = append(errs, fmt.Errorf("schedule (BILLSYNC_SCHEDULE / -schedule): %w", err))
		}
		// The schedule file, the SMTP settings and the addresses: a mistake stops the
		// daemon at start, not the first delivery.
		if c.deliveries, c.delivery, err = delivery.Setup(c.Files, c.Report, c.Delivery, nil); err != nil {
			errs = append(errs, err)
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

package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"

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

	sched cron.Schedule // Schedule in BILLSYNC_TZ, parsed by validate
	// lakeSched is BILLSYNC_LAKE_MAINTAIN in BILLSYNC_TZ, parsed by validate; nil: off
	lakeSched cron.Schedule

	deliveries *delivery.File   // BILLSYNC_DELIVERIES, loaded by validate; nil = none
	delivery   delivery.Options // how deliveries and alerts leave, checked by validate
}

func loadConfig(ctx context.Context, args []string, lookup envconfig.Lookuper) (*config, error) {
	var c config
	if _, err := conf.Load(ctx, &c, lookup); err != nil {
		return nil, cli.Config(err)
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
       syncer lake maintain    the lake's maintenance once: compaction, month-end tags, expiry (syncer lake -h)

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

// validate checks every setting before anything runs, and reads what the run needs of them (the
// zone, the schedule, the schedule file; that a key file set is readable: the keys themselves
// are read by accounts): each mistake at once, each naming the variable and flag to fix, for an
// exit 2 a supervisor does not retry. syncer job checks the same environment the same way.
func (c *config) validate() error {
	errs := []error{conf.Check(c), report.CheckSettings(c.Report)}
	if err := c.Lake.Check(); err != nil {
		errs = append(errs, err)
	}
	if c.DB == "" {
		errs = append(errs, errors.New("BILLSYNC_DB (-db) is empty"))
	}
	if c.demo && c.demoScale <= 0 {
		errs = append(errs, fmt.Errorf("-demo-scale %g: must be positive", c.demoScale))
	}
	if c.Reports != "" && c.Reports != "all" {
		if err := report.CheckVars(reportNames(c.Reports), nil, false); err != nil {
			errs = append(errs, conf.Problem(c, "BILLSYNC_REPORTS", err))
		}
	}
	if c.APIKeyFile != "" && !c.demo {
		if _, err := readKey("", c.APIKeyFile); err != nil {
			errs = append(errs, err)
		}
	}
	// The schedule is checked in every mode, so a typo shows in a -once test run rather than when
	// the daemon starts (the zone was read with the settings: conf.Zone).
	var err error
	if c.sched, err = schedule.Parse(c.Schedule, c.TZ.Location()); err != nil {
		errs = append(errs, conf.Problem(c, "BILLSYNC_SCHEDULE", err))
	}
	if c.Lake.Maintain != conf.LakeMaintainOff {
		if c.lakeSched, err = schedule.Parse(c.Lake.Maintain, c.TZ.Location()); err != nil {
			errs = append(errs, conf.Problem(c, "BILLSYNC_LAKE_MAINTAIN", fmt.Errorf("%w (or %s)", err, conf.LakeMaintainOff)))
		}
	}
	// The schedule file, the SMTP settings and the addresses: a mistake stops the
	// daemon at start, not the first delivery.
	if c.deliveries, c.delivery, err = delivery.Setup(c.Files, c.Report, c.Delivery, nil); err != nil {
		errs = append(errs, err)
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
			return nil, errors.New("BILLSYNC_BASE_URL (-base-url) is not set: the billing service's scheme and host (or run with -demo to sync from the embedded simulator)")
		}
		key, err := readKey(c.APIKey, c.APIKeyFile)
		if err != nil {
			return nil, err
		}
		return []accountSpec{{name: c.Account, baseURL: c.BaseURL, key: key}}, nil
	}
	urls, err := conf.ParseAccounts(c.Accounts)
	if err != nil {
		return nil, conf.Problem(c, "BILLSYNC_ACCOUNTS", err)
	}
	var out []accountSpec
	for _, a := range urls {
		out = append(out, accountSpec{name: a.Name, baseURL: a.BaseURL})
	}
	var errs []error
	for i, a := range out {
		suffix := strings.ToUpper(strings.NewReplacer("-", "_", ".", "_").Replace(a.name))
		keyVar, fileVar := "BILLSYNC_API_KEY_"+suffix, "BILLSYNC_API_KEY_FILE_"+suffix
		val, _ := lookup.Lookup(keyVar)
		file, _ := lookup.Lookup(fileVar)
		key, err := readKeyFrom(val, file, keyVar, fileVar)
		if err != nil {
			errs = append(errs, fmt.Errorf("account %s: %w", a.name, err))
		}
		out[i].key = key
	}
	return out, errors.Join(errs...)
}

// reportNames are the names of a list such as BILLSYNC_REPORTS ("aging, credit").
func reportNames(list string) []string {
	var names []string
	for _, n := range strings.Split(list, ",") {
		if n = strings.TrimSpace(n); n != "" {
			names = append(names, n)
		}
	}
	return names
}

// readKey is the key of the single account: BILLSYNC_API_KEY or the file of BILLSYNC_API_KEY_FILE.
func readKey(val, file string) (string, error) {
	return readKeyFrom(val, file, "BILLSYNC_API_KEY", "BILLSYNC_API_KEY_FILE (-api-key-file)")
}

func readKeyFrom(val, file, keyVar, fileVar string) (string, error) {
	if val != "" && file != "" {
		return "", fmt.Errorf("both %s and %s are set; use one", keyVar, fileVar)
	}
	if file != "" {
		b, err := os.ReadFile(file)
		if err != nil {
			return "", fmt.Errorf("%s %q: cannot read the key: %w", fileVar, file, errors.Unwrap(err))
		}
		if val = strings.TrimSpace(string(b)); val == "" {
			return "", fmt.Errorf("%s %q: the file is empty: write the API key in it", fileVar, file)
		}
	}
	if val == "" {
		return "", fmt.Errorf("no API key: set %s or %s (the key is never a flag)", keyVar, fileVar)
	}
	return val, nil
}

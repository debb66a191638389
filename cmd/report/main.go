// Command report writes the finance reports of a billsync warehouse as .xlsx
// and CSV, runs ad-hoc SQL on it, and exports it as Parquet. It opens the
// warehouse read-only and never needs an API key.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/billsync/billsync/internal/report"
	"github.com/sethvargo/go-envconfig"
)

// config is read from the environment first; flags override it.
type config struct {
	DB       string `env:"BILLSYNC_DB, default=./data/billsync.duckdb"`
	TZ       string `env:"BILLSYNC_TZ, default=Asia/Jakarta"`
	Currency string `env:"BILLSYNC_CURRENCY, default=IDR"`
	Locale   string `env:"BILLSYNC_LOCALE, default=id"`
	Journal  string `env:"BILLSYNC_JOURNAL"`
	OutDir   string `env:"BILLSYNC_REPORTS_OUT, default=./out"`
	Account  string `env:"BILLSYNC_REPORT_ACCOUNT"`

	list    bool
	asOf    string
	formats string
	sql     string
	export  string
	vars    varFlags
	names   []string
}

// varFlags collects repeated -var name=value flags.
type varFlags map[string]string

func (v varFlags) String() string { return "" }

func (v varFlags) Set(s string) error {
	name, val, ok := strings.Cut(s, "=")
	if !ok || name == "" {
		return fmt.Errorf("-var %q: want name=value", s)
	}
	v[name] = val
	return nil
}

func loadConfig(ctx context.Context, args []string, lookup envconfig.Lookuper, stderr io.Writer) (*config, error) {
	c := config{vars: varFlags{}}
	if err := envconfig.ProcessWith(ctx, &envconfig.Config{Target: &c, Lookuper: lookup}); err != nil {
		return nil, fmt.Errorf("environment: %w", err)
	}
	fs := flag.NewFlagSet("report", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: report [flags] [REPORT...]   (all reports by default)")
		fmt.Fprintln(stderr, "       report -list")
		fmt.Fprintln(stderr, "       report -sql 'SELECT ...' [-format csv|xlsx|table]")
		fmt.Fprintln(stderr, "       report -export parquet")
		fs.PrintDefaults()
	}
	fs.StringVar(&c.DB, "db", c.DB, "warehouse file, opened read-only (BILLSYNC_DB)")
	fs.StringVar(&c.TZ, "tz", c.TZ, "time zone of dates and day boundaries (BILLSYNC_TZ)")
	fs.StringVar(&c.Currency, "currency", c.Currency, "currency code shown on amounts (BILLSYNC_CURRENCY)")
	fs.StringVar(&c.Locale, "locale", c.Locale, "language of the reports: id or en (BILLSYNC_LOCALE)")
	fs.StringVar(&c.Journal, "journal", c.Journal, "write-job journal; default billsync-jobs.duckdb beside the warehouse (BILLSYNC_JOURNAL)")
	fs.StringVar(&c.OutDir, "out", c.OutDir, "output directory (BILLSYNC_REPORTS_OUT)")
	fs.StringVar(&c.Account, "account", c.Account, "only this account; default all (BILLSYNC_REPORT_ACCOUNT)")
	fs.BoolVar(&c.list, "list", false, "list the reports, their sheets and variables")
	fs.StringVar(&c.asOf, "as-of", "", "report date YYYY-MM-DD (default today in the time zone)")
	fs.StringVar(&c.formats, "format", "", "reports: xlsx,csv (default both); -sql: csv, xlsx or table (default table)")
	fs.StringVar(&c.sql, "sql", "", "run this SQL statement instead of the reports")
	fs.StringVar(&c.export, "export", "", "export the warehouse tables: parquet")
	fs.Var(c.vars, "var", "report variable name=value, repeatable (see -list)")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	c.names = fs.Args()
	return &c, c.validate()
}

func (c *config) validate() error {
	var errs []error
	modes := 0
	for _, on := range []bool{c.list, c.sql != "", c.export != ""} {
		if on {
			modes++
		}
	}
	if modes > 1 {
		errs = append(errs, errors.New("use only one of -list, -sql and -export"))
	}
	if c.export != "" && c.export != "parquet" {
		errs = append(errs, fmt.Errorf("-export %q: only parquet is supported", c.export))
	}
	if c.asOf != "" {
		if _, err := time.Parse(time.DateOnly, c.asOf); err != nil {
			errs = append(errs, fmt.Errorf("-as-of %q: want YYYY-MM-DD", c.asOf))
		}
	}
	if c.DB == "" {
		errs = append(errs, errors.New("BILLSYNC_DB is empty"))
	}
	return errors.Join(errs...)
}

func (c *config) options(log *slog.Logger) report.Options {
	o := report.Options{DB: c.DB, Journal: c.Journal, OutDir: c.OutDir, TZ: c.TZ, Currency: c.Currency,
		Account: c.Account, Names: c.names, Vars: c.vars, Locale: c.Locale, Log: log}
	if c.asOf != "" {
		o.AsOf, _ = time.Parse(time.DateOnly, c.asOf)
	}
	if c.formats != "" && c.sql == "" {
		o.Formats = strings.Split(c.formats, ",")
	}
	return o
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], envconfig.OsLookuper(), os.Stdout, os.Stderr)
	stop()
	if err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "report:", err)
		}
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, lookup envconfig.Lookuper, stdout, stderr io.Writer) error {
	cfg, err := loadConfig(ctx, args, lookup, stderr)
	if err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(stderr, nil))
	switch {
	case cfg.list:
		return report.List(stdout)
	case cfg.export != "":
		dir, err := report.ExportParquet(ctx, cfg.DB, cfg.OutDir)
		if err != nil {
			return err
		}
		fmt.Fprintln(stdout, dir)
		return nil
	case cfg.sql != "":
		format := cfg.formats
		if format == "" {
			format = "table"
		}
		path, err := report.Query(ctx, cfg.options(log), cfg.sql, format, stdout)
		if path != "" {
			fmt.Fprintln(stdout, path)
		}
		return err
	}
	files, err := report.Generate(ctx, cfg.options(log))
	for _, f := range files {
		fmt.Fprintln(stdout, f)
	}
	return err
}

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
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/billsync/billsync/internal/cli"
	conf "github.com/billsync/billsync/internal/config"
	"github.com/billsync/billsync/internal/logfmt"
	"github.com/billsync/billsync/internal/report"
	"github.com/sethvargo/go-envconfig"
)

// config is read from the environment first; flags override it. The options are declared in
// internal/config, shared with the syncer.
type config struct {
	conf.Files
	conf.Scope
	conf.Report
	conf.LakeAccess // -lake: the reports over the lake's tables at one snapshot (lake.go)

	// warnings about the environment (a deprecated variable), logged once the logger exists
	warnings []string

	list bool
	asOf string
	// the point of the lake read: a snapshot id, or a time (RFC 3339 or a date in the zone)
	asOfSnapshot int64
	asOfTime     string
	formats      string
	sql          string
	export       string
	vars         varFlags
	names        []string
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

func loadConfig(ctx context.Context, args []string, lookup envconfig.Lookuper) (*config, error) {
	c := config{vars: varFlags{}}
	var err error
	if c.warnings, err = conf.Load(ctx, &c, lookup, conf.ReportAccountAlias); err != nil {
		return nil, cli.Config(err)
	}
	fs := c.flagSet()
	if err := cli.Parse(fs, args); err != nil {
		return nil, err
	}
	c.names = fs.Args()
	return &c, cli.Usage(fs, c.validate())
}

// flagSet is report's flag set over c (its defaults what c holds).
func (c *config) flagSet() *flag.FlagSet {
	fs := flag.NewFlagSet("report", flag.ContinueOnError)
	fs.Usage = func() {
		w := fs.Output()
		fmt.Fprintln(w, "usage: report [flags] [REPORT...]        write reports (all by default) as of -as-of")
		fmt.Fprintln(w, "       report -list                      reports, their sheets, query files and variables")
		fmt.Fprintln(w, "       report -sql 'SELECT ...' [-format table|csv|xlsx]")
		fmt.Fprintln(w, "       report -sql @queries/aging_by_customer.sql -var as_of=2026-10-31")
		fmt.Fprintln(w, "       report -sql - < query.sql         SQL from standard input")
		fmt.Fprintln(w, "       report -export parquet            analyst tables as Parquet under -out")
		fmt.Fprintln(w, "       report -lake URI -lake-catalog URI [-as-of-snapshot S | -as-of-time T] [-account A] [REPORT...]")
		fmt.Fprintln(w, "                                         the reports over the Iceberg lake's tables at one snapshot")
		fmt.Fprintln(w, "       report deliver NAME / deliveries  send a delivery by e-mail / its journal (report deliver -h)")
		fmt.Fprintln(w, "\nThe warehouse is opened read-only; no API key is needed. A flag with an environment")
		fmt.Fprintln(w, "variable (in brackets) overrides it; BILLSYNC_REPORT_ACCOUNT is still read as BILLSYNC_ACCOUNT.\n\nflags:")
		fs.PrintDefaults()
	}
	conf.Bind(fs, c)
	conf.FlagAlias(fs, "reports-out", "out")
	fs.BoolVar(&c.list, "list", false, "list the reports, their sheets and variables")
	fs.StringVar(&c.asOf, "as-of", "", "report date YYYY-MM-DD (default today in the time zone)")
	fs.StringVar(&c.formats, "format", "", "reports: xlsx,csv (default both); -sql: csv, xlsx or table (default table)")
	fs.StringVar(&c.sql, "sql", "", "run this SQL instead of the reports: text, @file, or - for standard input; several statements allowed, the last one's rows are shown")
	fs.StringVar(&c.export, "export", "", "export the analyst tables: parquet")
	fs.Int64Var(&c.asOfSnapshot, "as-of-snapshot", 0, "with -lake: read the lake at this snapshot id (every table as it stood when it was committed)")
	fs.StringVar(&c.asOfTime, "as-of-time", "", "with -lake: read the lake as it stood at this time: RFC 3339, or a date YYYY-MM-DD (its end, in -tz)")
	fs.Var(c.vars, "var", "report variable name=value, repeatable (see -list); with -sql, any DuckDB variable (as_of=... overrides -as-of)")
	return fs
}

func (c *config) validate() error {
	errs := []error{conf.Check(c), report.CheckSettings(c.Report)}
	modes := 0
	for _, on := range []bool{c.list, c.sql != "", c.export != ""} {
		if on {
			modes++
		}
	}
	if modes > 1 {
		errs = append(errs, errors.New("use only one of -list, -sql and -export"))
	}
	if (c.sql != "" || c.list || c.export != "") && len(c.names) > 0 {
		errs = append(errs, fmt.Errorf("report names (%s) go without -list, -sql and -export", strings.Join(c.names, " ")))
	}
	if c.export != "" && c.export != "parquet" {
		errs = append(errs, fmt.Errorf("-export %q: only parquet is supported", c.export))
	}
	if c.asOf != "" {
		if _, err := time.Parse(time.DateOnly, c.asOf); err != nil {
			errs = append(errs, fmt.Errorf("-as-of %q: want YYYY-MM-DD", c.asOf))
		}
	}
	if v, ok := c.vars["as_of"]; ok && c.sql != "" {
		if _, err := time.Parse(time.DateOnly, v); err != nil {
			errs = append(errs, fmt.Errorf("-var as_of=%q: want YYYY-MM-DD", v))
		}
	}
	if c.formats != "" {
		want := []string{"xlsx", "csv"}
		if c.sql != "" {
			want = []string{"table", "csv", "xlsx"}
		}
		for _, f := range strings.Split(c.formats, ",") {
			if !slices.Contains(want, f) || c.sql != "" && strings.Contains(c.formats, ",") {
				errs = append(errs, fmt.Errorf("-format %q: want %s", c.formats, strings.Join(want, ", ")))
				break
			}
		}
	}
	if c.DB == "" && c.LakeAccess.Root == "" {
		errs = append(errs, errors.New("BILLSYNC_DB (-db) is empty"))
	}
	errs = append(errs, c.validateLake())
	if !c.list && c.export == "" {
		if err := report.CheckVars(c.names, c.vars, c.sql != ""); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func (c *config) options(log *slog.Logger) report.Options {
	o := report.Options{Report: c.Report, DB: c.DB, Journal: c.Journal, Account: c.Account, Names: c.names,
		Vars: c.vars, Log: log}
	if c.asOf != "" {
		o.AsOf, _ = time.Parse(time.DateOnly, c.asOf)
	}
	if v, ok := c.vars["as_of"]; ok && c.sql != "" {
		o.AsOf, _ = time.Parse(time.DateOnly, v)
	}
	if c.formats != "" && c.sql == "" {
		o.Formats = strings.Split(c.formats, ",")
	}
	return o
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], envconfig.OsLookuper(), os.Stdin, os.Stdout, os.Stderr)
	stop()
	name := "report"
	if len(os.Args) > 1 && (os.Args[1] == "deliver" || os.Args[1] == "deliveries") {
		name += " " + os.Args[1] // its -h lists the flags it reads
	}
	os.Exit(cli.Exit(name, err, os.Stdout, os.Stderr))
}

func run(ctx context.Context, args []string, lookup envconfig.Lookuper, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(args) > 0 && (args[0] == "deliver" || args[0] == "deliveries") {
		return deliverCommand(ctx, args[0], args[1:], lookup, stdout, stderr)
	}
	cfg, err := loadConfig(ctx, args, lookup)
	if err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{ReplaceAttr: logfmt.In(cfg.TZ.Location())}))
	for _, w := range cfg.warnings {
		log.Warn(w)
	}
	if cfg.LakeAccess.Root != "" && !cfg.list {
		cleanup, err := cfg.readLake(ctx, log)
		if err != nil {
			return err
		}
		defer cleanup()
	}
	switch {
	case cfg.list:
		return report.List(stdout)
	case cfg.export != "":
		dir, tables, err := report.ExportParquet(ctx, cfg.DB, cfg.ReportsOut)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "%d tables exported to %s:\n", len(tables), dir)
		for _, t := range tables {
			fmt.Fprintf(stdout, "  %-22s %8d rows  %s\n", t.Name, t.Rows, t.Path)
		}
		return nil
	case cfg.sql != "":
		text, err := sqlText(cfg.sql, stdin)
		if err != nil {
			return err
		}
		format := cfg.formats
		if format == "" {
			format = "table"
		}
		path, err := report.Query(ctx, cfg.options(log), text, format, stdout)
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

// sqlText is -sql's statement: the text itself, @file, or - for standard input.
func sqlText(arg string, stdin io.Reader) (string, error) {
	switch {
	case arg == "-":
		b, err := io.ReadAll(stdin)
		if err != nil {
			return "", fmt.Errorf("-sql -: read standard input: %w", err)
		}
		return string(b), nil
	case strings.HasPrefix(arg, "@"):
		b, err := os.ReadFile(arg[1:])
		if err != nil {
			return "", fmt.Errorf("-sql %s: %w", arg, err)
		}
		return string(b), nil
	}
	return arg, nil
}

// Command syncer keeps a DuckDB warehouse in step with the billing service: as a daemon on a
// cron schedule, once (-once), or from the embedded simulator (-demo). "syncer job ..." runs the
// audited write jobs (see job.go and docs/jobs.md).
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/billsync/billsync/internal/api"
	"github.com/billsync/billsync/internal/cli"
	"github.com/billsync/billsync/internal/delivery"
	"github.com/billsync/billsync/internal/fetch"
	"github.com/billsync/billsync/internal/lake"
	"github.com/billsync/billsync/internal/logfmt"
	"github.com/billsync/billsync/internal/metrics"
	"github.com/billsync/billsync/internal/sandbox"
	"github.com/billsync/billsync/internal/schedule"
	"github.com/billsync/billsync/internal/status"
	"github.com/billsync/billsync/internal/syncrun"
	"github.com/sethvargo/go-envconfig"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], envconfig.OsLookuper(), os.Stdout, os.Stderr)
	stop()
	if err != nil && strings.HasPrefix(err.Error(), "usage:") {
		// syncer job's own usage errors carry their usage text.
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	// a subcommand's -h lists the flags it reads
	name := "syncer"
	switch {
	case len(os.Args) > 2 && os.Args[1] == "job":
		name = "syncer job " + os.Args[2]
	case len(os.Args) > 1 && os.Args[1] == "status":
		name = "syncer status"
	case len(os.Args) > 1 && os.Args[1] == "lake":
		name = "syncer lake"
	}
	os.Exit(cli.Exit(name, err, os.Stdout, os.Stderr))
}

// run is the whole command; tests call it with their own environment and output streams.
func run(ctx context.Context, args []string, lookup envconfig.Lookuper, stdout, stderr io.Writer) error {
	if len(args) > 0 && args[0] == "job" {
		return jobCommand(ctx, args[1:], lookup, stdout)
	}
	if len(args) > 0 && args[0] == "status" {
		return statusCommand(ctx, args[1:], lookup, stdout)
	}
	if len(args) > 0 && args[0] == "lake" {
		return lakeCommand(ctx, args[1:], lookup, stdout)
	}
	cfg, err := loadConfig(ctx, args, lookup)
	if err != nil {
		return err
	}
	if cfg.now {
		return askDaemon(cfg.DB, stdout)
	}
	tty := isTerminal(stderr)
	// The demo is read by a person even through a pipe (make demo | tee): plain text, no JSON.
	log := newLogger(stderr, cfg.LogFormat, cfg.TZ.Location(), tty, cfg.demo)

	var accounts []syncrun.Account
	baseURLs := map[string]string{}
	var waits waitRelay
	var demoSB *sandbox.Server
	if cfg.demo {
		if _, err := os.Stat(cfg.DB); err == nil {
			// The simulator starts from its seed every time: synced into an older demo it would
			// record its own past as changes. make demo removes the file first.
			return fmt.Errorf("-demo builds a new warehouse and %s exists: remove it first (rm %s)", cfg.DB, cfg.DB)
		}
		sb, base, shutdown, err := startDemoSandbox(cfg.demoScale, log)
		if err != nil {
			return err
		}
		defer shutdown()
		demoSB = sb
		c, err := api.New(api.Config{BaseURL: base, APIKey: demoKey, Unlimited: true, Logger: log, OnWait: waits.wait})
		if err != nil {
			return err
		}
		accounts = []syncrun.Account{{Name: "demo", Client: c}}
		cfg.once = true
		if cfg.Reports == "" {
			cfg.Reports = "all"
		}
	} else {
		specs, err := cfg.accounts(lookup)
		if err != nil {
			return cli.Config(err) // no key, a key file unread: exit 2, nothing to retry
		}
		for _, s := range specs {
			c, err := api.New(api.Config{BaseURL: s.baseURL, APIKey: s.key, RatePerMin: cfg.RatePerMin,
				Unlimited: cfg.RatePerMin == 0, Logger: log, OnWait: waits.wait})
			if err != nil {
				return fmt.Errorf("account %s: %w", s.name, err)
			}
			if cfg.RatePerMin > 0 && isLoopback(s.baseURL) {
				log.Warn("the request limit is on for a local service: a sync waits for it; -rate 0 (BILLSYNC_RATE_PER_MIN=0) turns it off",
					"account", s.name, "base_url", s.baseURL, "rate_per_min", cfg.RatePerMin)
			}
			accounts = append(accounts, syncrun.Account{Name: s.name, Client: c})
			baseURLs[s.name] = s.baseURL
		}
	}
	if err := os.MkdirAll(filepath.Dir(cfg.DB), 0o755); err != nil {
		return fmt.Errorf("warehouse directory: %w", err)
	}

	var m metrics.Sync
	if cfg.MetricsAddr != "" {
		stopMetrics, err := serveMetrics(cfg.MetricsAddr, &m, log)
		if err != nil {
			return err
		}
		defer stopMetrics()
	}
	opts := syncrun.Options{Options: fetch.Options{Fetch: cfg.Fetch, Log: log}, Build: cfg.Build}
	if cfg.demo {
		// the demo's simulator syncs first a simulated day ago
		opts.MaxClockSkew = max(opts.MaxClockSkew, demoDayAgo+time.Hour)
	}
	mode := "daemon"
	if cfg.once {
		mode = "once"
	}
	// The lake is opened at the first run that needs it, and again after a failure: a lake that
	// cannot be reached never stops a sync (its commit follows the publish).
	var lk *lake.Lake
	var lakeOutcome string
	openLake := func(ctx context.Context) {
		opts.Lake, lakeOutcome = nil, ""
		if cfg.Lake.Root == "" {
			return
		}
		if lk == nil {
			var err error
			if lk, err = lake.Open(ctx, cfg.Lake, log); err != nil {
				log.Error("lake not opened: this run is not committed to it; the next run tries again", "err", err)
				lakeOutcome = "failed: " + err.Error()
				return
			}
		}
		opts.Lake = lk
		opts.LakeDone = func(r lake.Result, err error) {
			n, retries := r.Snapshots()
			lakeOutcome = fmt.Sprintf("committed %d snapshots (%d retries) in %s", n, retries, r.Took.Round(time.Millisecond))
			if err != nil {
				lakeOutcome = fmt.Sprintf("failed after %d snapshots: %v", n, err)
			}
		}
	}
	rec := status.NewRecorder(status.StatePath(cfg.DB), mode, cfg.Schedule, cfg.TZ.String(), log)
	defer rec.Stopped()
	journal := journalPath(cfg)
	var deliveries *delivery.Scheduler
	job := func(ctx context.Context) error {
		// read at each run: a job applied between runs (or after the previous one) is seen
		opts.CreditHints = creditHints(ctx, journal, log)
		if tty {
			p := newProgress(stderr)
			opts.Progress = p.update
			waits.set(p)
			defer waits.set(nil)
			defer p.close()
		} else {
			// Off a terminal a long sync (20 requests/minute) says how far it got every 30 s.
			p := newProgressLog(log, 30*time.Second)
			opts.Progress = p.update
			defer p.close()
		}
		start := time.Now()
		rec.RunStarted(start)
		openLake(ctx)
		sums, err := syncrun.Run(ctx, cfg.DB, accounts, opts)
		err = explainKeyRefused(err, cfg)
		err = explainForeignAnswer(err, cfg)
		recordRun(ctx, &m, log, sums, err, start)
		att := attempts(ctx, accounts, sums, err, start)
		for name, a := range att {
			a.Lake = lakeOutcome
			att[name] = a
		}
		rec.RunFinished(att)
		if deliveries != nil && ctx.Err() == nil {
			if err == nil {
				deliveries.SyncClock(clockNotes(accounts, sums))
			}
			deliveries.LakeBehind(rec.LakeBehind())
			deliveries.SyncFinished(err, partialAccounts(accounts, sums), time.Now())
		}
		if err != nil {
			return err
		}
		if tty || cfg.demo {
			printSummary(stdout, cfg.DB, sums, time.Since(start), !cfg.demo)
		}
		if cfg.ApplyApproved {
			if err := applyApproved(ctx, cfg, accounts, baseURLs, log); err != nil {
				return err
			}
		}
		if cfg.Reports != "" {
			return writeReports(ctx, cfg, stdout, log)
		}
		return nil
	}
	if demoSB != nil {
		// A first sync a simulated day ago, then the day passes (invoices get paid, customers
		// renamed, records deleted) and the main sync below finds the change history and the
		// as-of answers the reports are built on.
		fmt.Fprintln(stdout, "demo: syncing the simulator as it was yesterday, then as it is today")
		if _, err := syncrun.Run(ctx, cfg.DB, accounts, opts); err != nil {
			return fmt.Errorf("demo: first sync: %w", err)
		}
		demoSB.Advance(demoDayAgo)
	}
	if cfg.once {
		log.Info("syncer started", "mode", "once", "db", cfg.DB, "accounts", len(accounts))
		return job(ctx)
	}

	// SIGUSR1 (syncer -now) asks for one sync now: heard before the daemon says where it runs,
	// so a request never meets a process that would die of the signal.
	asked, release := listenForSyncNow(ctx, cfg.DB, log)
	defer release()
	var waitDeliveries func()
	deliveries, waitDeliveries = startDeliveries(ctx, cfg, log, &m)
	defer waitDeliveries()
	defer startLakeMaintenance(ctx, cfg, log)()
	// the runner logs "stopping" and "stopped"
	log.Info("syncer started", "mode", "daemon", "schedule", cfg.Schedule, "tz", cfg.TZ, "db", cfg.DB, "accounts", len(accounts))
	r := &schedule.Runner{Schedule: cfg.sched, Location: cfg.TZ.Location(), Job: job, Grace: cfg.StopGrace, Log: log, Now: asked}
	r.Announce = rec.Next
	if _, err := os.Stat(cfg.DB); errors.Is(err, os.ErrNotExist) {
		// A new install has nothing to serve until its first sync: that runs now, not at the
		// schedule's first time.
		log.Info("no warehouse published yet: the first sync runs now", "db", cfg.DB)
		r.Start = true
	}
	if tty {
		// The log keeps to warnings on a terminal; the person watching still learns the plan.
		fmt.Fprintf(stdout, "syncer: schedule %q in %s, warehouse %s\n", cfg.Schedule, cfg.TZ, cfg.DB)
		r.Announce = func(next time.Time) {
			rec.Next(next)
			fmt.Fprintf(stdout, "next run at %s (in %s); Ctrl-C stops\n", next.Format("2006-01-02 15:04 MST"),
				time.Until(next).Round(time.Second))
		}
	}
	return r.Run(ctx)
}

// isLoopback says whether a base URL names this machine (a local simulator).
func isLoopback(base string) bool {
	u, err := url.Parse(base)
	if err != nil {
		return false
	}
	h := u.Hostname()
	if h == "localhost" {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// attempts is how the run ended for each account it tried, for syncer status. A run publishes
// all its accounts or none, so a failure is every tried account's; the error names the account
// that failed.
func attempts(ctx context.Context, accounts []syncrun.Account, sums []fetch.Summary, err error, start time.Time) map[string]status.Attempt {
	out := map[string]status.Attempt{}
	for i, s := range sums {
		a := status.Attempt{RunID: s.RunID, Status: s.Status(), StartedAt: start, FinishedAt: time.Now(), Records: s.Records}
		switch {
		case err != nil && (errors.Is(err, context.Canceled) || ctx.Err() != nil):
			a.Status = "cancelled"
		case err != nil:
			a.Status, a.Error = "failed", err.Error()
		}
		out[accounts[i].Name] = a
	}
	return out
}

func recordRun(ctx context.Context, m *metrics.Sync, log *slog.Logger, sums []fetch.Summary, err error, start time.Time) {
	var records, requests, retries int64
	status := "succeeded"
	for _, s := range sums {
		records += s.Records
		requests += s.Requests
		retries += s.Retries
		if s.Status() == "partial" {
			status = "partial"
		}
	}
	// A stop cancels the run's context; what the run returns then (a limiter wait, an
	// interrupted query) is the stop's doing, whatever its wording.
	cancelled := err != nil && (errors.Is(err, context.Canceled) || ctx.Err() != nil)
	switch {
	case cancelled:
		status = "cancelled"
	case err != nil:
		status = "failed"
	}
	m.RunFinished(status, records, requests, retries, time.Since(start), time.Now())
	for _, s := range sums {
		if s.ClockSource != "" {
			m.Clock(s.ClockOffset, s.ClockSetAside)
		}
	}
	attrs := []any{"status", status, "records", records, "requests", requests, "retries", retries,
		"took", time.Since(start)}
	switch {
	case cancelled:
		// A stop asked for it: not a failure. The unpublished build is resumed by the next run.
		log.Info("sync cancelled", attrs...)
		return
	case err != nil:
		log.Error("sync failed", append(attrs, "err", err)...)
		return
	}
	log.Info("sync finished", attrs...)
}

func serveMetrics(addr string, m *metrics.Sync, log *slog.Logger) (func(), error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("metrics address: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", m)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("metrics server", "err", err)
		}
	}()
	log.Info("metrics served", "addr", ln.Addr().String())
	return func() { srv.Close() }, nil
}

const demoKey = "demo-key"

// demoDayAgo is how far in the past the demo simulator's clock starts.
const demoDayAgo = 24 * time.Hour

// startDemoSandbox serves the simulator on a loopback port for -demo, its clock a day back.
func startDemoSandbox(scale float64, log *slog.Logger) (*sandbox.Server, string, func(), error) {
	sb, err := sandbox.New(sandbox.Options{Seed: 42, Scale: scale, Key: demoKey,
		Now: time.Now().UTC().Add(-demoDayAgo).Truncate(time.Second)})
	if err != nil {
		return nil, "", nil, fmt.Errorf("demo simulator: %w", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, "", nil, fmt.Errorf("demo simulator: %w", err)
	}
	srv := &http.Server{Handler: sb, ReadHeaderTimeout: 5 * time.Second}
	go srv.Serve(ln)
	base := "http://" + ln.Addr().String()
	log.Info("demo simulator serving", "url", base, "scale", scale)
	return sb, base, func() { srv.Close() }, nil
}

// newLogger logs JSON for cron and containers, text when asked or on a terminal, its times in
// the zone tz (BILLSYNC_TZ) with the offset, as every other output shows them. Where a person
// watches (a terminal with its progress display, the demo with its summary) the log keeps to
// warnings; anywhere else it logs at Info whatever the format, so text logs off a terminal still
// say when the syncer started, how each run ended and when it stopped.
func newLogger(w io.Writer, format string, loc *time.Location, tty, demo bool) *slog.Logger {
	level := slog.LevelInfo
	if tty || demo {
		level = slog.LevelWarn
	}
	opts := &slog.HandlerOptions{Level: level, ReplaceAttr: logfmt.In(loc)}
	if format == "text" || format == "auto" && (tty || demo) {
		return slog.New(slog.NewTextHandler(w, opts))
	}
	return slog.New(slog.NewJSONHandler(w, opts))
}

// explainKeyRefused makes a refused key the run's whole error, with the variable to check: it
// is about the key, whichever endpoint asked first.
func explainKeyRefused(err error, cfg *config) error {
	var auth *api.AuthError
	if !errors.As(err, &auth) {
		return err
	}
	vars := "BILLSYNC_API_KEY or BILLSYNC_API_KEY_FILE"
	if cfg.Accounts != "" {
		vars = "BILLSYNC_API_KEY_<ACCOUNT> or BILLSYNC_API_KEY_FILE_<ACCOUNT>"
	}
	return fmt.Errorf("%w: check the key in %s (a key for this service and environment, without spaces or quotes)", err, vars)
}

// explainForeignAnswer points at the base URL when the answers cannot be the billing service's:
// a typo or a proxy serves another site's pages, and the person must fix the setting, not wait.
func explainForeignAnswer(err error, cfg *config) error {
	why := api.NotTheService(err)
	if why == "" {
		return err
	}
	vars := "BILLSYNC_BASE_URL (-base-url)"
	if cfg.Accounts != "" {
		vars = "the account's base URL in BILLSYNC_ACCOUNTS"
	}
	return fmt.Errorf("%w: the answer is %s, not the billing service's: check %s, the scheme and host of the service only (the /hl/v1/... paths are added)", err, why, vars)
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

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
	"path/filepath"
	"time"

	"github.com/billsync/billsync/internal/api"
	"github.com/billsync/billsync/internal/cli"
	"github.com/billsync/billsync/internal/delivery"
	"github.com/billsync/billsync/internal/fetch"
	"github.com/billsync/billsync/internal/lake"
	"github.com/billsync/billsync/internal/metrics"
	"github.com/billsync/billsync/internal/sandbox"
	"github.com/billsync/billsync/internal/schedule"
	"github.com/billsync/billsync/internal/status"
	"github.com/billsync/billsync/internal/syncrun"
	"github.com/sethvargo/go-envconfig"
)

// syncCmd is the syncing command (not syncer job or status): run wires it step by step, and
// sync is one run, once or on the daemon's schedule.
type syncCmd struct {
	cfg            *config
	log            *slog.Logger
	stdout, stderr io.Writer
	tty            bool // stderr is a terminal: a progress line, a summary, the plan on stdout

	accounts []syncrun.Account
	baseURLs map[string]string // by account, for the write jobs the daemon applies
	waits    waitRelay         // the clients' waits, to the progress line of the run under way
	demoSB   *sandbox.Server   // -demo's simulator

	m    metrics.Sync
	opts syncrun.Options
	rec  *status.Recorder
	// journal is the write-job journal, read at each run for credit hints.
	journal    string
	deliveries *delivery.Scheduler // the daemon's; nil once

	// The lake is opened at the first run that needs it, and again after a failure: a lake that
	// cannot be reached never stops a sync (its commit follows the publish).
	lk          *lake.Lake
	lakeOutcome string
}

// run wires the command step by step: the accounts' clients (or -demo's simulator), the
// warehouse's directory, metrics, the sync options and syncer status; then one sync (-once,
// -demo) or the daemon.
func (s *syncCmd) run(ctx context.Context, lookup envconfig.Lookuper) error {
	cfg := s.cfg
	if cfg.demo {
		shutdown, err := s.connectDemo()
		if err != nil {
			return err
		}
		defer shutdown()
	} else if err := s.connectAccounts(lookup); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(cfg.DB), 0o755); err != nil {
		return fmt.Errorf("warehouse directory: %w", err)
	}
	if cfg.MetricsAddr != "" {
		stopMetrics, err := serveMetrics(cfg.MetricsAddr, &s.m, s.log)
		if err != nil {
			return err
		}
		defer stopMetrics()
	}
	s.opts = syncrun.Options{Options: fetch.Options{Fetch: cfg.Fetch, Log: s.log}, Build: cfg.Build}
	if cfg.demo {
		// the demo's simulator syncs first a simulated day ago
		s.opts.MaxClockSkew = max(s.opts.MaxClockSkew, demoDayAgo+time.Hour)
	}
	mode := "daemon"
	if cfg.once {
		mode = "once"
	}
	s.rec = status.NewRecorder(status.StatePath(cfg.DB), mode, cfg.Schedule, cfg.TZ.String(), s.log)
	defer s.rec.Stopped()
	s.journal = journalPath(cfg)
	if s.demoSB != nil {
		if err := s.demoYesterday(ctx); err != nil {
			return err
		}
	}
	if cfg.once {
		s.log.Info("syncer started", "mode", "once", "db", cfg.DB, "accounts", len(s.accounts))
		return s.sync(ctx)
	}
	return s.daemon(ctx)
}

// connectDemo starts -demo's simulator and its one account; the returned function stops it.
func (s *syncCmd) connectDemo() (shutdown func(), err error) {
	cfg := s.cfg
	if _, err := os.Stat(cfg.DB); err == nil {
		// The simulator starts from its seed every time: synced into an older demo it would
		// record its own past as changes. make demo removes the file first.
		return nil, fmt.Errorf("-demo builds a new warehouse and %s exists: remove it first (rm %s)", cfg.DB, cfg.DB)
	}
	sb, base, shutdown, err := startDemoSandbox(cfg.demoScale, s.log)
	if err != nil {
		return nil, err
	}
	s.demoSB = sb
	c, err := api.New(api.Config{BaseURL: base, APIKey: demoKey, Unlimited: true, Logger: s.log, OnWait: s.waits.wait})
	if err != nil {
		shutdown()
		return nil, err
	}
	s.accounts = []syncrun.Account{{Name: "demo", Client: c}}
	cfg.once = true
	if cfg.Reports == "" {
		cfg.Reports = "all"
	}
	return shutdown, nil
}

// connectAccounts makes a client per configured account, each with its key and request limit.
func (s *syncCmd) connectAccounts(lookup envconfig.Lookuper) error {
	cfg := s.cfg
	specs, err := cfg.accounts(lookup)
	if err != nil {
		return cli.Config(err) // no key, a key file unread: exit 2, nothing to retry
	}
	for _, spec := range specs {
		c, err := api.New(api.Config{BaseURL: spec.baseURL, APIKey: spec.key, RatePerMin: cfg.RatePerMin,
			Unlimited: cfg.RatePerMin == 0, Logger: s.log, OnWait: s.waits.wait})
		if err != nil {
			return fmt.Errorf("account %s: %w", spec.name, err)
		}
		if cfg.RatePerMin > 0 && isLoopback(spec.baseURL) {
			s.log.Warn("the request limit is on for a local service: a sync waits for it; -rate 0 (BILLSYNC_RATE_PER_MIN=0) turns it off",
				"account", spec.name, "base_url", spec.baseURL, "rate_per_min", cfg.RatePerMin)
		}
		s.accounts = append(s.accounts, syncrun.Account{Name: spec.name, Client: c})
		s.baseURLs[spec.name] = spec.baseURL
	}
	return nil
}

// demoYesterday is -demo's first sync, a simulated day ago; then the day passes (invoices get
// paid, customers renamed, records deleted) and the main sync finds the change history and the
// as-of answers the reports are built on.
func (s *syncCmd) demoYesterday(ctx context.Context) error {
	fmt.Fprintln(s.stdout, "demo: syncing the simulator as it was yesterday, then as it is today")
	if _, err := syncrun.Run(ctx, s.cfg.DB, s.accounts, s.opts); err != nil {
		return fmt.Errorf("demo: first sync: %w", err)
	}
	s.demoSB.Advance(demoDayAgo)
	return nil
}

// openLake gives this run the lake when one is configured, opening it if the last run did not;
// lakeOutcome says what became of the run's commit for syncer status.
func (s *syncCmd) openLake(ctx context.Context) {
	s.opts.Lake, s.lakeOutcome = nil, ""
	if s.cfg.Lake.Root == "" {
		return
	}
	if s.lk == nil {
		var err error
		if s.lk, err = lake.Open(ctx, s.cfg.Lake, s.log); err != nil {
			s.log.Error("lake not opened: this run is not committed to it; the next run tries again", "err", err)
			s.lakeOutcome = "failed: " + err.Error()
			return
		}
	}
	s.opts.Lake = s.lk
	s.opts.LakeDone = func(r lake.Result, err error) {
		n, retries := r.Snapshots()
		s.lakeOutcome = fmt.Sprintf("committed %d snapshots (%d retries) in %s", n, retries, r.Took.Round(time.Millisecond))
		if err != nil {
			s.lakeOutcome = fmt.Sprintf("failed after %d snapshots: %v", n, err)
		}
	}
}

// sync is one run: the sync itself, its record (metrics, syncer status, the deliveries'
// freshness), then what follows a good one.
func (s *syncCmd) sync(ctx context.Context) error {
	// read at each run: a job applied between runs (or after the previous one) is seen
	s.opts.CreditHints = creditHints(ctx, s.journal, s.log)
	defer s.showProgress()()
	start := time.Now()
	s.rec.RunStarted(start)
	s.openLake(ctx)
	sums, err := syncrun.Run(ctx, s.cfg.DB, s.accounts, s.opts)
	err = explainKeyRefused(err, s.cfg)
	err = explainForeignAnswer(err, s.cfg)
	s.record(ctx, sums, err, start)
	if err != nil {
		return err
	}
	return s.afterSync(ctx, sums, start)
}

// showProgress starts the run's progress display and returns what ends it: a line on a
// terminal, else a log record every 30 s for a long sync (20 requests/minute).
func (s *syncCmd) showProgress() (done func()) {
	if s.tty {
		p := newProgress(s.stderr)
		s.opts.Progress = p.update
		s.waits.set(p)
		return func() {
			p.close()
			s.waits.set(nil)
		}
	}
	p := newProgressLog(s.log, 30*time.Second)
	s.opts.Progress = p.update
	return p.close
}

// record tells metrics, syncer status and the deliveries how the run ended.
func (s *syncCmd) record(ctx context.Context, sums []fetch.Summary, err error, start time.Time) {
	recordRun(ctx, &s.m, s.log, sums, err, start)
	att := attempts(ctx, s.accounts, sums, err, start)
	for name, a := range att {
		a.Lake = s.lakeOutcome
		att[name] = a
	}
	s.rec.RunFinished(att)
	if s.deliveries != nil && ctx.Err() == nil {
		if err == nil {
			s.deliveries.SyncClock(clockNotes(s.accounts, sums))
		}
		s.deliveries.LakeBehind(s.rec.LakeBehind())
		s.deliveries.SyncFinished(err, partialAccounts(s.accounts, sums), time.Now())
	}
}

// afterSync follows a good run: the summary for a person watching, the approved write jobs,
// the reports.
func (s *syncCmd) afterSync(ctx context.Context, sums []fetch.Summary, start time.Time) error {
	cfg := s.cfg
	if s.tty || cfg.demo {
		printSummary(s.stdout, cfg.DB, sums, time.Since(start), !cfg.demo)
	}
	if cfg.ApplyApproved {
		if err := applyApproved(ctx, cfg, s.accounts, s.baseURLs, s.log); err != nil {
			return err
		}
	}
	if cfg.Reports != "" {
		return writeReports(ctx, cfg, s.stdout, s.log)
	}
	return nil
}

// daemon runs sync on the schedule, and at once when asked (syncer -now) or when no warehouse
// is published yet, with the deliveries beside it, until ctx ends.
func (s *syncCmd) daemon(ctx context.Context) error {
	cfg, log := s.cfg, s.log
	// SIGUSR1 (syncer -now) asks for one sync now: heard before the daemon says where it runs,
	// so a request never meets a process that would die of the signal.
	asked, release := listenForSyncNow(ctx, cfg.DB, log)
	defer release()
	var waitDeliveries func()
	s.deliveries, waitDeliveries = startDeliveries(ctx, cfg, log, &s.m)
	defer waitDeliveries()
	defer startLakeMaintenance(ctx, cfg, log)()
	// the runner logs "stopping" and "stopped"
	log.Info("syncer started", "mode", "daemon", "schedule", cfg.Schedule, "tz", cfg.TZ, "db", cfg.DB, "accounts", len(s.accounts))
	r := &schedule.Runner{Schedule: cfg.sched, Location: cfg.TZ.Location(), Job: s.sync, Grace: cfg.StopGrace, Log: log, Now: asked}
	r.Announce = s.rec.Next
	if _, err := os.Stat(cfg.DB); errors.Is(err, os.ErrNotExist) {
		// A new install has nothing to serve until its first sync: that runs now, not at the
		// schedule's first time.
		log.Info("no warehouse published yet: the first sync runs now", "db", cfg.DB)
		r.Start = true
	}
	if s.tty {
		// The log keeps to warnings on a terminal; the person watching still learns the plan.
		fmt.Fprintf(s.stdout, "syncer: schedule %q in %s, warehouse %s\n", cfg.Schedule, cfg.TZ, cfg.DB)
		r.Announce = func(next time.Time) {
			s.rec.Next(next)
			fmt.Fprintf(s.stdout, "next run at %s (in %s); Ctrl-C stops\n", next.Format("2006-01-02 15:04 MST"),
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

// recordRun tells the metrics and the log how a run ended: its status, records, requests and
// retries, and the service clock it measured.
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

// serveMetrics serves the metrics on addr (BILLSYNC_METRICS_ADDR); the returned function stops it.
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

// Command syncer keeps a DuckDB warehouse in step with the billing service: as a daemon on a
// cron schedule, once (-once), or from the embedded simulator (-demo). "syncer job ..." runs the
// audited write jobs (see job.go and docs/jobs.md).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/billsync/billsync/internal/api"
	"github.com/billsync/billsync/internal/fetch"
	"github.com/billsync/billsync/internal/metrics"
	"github.com/billsync/billsync/internal/sandbox"
	"github.com/billsync/billsync/internal/schedule"
	"github.com/sethvargo/go-envconfig"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], envconfig.OsLookuper(), os.Stdout, os.Stderr)
	stop()
	switch {
	case err == nil:
	case errors.Is(err, flag.ErrHelp):
		// -h: the flag package has printed the flags already.
	case strings.HasPrefix(err.Error(), "usage:"):
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	default:
		fmt.Fprintln(os.Stderr, "syncer:", exitMessage(err))
		os.Exit(1)
	}
}

// run is the whole command; tests call it with their own environment and output streams.
func run(ctx context.Context, args []string, lookup envconfig.Lookuper, stdout, stderr io.Writer) error {
	if len(args) > 0 && args[0] == "job" {
		return jobCommand(ctx, args[1:], lookup, stdout)
	}
	cfg, err := loadConfig(ctx, args, lookup)
	if err != nil {
		return err
	}
	tty := isTerminal(stderr)
	log := newLogger(stderr, cfg.LogFormat, tty)

	var accounts []fetch.Account
	baseURLs := map[string]string{}
	var waits waitRelay
	if cfg.demo {
		base, shutdown, err := startDemoSandbox(cfg.demoScale, log)
		if err != nil {
			return err
		}
		defer shutdown()
		c, err := api.New(api.Config{BaseURL: base, APIKey: demoKey, Unlimited: true, Logger: log, OnWait: waits.wait})
		if err != nil {
			return err
		}
		accounts = []fetch.Account{{Name: "demo", Client: c}}
		cfg.once = true
		if cfg.Reports == "" {
			cfg.Reports = "all"
		}
	} else {
		specs, err := cfg.accounts(lookup)
		if err != nil {
			return err
		}
		for _, s := range specs {
			c, err := api.New(api.Config{BaseURL: s.baseURL, APIKey: s.key, RatePerMin: cfg.RatePerMin,
				Unlimited: cfg.RatePerMin == 0, Logger: log, OnWait: waits.wait})
			if err != nil {
				return fmt.Errorf("account %s: %w", s.name, err)
			}
			accounts = append(accounts, fetch.Account{Name: s.name, Client: c})
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
	opts := fetch.Options{
		PageSize: cfg.PageSize, Concurrency: cfg.Concurrency, MaxRequests: cfg.MaxRequests,
		MaxDuration: cfg.MaxDuration, Details: cfg.Details, CreditRefresh: cfg.CreditRefresh, Log: log,
		MemoryLimit: cfg.MemoryLimit,
	}
	journal, err := journalPath(ctx, lookup, cfg)
	if err != nil {
		return err
	}
	job := func(ctx context.Context) error {
		// read at each run: a job applied between runs (or after the previous one) is seen
		opts.CreditHints = creditHints(ctx, journal, log)
		var p *progress
		if tty {
			p = newProgress(stderr)
			opts.Progress = p.update
			waits.set(p)
			defer waits.set(nil)
			defer p.close()
		}
		start := time.Now()
		sums, err := fetch.Run(ctx, cfg.DB, accounts, opts)
		recordRun(&m, log, sums, err, start)
		if err != nil {
			return err
		}
		if tty || cfg.demo {
			printSummary(stdout, cfg.DB, sums, time.Since(start))
		}
		if cfg.ApplyApproved {
			if err := applyApproved(ctx, lookup, cfg, accounts, baseURLs, log); err != nil {
				return err
			}
		}
		if cfg.Reports != "" {
			return writeReports(ctx, lookup, cfg, stdout, log)
		}
		return nil
	}
	if cfg.once {
		return job(ctx)
	}

	loc, err := time.LoadLocation(cfg.TZ)
	if err != nil {
		return fmt.Errorf("BILLSYNC_TZ %q: %w", cfg.TZ, err)
	}
	sched, err := schedule.Parse(cfg.Schedule, loc)
	if err != nil {
		return err
	}
	log.Info("syncer started", "schedule", cfg.Schedule, "tz", cfg.TZ, "db", cfg.DB, "accounts", len(accounts))
	r := &schedule.Runner{Schedule: sched, Job: job, Grace: cfg.StopGrace, Log: log}
	return r.Run(ctx)
}

func recordRun(m *metrics.Sync, log *slog.Logger, sums []fetch.Summary, err error, start time.Time) {
	var records, requests, retries int64
	status := "succeeded"
	for _, s := range sums {
		records += s.Records
		requests += s.Requests
		retries += s.Retries
		if s.CreditPending > 0 || s.DetailPending > 0 {
			status = "partial"
		}
	}
	if err != nil {
		status = "failed"
	}
	m.RunFinished(status, records, requests, retries, time.Since(start), time.Now())
	attrs := []any{"status", status, "records", records, "requests", requests, "retries", retries,
		"took", time.Since(start).Round(time.Millisecond).String()}
	if err != nil {
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

// startDemoSandbox serves the simulator on a loopback port for -demo.
func startDemoSandbox(scale float64, log *slog.Logger) (string, func(), error) {
	sb, err := sandbox.New(sandbox.Options{Seed: 42, Scale: scale, Key: demoKey})
	if err != nil {
		return "", nil, fmt.Errorf("demo simulator: %w", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, fmt.Errorf("demo simulator: %w", err)
	}
	srv := &http.Server{Handler: sb, ReadHeaderTimeout: 5 * time.Second}
	go srv.Serve(ln)
	base := "http://" + ln.Addr().String()
	log.Info("demo simulator serving", "url", base, "scale", scale)
	return base, func() { srv.Close() }, nil
}

// newLogger logs JSON for cron and containers; on a terminal the progress display speaks and
// the log keeps to warnings.
func newLogger(w io.Writer, format string, tty bool) *slog.Logger {
	if format == "text" || format == "auto" && tty {
		return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	return slog.New(slog.NewJSONHandler(w, nil))
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// oneLine keeps the exit message to the single line cron mails and container logs show.
func oneLine(err error) string {
	s := err.Error()
	for i, r := range s {
		if r == '\n' {
			return s[:i] + " (…)"
		}
	}
	return s
}

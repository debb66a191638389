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
	"github.com/billsync/billsync/internal/fetch"
	"github.com/billsync/billsync/internal/logfmt"
	"github.com/billsync/billsync/internal/metrics"
	"github.com/billsync/billsync/internal/sandbox"
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
	cfg, err := loadConfig(ctx, args, lookup)
	if err != nil {
		return err
	}
	if cfg.now {
		return askDaemon(cfg.DB, stdout)
	}
	s := &syncCmd{cfg: cfg, stdout: stdout, stderr: stderr, tty: isTerminal(stderr), baseURLs: map[string]string{}}
	// The demo is read by a person even through a pipe (make demo | tee): plain text, no JSON.
	s.log = newLogger(stderr, cfg.LogFormat, cfg.TZ.Location(), s.tty, cfg.demo)
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

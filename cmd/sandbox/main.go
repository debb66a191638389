// Command sandbox serves the simulated billing service (internal/sandbox) over HTTP.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/billsync/billsync/internal/cli"
	"github.com/billsync/billsync/internal/sandbox"
)

func main() {
	err := run(os.Args[1:], os.Stdout, os.Stderr)
	os.Exit(cli.Exit("sandbox", err, os.Stdout, os.Stderr))
}

// run is the whole command. A flag the simulator cannot run with is a usage error (exit 2, the
// problem and a pointer to -h), as in billsync's own commands; only a failure while serving is 1.
func run(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("sandbox", flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: sandbox [flags]     serve the simulated billing service over HTTP\n\nflags:")
		fs.PrintDefaults()
	}
	var (
		addr    = fs.String("addr", "127.0.0.1:8080", "listen address")
		opts    sandbox.Options
		now     = fs.String("now", "", "start of the simulated clock, RFC 3339 (default: now, to the second)")
		clock   = fs.String("clock", "live", "live: the simulated clock runs with the wall clock (as a real service's does); frozen: it moves only by /__sandbox/advance (-admin)")
		verbose = fs.Bool("v", false, "log every request")
		order   = fs.String("list-order", "newest", "order of the paged lists: newest, updated (last change first) or shuffle (stable, seeded)")
		f       = &opts.Faults
		times   = fs.String("credit-times", "millis", "credit-history createdAt: millis (2026-11-23T07:47:44.123Z), offset (2026-11-23T14:47:44+0700), seconds (…44Z) or nozone (2026-11-23 14:47:44)")
	)
	fs.BoolVar(&opts.CreditIgnoresSortOrder, "credit-ignore-sort", false, "credit history lists oldest first whatever sortOrder asks")
	fs.StringVar(&opts.Key, "key", sandbox.DefaultKey, "read-write API key")
	fs.StringVar(&opts.ReadOnlyKey, "read-only-key", sandbox.DefaultReadOnlyKey, "read-only API key")
	fs.Int64Var(&opts.Seed, "seed", 42, "seed of the generated data")
	fs.Float64Var(&opts.Scale, "scale", 1, "data size: 1 ≈ 10,000 records, 100 ≈ 1,000,000")
	fs.IntVar(&opts.MaxPageSize, "max-page-size", 100, "cap on pageSize and limit")
	fs.IntVar(&opts.RatePerMin, "rate", 0, "requests per minute per key (0 = unlimited; the real service allows ~20)")
	fs.BoolVar(&opts.Admin, "admin", false, "serve /__sandbox/* (clock, faults, request log)")
	fs.Int64Var(&f.Seed, "fault-seed", 1, "seed of the fault sequence")
	fs.StringVar(&f.PathPrefix, "fault-path", "", "only fault requests under this path")
	fs.Float64Var(&f.RateLimit, "fault-429", 0, "fraction answered 429")
	fs.IntVar(&f.RetryAfter, "fault-retry-after", 1, "Retry-After seconds of fault 429s")
	fs.Float64Var(&f.ServerError, "fault-5xx", 0, "fraction answered 500/502/503")
	fs.Float64Var(&f.Reset, "fault-reset", 0, "fraction whose connection is reset")
	fs.Float64Var(&f.Slow, "fault-slow", 0, "fraction answered late")
	fs.IntVar(&f.SlowMs, "fault-slow-ms", 2000, "delay of slow answers, ms")
	fs.Float64Var(&f.Truncate, "fault-truncate", 0, "fraction of GETs with a cut body (matching Content-Length)")
	fs.Float64Var(&f.TruncateDrop, "fault-truncate-drop", 0, "fraction of GETs whose connection drops mid-body")
	fs.Float64Var(&f.StringNumbers, "fault-string-numbers", 0, "fraction of GETs with numbers sent as strings")
	fs.Float64Var(&f.InsertWhilePaging, "fault-insert", 0, "fraction of page>=2 GETs preceded by a new record at the front")
	fs.Float64Var(&f.DuplicatePage, "fault-duplicate", 0, "fraction of page>=2 GETs starting one item early")
	fs.Float64Var(&f.ApplyThen500, "fault-apply-500", 0, "fraction of POSTs applied, then answered 500")
	fs.Float64Var(&f.ApplyThenReset, "fault-apply-reset", 0, "fraction of POSTs applied, then reset")
	fs.Float64Var(&f.ApplyThenHang, "fault-apply-hang", 0, "fraction of POSTs applied, then never answered")
	fs.IntVar(&f.HangMs, "fault-hang-ms", 60000, "how long apply-hang holds the request, ms")
	if err := cli.Parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return cli.Usagef(fs, "unexpected argument %q", fs.Arg(0))
	}
	if err := checkFlags(fs, &opts, *addr, *clock, *order, *times, *now); err != nil {
		return cli.Usage(fs, err)
	}
	level := slog.LevelInfo
	if *verbose {
		level = slog.LevelDebug
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
	opts.Logger = log

	// Listen for signals before announcing the address, so a stop sent right after is not lost.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	start := time.Now()
	s, err := sandbox.New(opts)
	if err != nil {
		return cli.Usage(fs, err) // checkFlags let through what only New knows
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return fmt.Errorf("listen %s: %w", *addr, err)
	}
	log.Info("sandbox seeded", "seed", opts.Seed, "scale", opts.Scale, "now", s.Now(), "took", time.Since(start).Round(time.Millisecond))
	printBanner(stdout, "http://"+ln.Addr().String(), opts)

	if *clock == "live" {
		go runClock(ctx, s, time.Second)
	}
	srv := &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	log.Info("sandbox stopping")
	shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shut); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return nil
}

// checkFlags reads the flags that are words or times into opts and says what no simulator can
// run with: every mistake at once, each naming its flag. A 0 or a negative number is refused
// where it means nothing (a page size, a scale, a delay); a fraction is within [0, 1].
func checkFlags(fs *flag.FlagSet, opts *sandbox.Options, addr, clock, order, times, now string) error {
	var errs []error
	bad := func(name string, format string, a ...any) {
		errs = append(errs, fmt.Errorf("-%s %s: %s", name, fs.Lookup(name).Value, fmt.Sprintf(format, a...)))
	}
	if _, port, err := net.SplitHostPort(addr); err != nil {
		bad("addr", "want host:port, e.g. 127.0.0.1:8080")
	} else if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		bad("addr", "port %q: want a number 0-65535", port)
	}
	if clock != "live" && clock != "frozen" {
		bad("clock", "want live or frozen")
	}
	var err error
	if opts.ListOrder, err = sandbox.ParseListOrder(order); err != nil {
		bad("list-order", "%v", err)
	}
	if opts.CreditTimes, err = sandbox.ParseCreditTimeFormat(times); err != nil {
		bad("credit-times", "%v", err)
	}
	if now != "" {
		t, err := time.Parse(time.RFC3339, now)
		if err != nil {
			bad("now", "want an RFC 3339 time such as 2026-11-01T00:00:00Z")
		}
		opts.Now = t.UTC()
	}
	if opts.Scale <= 0 || opts.Scale > 1000 || math.IsNaN(opts.Scale) {
		bad("scale", "want a number above 0, at most 1000")
	}
	if opts.Key == opts.ReadOnlyKey {
		errs = append(errs, fmt.Errorf("-key and -read-only-key are the same %q: the keys must differ", opts.Key))
	}
	if opts.MaxPageSize < 1 {
		bad("max-page-size", "want at least 1")
	}
	for name, v := range map[string]int{"rate": opts.RatePerMin, "fault-retry-after": opts.Faults.RetryAfter,
		"fault-slow-ms": opts.Faults.SlowMs, "fault-hang-ms": opts.Faults.HangMs} {
		if v < 0 {
			bad(name, "cannot be negative")
		}
	}
	fs.VisitAll(func(f *flag.Flag) {
		if !strings.HasPrefix(f.Name, "fault-") {
			return
		}
		if g, ok := f.Value.(flag.Getter); ok {
			if p, ok := g.Get().(float64); ok && (p < 0 || p > 1 || math.IsNaN(p)) {
				bad(f.Name, "a fraction: want a number from 0 to 1")
			}
		}
	})
	slices.SortFunc(errs, func(a, b error) int { return strings.Compare(a.Error(), b.Error()) })
	return errors.Join(errs...)
}

// runClock moves the simulated clock with the wall clock until ctx ends: a client that compares
// the service's Date, or the time of a record it wrote, with its own clock sees a service whose
// time passes (a frozen clock reads as a service whose clock falls behind by the minute).
func runClock(ctx context.Context, s *sandbox.Server, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	last := time.Now()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			s.Advance(now.Sub(last))
			last = now
		}
	}
}

func printBanner(w io.Writer, base string, o sandbox.Options) {
	key := o.Key
	if key == "" {
		key = sandbox.DefaultKey
	}
	ro := o.ReadOnlyKey
	if ro == "" {
		ro = sandbox.DefaultReadOnlyKey
	}
	fmt.Fprintf(w, "billing sandbox at %s\n  read-write key: %s\n  read-only key:  %s\n\ntry:\n", base, key, ro)
	fmt.Fprintf(w, "  curl -H 'Authorization: Bearer %s' '%s/hl/v1/customer?page=1&pageSize=5'\n", key, base)
	fmt.Fprintf(w, "  curl -H 'Authorization: Bearer %s' '%s/hl/v2/webhooks/new-history?limit=5'\n", key, base)
	fmt.Fprintf(w, "  curl -H 'Authorization: Bearer %s' -X POST -d '{\"fromEmail\":\"a@b.c\",\"toEmail\":\"d@e.f\"}' %s/hl/v1/customer/update\n", key, base)
	if o.Admin {
		fmt.Fprintf(w, "  curl -X POST '%s/__sandbox/advance?hours=24'\n", base)
	}
}

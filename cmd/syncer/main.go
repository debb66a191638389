// Command syncer keeps a DuckDB warehouse in step with the billing service: as a daemon on a
// cron schedule, once (-once), or from the embedded simulator (-demo). "syncer job ..." runs the
// audited write jobs (see job.go and docs/jobs.md).
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/billsync/billsync/internal/cli"
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
	s := &syncCmd{cfg: cfg, log: log, stdout: stdout, stderr: stderr, tty: tty, baseURLs: map[string]string{}}
	return s.run(ctx, lookup)
}

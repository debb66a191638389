package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/billsync/billsync/internal/cli"
	conf "github.com/billsync/billsync/internal/config"
	"github.com/billsync/billsync/internal/lake"
	"github.com/sethvargo/go-envconfig"
)

// lakeConfig is what syncer lake reads: the lake and the zone month ends are in. No API key.
type lakeConfig struct {
	conf.Lake
	conf.Report
}

// lakeCommand is "syncer lake maintain": the lake's maintenance once, as the daemon runs it on
// BILLSYNC_LAKE_MAINTAIN (docs/lake.md).
func lakeCommand(ctx context.Context, args []string, lookup envconfig.Lookuper, stdout io.Writer) error {
	var c lakeConfig
	if _, err := conf.Load(ctx, &c, lookup); err != nil {
		return cli.Config(err)
	}
	fs := c.flagSet()
	if len(args) == 0 || args[0] != "maintain" {
		if len(args) > 0 && (args[0] == "-h" || args[0] == "-help" || args[0] == "--help") {
			return cli.Parse(fs, args)
		}
		what := "no subcommand"
		if len(args) > 0 {
			what = fmt.Sprintf("unknown subcommand %q", args[0])
		}
		return cli.Usagef(fs, "%s: want syncer lake maintain", what)
	}
	if err := cli.Parse(fs, args[1:]); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return cli.Usagef(fs, "unexpected argument %q", fs.Arg(0))
	}
	if err := errors.Join(conf.Check(&c), c.Lake.Check()); err != nil {
		return cli.Usage(fs, err)
	}
	if c.Root == "" {
		return cli.Usagef(fs, "no lake: set BILLSYNC_LAKE and BILLSYNC_LAKE_CATALOG (docs/lake.md)")
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	res, err := maintainLake(ctx, c.Lake, c.TZ.Location(), log)
	for _, t := range res.Tables {
		fmt.Fprintf(stdout, "%-22s %d month-end tags, %d snapshots expired, %d partitions compacted (%d files), %d orphan files removed\n",
			t.Table, len(t.Tagged), t.Expired, t.Compacted, t.FilesRewritten, t.Orphans)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "lake maintained in %s\n", res.Took.Round(time.Millisecond))
	return nil
}

// flagSet is syncer lake maintain's flag set over c.
func (c *lakeConfig) flagSet() *flag.FlagSet {
	fs := flag.NewFlagSet("syncer lake maintain", flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), `usage: syncer lake maintain [flags]

The lake's maintenance, once (the daemon runs it on BILLSYNC_LAKE_MAINTAIN): per table, compacts
the account partitions that gathered small files, tags each month's end month-end-YYYY-MM, expires
the snapshots older than -lake-keep that no tag holds (with the files only they held) and removes
files no snapshot holds that are older than a day. Safe beside syncers committing.
Exit status: 0 done, 1 a table's maintenance failed (the others are done), 2 a usage or
configuration error.

flags:
`)
		fs.PrintDefaults()
	}
	conf.Bind(fs, c, "lake", "lake-catalog", "lake-namespace", "lake-s3-endpoint", "lake-keep", "tz")
	return fs
}

// maintainLake opens the lake, maintains it and closes it.
func maintainLake(ctx context.Context, cfg conf.Lake, loc *time.Location, log *slog.Logger) (lake.Maintenance, error) {
	lk, err := lake.Open(ctx, cfg, log)
	if err != nil {
		return lake.Maintenance{}, err
	}
	defer lk.Close()
	return lk.Maintain(ctx, lake.MaintainOptions{Keep: cfg.Keep, Loc: loc})
}

// startLakeMaintenance runs the lake's maintenance on BILLSYNC_LAKE_MAINTAIN beside the
// daemon's syncs (each step is its own commit, retried on a conflict with theirs). A failure is
// logged and left to the next time; it never touches a sync. The returned func waits for a
// maintenance under way to stop.
func startLakeMaintenance(ctx context.Context, cfg *config, log *slog.Logger) (wait func()) {
	if cfg.Lake.Root == "" || cfg.lakeSched == nil {
		return func() {}
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			next := cfg.lakeSched.Next(time.Now())
			select {
			case <-ctx.Done():
				return
			case <-time.After(time.Until(next)):
			}
			res, err := maintainLake(ctx, cfg.Lake, cfg.TZ.Location(), log)
			tagged, expired, compacted, orphans := res.Totals()
			attrs := []any{"tagged", tagged, "expired", expired, "compacted", compacted, "orphans", orphans, "took", res.Took}
			if err != nil {
				log.Error("lake maintenance failed: the next one tries again", append(attrs, "err", err)...)
				continue
			}
			log.Info("lake maintained", attrs...)
		}
	})
	return wg.Wait
}

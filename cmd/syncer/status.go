package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/billsync/billsync/internal/cli"
	conf "github.com/billsync/billsync/internal/config"
	"github.com/billsync/billsync/internal/delivery"
	"github.com/billsync/billsync/internal/jobs"
	"github.com/billsync/billsync/internal/report"
	"github.com/billsync/billsync/internal/schedule"
	"github.com/billsync/billsync/internal/status"
	"github.com/sethvargo/go-envconfig"
)

// statusConfig is what syncer status reads: the files, the zone and schedules, the bounds it
// judges by. No API key: status reads billsync's own files only.
type statusConfig struct {
	conf.Files
	conf.Report
	Schedule string `env:"BILLSYNC_SCHEDULE, default=0 2 * * *" check:"cron" flag:"schedule" help:"cron spec of the daemon"`
	conf.Delivery
	conf.Jobs
}

// statusCommand is "syncer status [-json]": where things stand, exiting 0 when nothing needs a
// person, 3 when something does, 4 when no sync has published a warehouse yet (docs/operations.md).
func statusCommand(ctx context.Context, args []string, lookup envconfig.Lookuper, stdout io.Writer) error {
	var c statusConfig
	if _, err := conf.Load(ctx, &c, lookup); err != nil {
		return cli.Config(err)
	}
	fs := flag.NewFlagSet("syncer status", flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), `usage: syncer status [-json] [flags]

Where things stand: each account's latest sync and the next, each table's freshness, the
deliveries, job rows waiting for a person, the alerts active. Works whether or not a daemon runs.
Exit status: 0 nothing needs a person, 3 something does (listed), 4 no sync has published a
warehouse yet, 2 a usage or configuration error, 1 status could not be read.

flags:
`)
		fs.PrintDefaults()
	}
	conf.Bind(fs, &c, "db", "journal", "tz", "schedule", "deliveries", "alert-no-sync")
	asJSON := fs.Bool("json", false, "print the status as JSON, for scripts and monitors")
	if err := cli.Parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return cli.Usagef(fs, "unexpected argument %q", fs.Arg(0))
	}
	if err := errors.Join(conf.Check(&c), report.CheckSettings(c.Report)); err != nil {
		return cli.Usage(fs, err)
	}
	loc := c.TZ.Location() // read and checked with the settings
	sched, err := schedule.Parse(c.Schedule, loc)
	if err != nil {
		return cli.Usage(fs, conf.Problem(&c, "BILLSYNC_SCHEDULE", err))
	}
	src := status.Sources{
		DB: c.DB, JobJournal: c.Journal, DeliveryJournal: delivery.JournalPath(c.DB), State: status.StatePath(c.DB),
		Next: sched.Next, StaleAfter: c.AlertNoSync, ApprovalWindow: c.RepeatWindow, Now: time.Now(),
	}
	if src.JobJournal == "" {
		src.JobJournal = jobs.DefaultJournalPath(c.DB)
	}
	// the delivery settings checked as the daemon checks them; the schedule file's deliveries listed
	f, _, err := delivery.Setup(c.Files, c.Report, c.Delivery, nil)
	if err != nil {
		return cli.Usage(fs, err)
	}
	if f != nil {
		for _, d := range f.Deliveries {
			src.Deliveries = append(src.Deliveries, status.ScheduledDelivery{Name: d.Name, Next: d.Next})
		}
	}
	r, err := status.Gather(ctx, src)
	if err != nil {
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(r); err != nil {
			return err
		}
	} else {
		r.WriteText(stdout, loc)
	}
	if code := r.ExitCode(); code != 0 {
		return cli.StatusError{Code: code}
	}
	return nil
}

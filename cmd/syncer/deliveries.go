package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"

	conf "github.com/billsync/billsync/internal/config"
	"github.com/billsync/billsync/internal/delivery"
	"github.com/billsync/billsync/internal/fetch"
	"github.com/billsync/billsync/internal/metrics"
	"github.com/billsync/billsync/internal/syncrun"
)

// partialAccounts names the accounts a sync published incomplete, "" for none (sums are in
// the order of accounts).
func partialAccounts(accounts []syncrun.Account, sums []fetch.Summary) string {
	var names []string
	for i, s := range sums {
		if s.Status() == "partial" && i < len(accounts) {
			names = append(names, accounts[i].Name)
		}
	}
	return strings.Join(names, ", ")
}

// startDeliveries runs the schedule file's deliveries and the operators' alerts beside the
// daemon's syncs, in a goroutine of their own: a delivery never delays or fails a sync. It
// returns nil when none of BILLSYNC_DELIVERIES, BILLSYNC_ALERTS_TO and BILLSYNC_METRICS_ADDR is set, and a wait for
// the scheduler to stop once ctx ends.
func startDeliveries(ctx context.Context, cfg *config, log *slog.Logger, m *metrics.Sync) (*delivery.Scheduler, func()) {
	if cfg.deliveries == nil && cfg.AlertsTo == "" && cfg.MetricsAddr == "" {
		return nil, func() {}
	}
	o := cfg.delivery
	o.Log = log
	f := cfg.deliveries
	if f == nil {
		f = &delivery.File{Loc: cfg.TZ.Location()} // alerts only
	}
	s := &delivery.Scheduler{File: f, Options: o, Log: log, NoSyncAlert: cfg.AlertNoSync, DQMin: cfg.AlertDQMin, Observer: m}
	// Without operators' addresses the alert states are still kept, logged and served as
	// metrics.
	to, _ := conf.CheckAddresses(cfg.AlertsTo)
	s.Alerts = &delivery.Alerter{To: to, Options: o, Log: log, Observer: m}
	log.Info("deliveries scheduled", "file", cfg.Deliveries, "deliveries", len(f.Deliveries), "alerts_to", cfg.AlertsTo)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		s.Run(ctx)
	}()
	return s, wg.Wait
}

// demoSchedule is the shipped schedule file the demo shows a delivery of, when run from the
// repository's root (make demo).
const demoSchedule = "deliveries.example.yaml"

// demoDelivery writes the example's daily delivery into the outbox as it would be sent (a dry
// run: nothing is sent or journaled), so the demo shows a message too. Not being able to is
// logged, never the demo's failure.
func demoDelivery(ctx context.Context, cfg *config, stdout io.Writer, log *slog.Logger) {
	if _, err := os.Stat(demoSchedule); err != nil {
		return // not in the repository's root
	}
	f, err := delivery.Load(demoSchedule, cfg.TZ.Location())
	if err == nil && cfg.Outbox == "" {
		err = errors.New("BILLSYNC_OUTBOX is empty")
	}
	var d *delivery.Delivery
	if err == nil {
		d, err = f.Find("daily")
	}
	var asOf time.Time
	if err == nil {
		asOf, err = delivery.AsOfDate(d.AsOf, time.Now(), cfg.TZ.Location())
	}
	var res delivery.Result
	if err == nil {
		o := cfg.delivery
		o.Log = slog.New(slog.DiscardHandler)
		res, err = delivery.Deliver(ctx, o, delivery.Occurrence{Delivery: d, AsOf: asOf, DryRun: true})
	}
	if err != nil {
		log.Warn("demo: the example delivery was not written", "err", err)
		return
	}
	fmt.Fprintf(stdout, "\nE-mail: the example's daily delivery (%s) as it would be sent, in any mail client:\n  %s\n",
		demoSchedule, res.EML)
}

package main

import (
	"context"
	"log/slog"
	"strings"
	"sync"

	"github.com/billsync/billsync/internal/delivery"
	"github.com/billsync/billsync/internal/fetch"
)

// partialAccounts names the accounts a sync published incomplete, "" for none (sums are in
// the order of accounts).
func partialAccounts(accounts []fetch.Account, sums []fetch.Summary) string {
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
// returns nil when neither BILLSYNC_DELIVERIES nor BILLSYNC_ALERTS_TO is set, and a wait for
// the scheduler to stop once ctx ends.
func startDeliveries(ctx context.Context, cfg *config, log *slog.Logger) (*delivery.Scheduler, func()) {
	if cfg.deliveries == nil && cfg.AlertsTo == "" {
		return nil, func() {}
	}
	o := cfg.delivery
	o.Log = log
	f := cfg.deliveries
	if f == nil {
		f = &delivery.File{Loc: cfg.loc} // alerts only
	}
	s := &delivery.Scheduler{File: f, Options: o, Log: log, NoSyncAlert: cfg.AlertNoSync}
	if to, _ := delivery.CheckAddresses(cfg.AlertsTo); len(to) > 0 {
		s.Alerts = &delivery.Alerter{To: to, Options: o, Log: log}
	}
	log.Info("deliveries scheduled", "file", cfg.Deliveries, "deliveries", len(f.Deliveries), "alerts_to", cfg.AlertsTo)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		s.Run(ctx)
	}()
	return s, wg.Wait
}

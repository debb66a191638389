package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"strings"

	"github.com/billsync/billsync/internal/jobs"
	"github.com/billsync/billsync/internal/report"
	"github.com/billsync/billsync/internal/syncrun"
)

// applyApproved sends the job plans a person approved (syncer job approve), one account after the
// other, after a successful sync: planning validated against the warehouse this sync just
// published. Approval is the production confirmation, for the service it named only: a plan
// approved for another one, or approved by its planner without BILLSYNC_ALLOW_SELF_APPROVE here, is
// logged as not sent, with why.
func applyApproved(ctx context.Context, cfg *config, accounts []syncrun.Account,
	baseURLs map[string]string, log *slog.Logger) error {
	journal := journalPath(cfg)
	var errs []error
	for _, a := range accounts {
		results, err := jobs.ApplyApproved(ctx, journal, jobs.ApplyOptions{
			Client: a.Client, Account: a.Name, BaseURL: baseURLs[a.Name],
			Production: isProduction(baseURLs[a.Name], cfg.Environment), Confirmed: true, Approvals: cfg.Approvals,
			User: "syncer daemon as " + login(), Log: log, Settle: cfg.JobSettle, RepeatWindow: cfg.RepeatWindow, Location: cfg.TZ.Location(),
			Warehouse: cfg.DB,
		})
		for _, r := range results {
			planID := ""
			if r.Plan != nil {
				planID = r.Plan.ID
			}
			if r.Status == jobs.RunRefused {
				log.Warn("approved job plan not sent", "account", a.Name, "plan", planID, "base_url", baseURLs[a.Name],
					"reason", r.Refused)
				continue
			}
			log.Info("approved job plan applied", "account", a.Name, "plan", planID, "run", r.RunID,
				"status", r.Status, "sent", r.Sent, "reconciled", r.Reconciled, "succeeded", r.Succeeded,
				"failed", r.Failed, "unresolved", r.Unresolved, "held", r.Held, "planned", r.Planned, "stopped", r.Stopped)
			if r.Plan == nil {
				continue
			}
			for _, act := range r.Plan.Actions {
				if act.State == jobs.Unresolved {
					log.Warn("job row unresolved: check it on the service and settle it by hand", "account", a.Name,
						"plan", planID, "row", act.Seq, "line", act.Line, "target", act.Target, "read", act.Detail["read"],
						"missing", act.Detail["missing"], "settle", act.Detail["settle"])
				}
			}
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("apply approved plans of %s: %w", a.Name, err))
		}
	}
	return errors.Join(errs...)
}

// writeReports writes the configured reports of the warehouse this sync just published, as of
// today in BILLSYNC_TZ. It runs after any job application, never beside it: both use the journal.
func writeReports(ctx context.Context, cfg *config, stdout io.Writer, log *slog.Logger) error {
	var names []string
	if cfg.Reports != "all" {
		names = reportNames(cfg.Reports)
	}
	files, err := report.Generate(ctx, report.Options{
		Report: cfg.Report, DB: cfg.DB, Journal: cfg.Journal, Names: names, Log: log,
	})
	if err != nil {
		return fmt.Errorf("reports: %w", err)
	}
	log.Info("reports written", "dir", cfg.ReportsOut, "files", len(files))
	if cfg.demo && len(files) > 0 {
		workbook := files[0]
		for _, f := range files {
			if strings.HasPrefix(filepath.Base(f), "aging_") && strings.HasSuffix(f, ".xlsx") {
				workbook = f
				break
			}
		}
		demoDelivery(ctx, cfg, stdout, log)
		printNextSteps(stdout, cfg.DB, workbook, len(files))
	}
	return nil
}

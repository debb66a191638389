package main

import (
	"context"
	"log/slog"

	"github.com/billsync/billsync/internal/jobs"
	"github.com/billsync/billsync/internal/syncdata"
)

// journalPath is the job journal: BILLSYNC_JOURNAL (-journal), or billsync-jobs.duckdb beside the
// warehouse.
func journalPath(cfg *config) string {
	if cfg.Journal == "" {
		return jobs.DefaultJournalPath(cfg.DB)
	}
	return cfg.Journal
}

// creditHints are the customers billsync sent credit to, from the job journal, for the sync to
// read their credit history again. A journal that cannot be read costs only that: the sync runs,
// and says what it misses.
func creditHints(ctx context.Context, journal string, log *slog.Logger) []syncdata.CreditHint {
	sends, err := jobs.CreditSends(ctx, journal)
	if err != nil {
		log.Warn("job journal unreadable: customers topped up by a job are not re-read for that reason this run "+
			"(the credit report may show their top-up as a mismatch until a later sync reads them)",
			"journal", journal, "err", err)
		return nil
	}
	hints := make([]syncdata.CreditHint, len(sends))
	for i, s := range sends {
		hints[i] = syncdata.CreditHint{Account: s.Account, CustomerID: s.CustomerID, At: s.At}
	}
	return hints
}

package warehouse

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/billsync/billsync/internal/sqlfile"
)

var creditFetchedSQL = sqlfile.MustLoad(sqlFS, "queries/credit_fetched.sql", "delete", "insert")

// markCreditFetched records, in one transaction, that the credit histories of customers
// were fetched as of observedAt, each for the reason at the same index of reasons (nil: none).
func (b *Build) markCreditFetched(ctx context.Context, account string, customers, reasons []string, observedAt time.Time, runID int64) error {
	if len(customers) == 0 {
		return nil
	}
	err := b.inTx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, creditFetchedSQL.Get("delete"), account, customers, observedAt.UTC(), runID); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, creditFetchedSQL.Get("insert"), account, customers, observedAt.UTC(), runID, reasons)
		return err
	})
	if err != nil {
		return fmt.Errorf("mark %d credit histories of %s fetched: %w", len(customers), account, err)
	}
	return nil
}

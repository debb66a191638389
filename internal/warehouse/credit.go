package warehouse

import (
	"context"
	"database/sql"
	_ "embed"
	"fmt"
	"time"
)

//go:embed queries/credit_targets.sql
var creditTargetsSQL string

// CreditTarget is a customer whose credit history should be fetched.
type CreditTarget struct {
	CustomerID  string
	Since       time.Time // fetch records from here; zero means the full history
	LastFetched time.Time // zero when never fetched
}

// CreditTargets lists up to limit customers of account whose credit history is due, in the
// order of queries/credit_targets.sql. Customers last fetched before refreshBefore are due even
// without any sign of credit. Since overlaps the last fetch by overlap so late-arriving records
// are not missed.
func (b *Build) CreditTargets(ctx context.Context, account string, overlap time.Duration, refreshBefore time.Time, limit int) ([]CreditTarget, error) {
	if limit <= 0 {
		return nil, nil
	}
	rows, err := b.db.QueryContext(ctx, creditTargetsSQL, account, refreshBefore.UTC(), limit)
	if err != nil {
		return nil, fmt.Errorf("credit targets of %s: %w", account, err)
	}
	defer rows.Close()
	var out []CreditTarget
	for rows.Next() {
		var t CreditTarget
		var last, active sql.NullTime
		if err := rows.Scan(&t.CustomerID, &last, &active); err != nil {
			return nil, fmt.Errorf("credit targets of %s: %w", account, err)
		}
		if last.Valid {
			t.LastFetched = last.Time.UTC()
			t.Since = t.LastFetched.Add(-overlap)
		}
		out = append(out, t)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("credit targets of %s: %w", account, err)
	}
	return out, nil
}

// MarkCreditFetched records that a customer's credit history was fetched as of observedAt.
func (b *Build) MarkCreditFetched(ctx context.Context, account, customerID string, observedAt time.Time, runID int64) error {
	err := b.inTx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, stateSQL.Get("delete_credit_fetched"), account, customerID); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, stateSQL.Get("insert_credit_fetched"), account, customerID, observedAt.UTC(), runID)
		return err
	})
	if err != nil {
		return fmt.Errorf("mark credit fetched for customer %s: %w", customerID, err)
	}
	return nil
}

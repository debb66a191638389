package warehouse

import (
	"context"
	"database/sql"
	_ "embed"
	"encoding/json"
	"fmt"
	"time"

	"github.com/billsync/billsync/internal/sqlfile"
)

//go:embed queries/credit_targets.sql
var creditTargetsSQL string

var creditNeverSQL = sqlfile.MustLoad(sqlFS, "queries/credit_never.sql", "any_read", "never")

// CreditTarget is a customer whose credit history should be fetched.
type CreditTarget struct {
	CustomerID  string
	Since       time.Time // fetch records from here; zero means the full history
	LastFetched time.Time // zero when never fetched
	// Reason is why it is due (queries/credit_targets.sql): never, topup, signal, bound, interval
	// or ahead (read before its bound to level the runs' reads).
	Reason string
}

// CreditPlan says when credit histories are due.
type CreditPlan struct {
	Now time.Time // the run's observation time
	// Overlap re-reads this much history before the last read, for entries that arrive late.
	Overlap time.Duration
	// Refresh is the hard staleness bound: every customer is read at least this often.
	Refresh time.Duration
	// MinInterval is the shortest adaptive interval between reads of a customer whose own
	// history says entries arrive often; zero means DefaultCreditMinInterval.
	MinInterval time.Duration
	// Hints are customers billsync itself sent credit to (job journal add-credit sends): one sent
	// after the customer's last read makes it due with reason topup, before every signal. Hints
	// of other accounts are ignored.
	Hints []CreditHint
}

// CreditHint says billsync sent credit to a customer of Account at At (the latest time recorded
// for the send or its outcome).
type CreditHint struct {
	Account, CustomerID string
	At                  time.Time
}

// DefaultCreditMinInterval is the shortest adaptive interval: a nightly sync reads a customer
// whose credit moves every day at each run, and no more often.
const DefaultCreditMinInterval = 24 * time.Hour

// creditTargets lists up to limit customers of account whose credit history is due under p, in
// the order of queries/credit_targets.sql. Since overlaps the last read by p.Overlap.
func (b *Build) creditTargets(ctx context.Context, account string, p CreditPlan, limit int) ([]CreditTarget, error) {
	if limit <= 0 {
		return nil, nil
	}
	if p.Refresh <= 0 {
		return nil, fmt.Errorf("credit targets of %s: refresh bound %v is not positive", account, p.Refresh)
	}
	if p.MinInterval <= 0 {
		p.MinInterval = DefaultCreditMinInterval
	}
	hints, err := hintsJSON(account, p.Hints)
	if err != nil {
		return nil, fmt.Errorf("credit targets of %s: %w", account, err)
	}
	var read bool
	if err := b.db.QueryRowContext(ctx, creditNeverSQL.Get("any_read"), account).Scan(&read); err != nil {
		return nil, fmt.Errorf("credit targets of %s: %w", account, err)
	}
	var rows *sql.Rows
	if read {
		rows, err = b.db.QueryContext(ctx, creditTargetsSQL, account, p.Now.UTC(),
			p.Refresh.Microseconds(), min(p.MinInterval, p.Refresh).Microseconds(), hints, limit)
	} else { // the first sync: every customer is `never` (queries/credit_never.sql)
		rows, err = b.db.QueryContext(ctx, creditNeverSQL.Get("never"), account, limit)
	}
	if err != nil {
		return nil, fmt.Errorf("credit targets of %s: %w", account, err)
	}
	defer rows.Close()
	var out []CreditTarget
	for rows.Next() {
		var t CreditTarget
		var last sql.NullTime
		if err := rows.Scan(&t.CustomerID, &last, &t.Reason); err != nil {
			return nil, fmt.Errorf("credit targets of %s: %w", account, err)
		}
		if last.Valid {
			t.LastFetched = last.Time.UTC()
			t.Since = t.LastFetched.Add(-p.Overlap)
		}
		out = append(out, t)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("credit targets of %s: %w", account, err)
	}
	return out, nil
}

// hintsJSON is account's hints as the query's JSON parameter (times in epoch microseconds).
func hintsJSON(account string, hs []CreditHint) (string, error) {
	type hint struct {
		C string `json:"c"`
		T int64  `json:"t"`
	}
	out := make([]hint, 0, len(hs))
	for _, h := range hs {
		if h.Account == account && h.CustomerID != "" {
			out = append(out, hint{h.CustomerID, h.At.UnixMicro()})
		}
	}
	b, err := json.Marshal(out)
	return string(b), err
}

package warehouse

import (
	"context"
	"database/sql"
	_ "embed"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/billsync/billsync/internal/sqlfile"
)

//go:embed queries/credit_targets.sql
var creditTargetsText string

// The Go side and the SQL agree on the reasons when the package loads, not when a run first
// meets one: each query names its reasons as literals, and a reason it returns must be known.
var creditTargetsSQL = mustNameReasons("queries/credit_targets.sql", creditTargetsText, creditReasons...)

// The reasons a customer's credit history is due, as the queries name them, most important first
// (queries/credit_targets.sql; queries/credit_never.sql gives never alone).
const (
	CreditNever    = "never"
	CreditTopup    = "topup"
	CreditSignal   = "signal"
	CreditBound    = "bound"
	CreditInterval = "interval"
	CreditAhead    = "ahead"
)

var creditReasons = []string{CreditNever, CreditTopup, CreditSignal, CreditBound, CreditInterval, CreditAhead}

// CreditOwed says whether a run owes a read for this reason: left unread, the customer's credit is
// older than promised (the bound's hard limit, or a run late for a signal or billsync's own
// top-up). Never-read customers are the first sync's backlog, and an interval or a read ahead
// only comes early.
func CreditOwed(reason string) bool {
	return reason == CreditTopup || reason == CreditSignal || reason == CreditBound
}

// mustNameReasons returns text after checking that it names each reason as a SQL literal.
func mustNameReasons(file, text string, reasons ...string) string {
	for _, r := range reasons {
		if !strings.Contains(text, "'"+r+"'") {
			panic(fmt.Sprintf("%s does not name the credit reason '%s'", file, r))
		}
	}
	return text
}

var creditNeverSQL = sqlfile.MustLoad(sqlFS, "queries/credit_never.sql", "any_read", "never")

var _ = mustNameReasons("queries/credit_never.sql", creditNeverSQL.Get("never"), CreditNever)

// CreditTarget is a customer whose credit history should be fetched.
type CreditTarget struct {
	CustomerID  string
	Since       time.Time // fetch records from here; zero means the full history
	LastFetched time.Time // zero when never fetched
	// Reason is why it is due (queries/credit_targets.sql): one of the Credit* reasons above;
	// ahead is read before its bound to level the runs' reads.
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
		if !slices.Contains(creditReasons, t.Reason) {
			return nil, fmt.Errorf("credit targets of %s: customer %s due for %q, a reason the syncer does not know (queries/credit_targets.sql)", account, t.CustomerID, t.Reason)
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

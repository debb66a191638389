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
	"github.com/billsync/billsync/internal/syncdata"
)

//go:embed queries/credit_targets.sql
var creditTargetsText string

// The Go side and the SQL agree on the reasons when the package loads, not when a run first
// meets one: each query names its reasons as literals, and a reason it returns must be known.
var creditTargetsSQL = mustNameReasons("queries/credit_targets.sql", creditTargetsText, syncdata.CreditReasons...)

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

var _ = mustNameReasons("queries/credit_never.sql", creditNeverSQL.Get("never"), syncdata.CreditNever)

// DefaultCreditMinInterval is the shortest adaptive interval: a nightly sync reads a customer
// whose credit moves every day at each run, and no more often.
const DefaultCreditMinInterval = 24 * time.Hour

// creditTargets lists up to limit customers of account whose credit history is due under p, in
// the order of queries/credit_targets.sql. Since overlaps the last read by p.Overlap.
func (b *Build) creditTargets(ctx context.Context, account string, p syncdata.CreditPlan, limit int) ([]syncdata.CreditTarget, error) {
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
		rows, err = b.db.QueryContext(ctx, creditTargetsSQL, account, p.Now.UTC(), p.ServiceAhead.Microseconds(),
			p.Refresh.Microseconds(), min(p.MinInterval, p.Refresh).Microseconds(), hints, limit)
	} else { // the first sync: every customer is `never` (queries/credit_never.sql)
		rows, err = b.db.QueryContext(ctx, creditNeverSQL.Get("never"), account, limit)
	}
	if err != nil {
		return nil, fmt.Errorf("credit targets of %s: %w", account, err)
	}
	defer rows.Close()
	var out []syncdata.CreditTarget
	for rows.Next() {
		var t syncdata.CreditTarget
		var last sql.NullTime
		if err := rows.Scan(&t.CustomerID, &last, &t.Reason); err != nil {
			return nil, fmt.Errorf("credit targets of %s: %w", account, err)
		}
		if !slices.Contains(syncdata.CreditReasons, t.Reason) {
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
func hintsJSON(account string, hs []syncdata.CreditHint) (string, error) {
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

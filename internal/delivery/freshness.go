package delivery

import (
	"context"
	"database/sql"
	"embed"
	"fmt"
	"strings"
	"time"

	"github.com/billsync/billsync/internal/duckfile"
	"github.com/billsync/billsync/internal/report"
	"github.com/billsync/billsync/internal/sqlfile"
	"github.com/billsync/billsync/internal/warehouse"
)

//go:embed freshness.sql
var freshFS embed.FS

var freshStmts = sqlfile.MustLoad(freshFS, "freshness.sql", "newest_runs", "last_success")

// Freshness is what the published warehouse says about the sync a delivery reflects.
type Freshness struct {
	Run      int64     // the newest sync run (of the oldest account, with several)
	Status   string    // its status
	Finished time.Time // when it finished; zero when it has no end
	// Stale is why the figures may not reflect the as-of date ("" = fresh), in the locale.
	Stale string
}

// Age is how long before now the sync finished.
func (f Freshness) Age(now time.Time) time.Duration {
	if f.Finished.IsZero() {
		return 0
	}
	return now.Sub(f.Finished)
}

// freshness reads the newest sync runs of the warehouse at db and judges them for asOf (a
// calendar date in loc) at now, the time the message is made. Every account's newest run must
// have succeeded, and:
//   - for an as-of date over at now (yesterday, the end of last month): finished after the
//     as-of date ended, so the figures hold all of it;
//   - for one not over yet (today): finished on that date and at most maxAge before now: the
//     figures as of the newest sync of the day, which no sync can make complete before
//     midnight.
//
// failed is what the caller knows of a later sync that failed and so was never published
// ("" = nothing).
func freshness(ctx context.Context, db, account string, asOf, now time.Time, maxAge time.Duration, loc *time.Location,
	locale, failed string) (Freshness, error) {
	h, err := openWarehouse(ctx, db)
	if err != nil {
		return Freshness{}, fmt.Errorf("warehouse: %w", err)
	}
	defer h.Close()
	rows, err := h.QueryContext(ctx, freshStmts.Get("newest_runs"), account, account)
	if err != nil {
		return Freshness{}, fmt.Errorf("warehouse sync runs: %w", err)
	}
	defer rows.Close()
	if maxAge <= 0 {
		maxAge = DefaultMaxAge
	}
	t := texts(locale)
	start := time.Date(asOf.Year(), asOf.Month(), asOf.Day(), 0, 0, 0, 0, loc)
	end := start.AddDate(0, 0, 1)
	open := now.Before(end) // the as-of date is not over: today's figures
	var f Freshness
	var reasons []string
	n := 0
	for rows.Next() {
		var acct, status string
		var id int64
		var fin sql.NullTime
		if err := rows.Scan(&acct, &id, &status, &fin); err != nil {
			return Freshness{}, err
		}
		n++
		// The oldest account's run is the one that bounds how fresh the figures are.
		if n == 1 || fin.Valid && (f.Finished.IsZero() || fin.Time.Before(f.Finished)) {
			f.Run, f.Status, f.Finished = id, status, fin.Time
		}
		switch {
		case status != "succeeded":
			reasons = append(reasons, fmt.Sprintf(t["stale_status"], acct, id, codeWord(status, locale)))
		case open && (!fin.Valid || fin.Time.Before(start) || now.Sub(fin.Time) > maxAge):
			since := now.Add(-maxAge)
			if since.Before(start) {
				since = start
			}
			reasons = append(reasons, fmt.Sprintf(t["stale_today"], acct, report.DateTime(since, locale, loc), age(maxAge, locale)))
		case !open && (!fin.Valid || fin.Time.Before(end)):
			reasons = append(reasons, fmt.Sprintf(t["stale_before"], acct, report.DateTime(end, locale, loc)))
		}
	}
	if err := rows.Err(); err != nil {
		return Freshness{}, err
	}
	if n == 0 {
		reasons = append(reasons, t["stale_none"])
	}
	if failed != "" {
		reasons = append([]string{failed}, reasons...)
	}
	f.Stale = strings.Join(reasons, "; ")
	return f, nil
}

// codeWord is a sync status in the locale.
func codeWord(status, locale string) string {
	words := map[string][2]string{"succeeded": {"berhasil", "succeeded"}, "partial": {"parsial", "partial"},
		"failed": {"gagal", "failed"}, "running": {"berjalan", "running"}}
	w, ok := words[status]
	if !ok {
		return status
	}
	if locale == "en" {
		return w[1]
	}
	return w[0]
}

// lastSuccess is when every account of the warehouse at db last synced successfully (zero:
// never).
func lastSuccess(ctx context.Context, db string) (time.Time, error) {
	h, err := openWarehouse(ctx, db)
	if err != nil {
		return time.Time{}, fmt.Errorf("warehouse: %w", err)
	}
	defer h.Close()
	var t sql.NullTime
	if err := h.QueryRowContext(ctx, freshStmts.Get("last_success")).Scan(&t); err != nil {
		return time.Time{}, fmt.Errorf("warehouse sync runs: %w", err)
	}
	return t.Time, nil
}

// openWarehouse opens the published warehouse read-only and confined: deliveries read its sync
// runs and reach no file nor setting through it.
func openWarehouse(ctx context.Context, db string) (*sql.DB, error) {
	h, err := warehouse.OpenReadOnly(ctx, db)
	if err != nil {
		return nil, err
	}
	if err := duckfile.Confine(ctx, h, duckfile.Confinement{}); err != nil {
		h.Close()
		return nil, err
	}
	return h, nil
}

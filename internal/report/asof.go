package report

import (
	"context"
	"database/sql"
	_ "embed"
	"fmt"
	"time"
)

//go:embed asof.sql
var asOfSQL string

// asOfWarnings says when the as-of date asks what the warehouse cannot answer: a day after
// today, or one that ends before billsync's first sync of an account (the change history
// starts there). The reports still run; the warnings go to the log and the summary sheet.
func asOfWarnings(ctx context.Context, db *sql.DB, asOf string, loc *time.Location, tz, only string) ([]asOfWarning, error) {
	var out []asOfWarning
	day, err := time.ParseInLocation(time.DateOnly, asOf, loc)
	if err != nil {
		return nil, err
	}
	now := time.Now().In(loc)
	if today := now.Format(time.DateOnly); asOf > today {
		out = append(out, asOfWarning{after: true, asOf: day, today: now, tz: tz})
	}
	cutoff := day.AddDate(0, 0, 1)
	rows, err := db.QueryContext(ctx, asOfSQL)
	if err != nil {
		return nil, fmt.Errorf("sync history: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var account string
		var from time.Time
		if err := rows.Scan(&account, &from); err != nil {
			return nil, fmt.Errorf("sync history: %w", err)
		}
		if only != "" && account != only {
			continue
		}
		if cutoff.Before(from) || cutoff.Equal(from) {
			out = append(out, asOfWarning{asOf: day, account: account, from: from.In(loc)})
		}
	}
	return out, rows.Err()
}

// asOfWarning is one warning of asOfWarnings: in English with ISO dates for
// the log, in the report's locale for the summary sheet.
type asOfWarning struct {
	after       bool // the as-of date is after today; else it ends before the account's history
	asOf, today time.Time
	from        time.Time // start of the account's history
	tz, account string
}

// text is the warning in l, or in English with ISO dates for the log when l is nil.
func (a asOfWarning) text(l *lang) string {
	date := func(t time.Time) string { return t.Format(time.DateOnly) }
	dateTime := func(t time.Time) string { return t.Format("2006-01-02 15:04 MST") }
	words := langs["en"]
	if l != nil {
		date, words = l.date, l
		dateTime = func(t time.Time) string { return l.dateTime(t, t.Location()) }
	}
	if a.after {
		return fmt.Sprintf(words.w("asof_after"), date(a.asOf), date(a.today), a.tz)
	}
	return fmt.Sprintf(words.w("asof_before"), date(a.asOf), a.account, dateTime(a.from))
}

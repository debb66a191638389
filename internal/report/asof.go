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
func asOfWarnings(ctx context.Context, db *sql.DB, s *settings) ([]string, error) {
	var out []string
	today := time.Now().In(s.loc).Format(time.DateOnly)
	if s.asOf > today {
		out = append(out, fmt.Sprintf("as of %s is after today (%s in %s): the figures are what billsync knew at its last sync, not that day's",
			s.asOf, today, s.TZ))
	}
	day, err := time.ParseInLocation(time.DateOnly, s.asOf, s.loc)
	if err != nil {
		return nil, err
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
		if s.Account != "" && account != s.Account {
			continue
		}
		if cutoff.Before(from) || cutoff.Equal(from) {
			out = append(out, fmt.Sprintf("as of %s ends before billsync's first sync of account %s (%s): the change history starts there, so that day cannot be answered; records already gone by then are missing and the rest are shown as first seen",
				s.asOf, account, from.In(s.loc).Format("2006-01-02 15:04 MST")))
		}
	}
	return out, rows.Err()
}

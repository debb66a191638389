package jobs

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"

	"github.com/billsync/billsync/internal/duckfile"
)

// CreditSend is a customer billsync sent credit to: its credit history has moved (or may have)
// in a way the warehouse cannot see until it reads that history again.
type CreditSend struct {
	Account    string
	CustomerID string
	At         time.Time // the latest time the journal recorded for the send or its outcome
}

// CreditSends lists, per account and customer, the latest add-credit send recorded in the journal
// at path, whatever its outcome. A journal that does not exist (no job ever ran) has none. It opens
// the journal read-only, so it fails while a job holds the journal open.
func CreditSends(ctx context.Context, path string) ([]CreditSend, error) {
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	db, err := openDuckDB(path, true)
	if err != nil {
		return nil, fmt.Errorf("job journal %s: %w", path, err)
	}
	defer db.Close()
	if err := duckfile.Confine(ctx, db, duckfile.Confinement{}); err != nil {
		return nil, fmt.Errorf("job journal %s: %w", path, err)
	}
	rows, err := db.QueryContext(ctx, journalSQL.Get("credit_sends"), string(CreditTopup))
	if err != nil {
		return nil, fmt.Errorf("job journal %s: credit sends: %w", path, err)
	}
	defer rows.Close()
	var out []CreditSend
	for rows.Next() {
		var s CreditSend
		if err := rows.Scan(&s.Account, &s.CustomerID, &s.At); err != nil {
			return nil, fmt.Errorf("job journal %s: credit sends: %w", path, err)
		}
		s.At = s.At.UTC()
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("job journal %s: credit sends: %w", path, err)
	}
	return out, nil
}

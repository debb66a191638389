package report

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/billsync/billsync/internal/jobs/journalfile"
	"github.com/billsync/billsync/internal/warehouse"
	"github.com/billsync/billsync/queries"
)

// prepareConn clears variables a previous user of the pooled connection set,
// makes credit_balance_reports visible on conn (the journal's table, or an
// empty stand-in) and the current macros.
func prepareConn(ctx context.Context, conn *sql.Conn, journal bool) error {
	vars, err := variables(ctx, conn)
	if err != nil {
		return err
	}
	for name := range vars {
		if !nameRe.MatchString(name) {
			return fmt.Errorf("unexpected variable name %q on the connection", name)
		}
		if _, err := conn.ExecContext(ctx, "RESET VARIABLE "+name); err != nil {
			return fmt.Errorf("reset variable %s: %w", name, err)
		}
	}
	if err := journalfile.Views(ctx, conn, journal); err != nil {
		return err
	}
	// The query files call the report macros as this billsync defines them, also on a file an
	// older billsync published; an analyst's query may call the warehouse's own.
	if err := warehouse.UseCurrentMacros(ctx, conn); err != nil {
		return err
	}
	return queries.UseCurrent(ctx, conn)
}

// attachJournal attaches the journal read-only when its file exists and has
// the tables queries read. It returns what the summary sheet says about the
// journal and whether the journal can be read.
func attachJournal(ctx context.Context, db *sql.DB, path string) (journalNote, bool) {
	if path == "" {
		return journalNote{state: "jnl_not_configured"}, false
	}
	switch err := journalfile.Attach(ctx, db, path); {
	case err == nil:
		return journalNote{path: path}, true
	case errors.Is(err, fs.ErrNotExist):
		return journalNote{path: path, state: "jnl_missing"}, false
	case errors.Is(err, journalfile.ErrNoTables):
		return journalNote{path: path, state: "jnl_no_tables"}, false
	default:
		return journalNote{path: path, state: "jnl_unreadable", detail: oneLine(err)}, false
	}
}

func oneLine(err error) string {
	return strings.Join(strings.Fields(err.Error()), " ")
}

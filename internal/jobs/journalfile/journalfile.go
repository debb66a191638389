// Package journalfile is the job journal as readers see it: where the file lives and how a
// reader attaches it and sees the tables it reads. It imports nothing of internal/jobs, so a
// reader (internal/report) gets the journal without the API client jobs writes with.
package journalfile

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/billsync/billsync/internal/duckfile"
	"github.com/billsync/billsync/internal/sqlfile"
)

// Name is the journal's file name beside the warehouse.
const Name = "billsync-jobs.duckdb"

// DefaultPath is the journal stored beside the warehouse file.
func DefaultPath(warehousePath string) string {
	return filepath.Join(filepath.Dir(warehousePath), Name)
}

//go:embed attach.sql
var sqlFS embed.FS

var stmts = sqlfile.MustLoad(sqlFS, "attach.sql", "attach", "has_tables", "views", "empty_views", "has_plans", "names_view", "empty_names")

// ErrNoTables is the error Attach returns for a journal without the tables Views shows:
// one from an older billsync.
var ErrNoTables = errors.New("no credit_balance_reports table")

// Attach attaches the journal file at path read-only to db as the catalog "journal". A missing
// file is an error matching fs.ErrNotExist (no job has run); errors do not repeat the path; a journal without the tables Views
// shows one matching ErrNoTables. Readers take no lock: while a job writes the journal, DuckDB
// refuses the attach and the reader says so instead of waiting.
func Attach(ctx context.Context, db *sql.DB, path string) error {
	if _, err := os.Stat(path); err != nil {
		return err
	}
	// ATTACH takes no parameters; the path goes in as a string literal.
	q := strings.Replace(stmts.Get("attach"), "'__PATH__'", duckfile.QuoteLiteral(path), 1)
	if _, err := db.ExecContext(ctx, q); err != nil {
		return fmt.Errorf("attach read-only: %w", err)
	}
	var ok bool
	if err := db.QueryRowContext(ctx, stmts.Get("has_tables")).Scan(&ok); err != nil {
		return fmt.Errorf("journal tables: %w", err)
	}
	if !ok {
		return ErrNoTables
	}
	return nil
}

// Views makes the journal's tables readers use (credit_balance_reports, and the names its plans
// saw as credit_report_names) visible on conn under
// their own names as temp objects: views of the attached journal, or, when attached is false,
// empty tables with the same columns, so a query reads them either way.
func Views(ctx context.Context, conn *sql.Conn, attached bool) error {
	name := "empty_views"
	if attached {
		name = "views"
	}
	if _, err := conn.ExecContext(ctx, stmts.Get(name)); err != nil {
		return fmt.Errorf("journal view: %w", err)
	}
	// The plans' names (credit_report_names): a journal written by hand or by an older billsync
	// may hold reported balances without plans; then no names, as without a journal.
	names := "empty_names"
	if attached {
		var plans bool
		if err := conn.QueryRowContext(ctx, stmts.Get("has_plans")).Scan(&plans); err != nil {
			return fmt.Errorf("journal plans: %w", err)
		}
		if plans {
			names = "names_view"
		}
	}
	if _, err := conn.ExecContext(ctx, stmts.Get(names)); err != nil {
		return fmt.Errorf("journal names view: %w", err)
	}
	return nil
}

// StandInSQL creates, as temp tables, the empty stand-ins Views makes when no journal is
// attached: for a writer that must bind SQL reading the journal's tables (the warehouse's
// macros) without a journal at hand.
func StandInSQL() string { return stmts.Get("empty_views") + "\n" + stmts.Get("empty_names") }

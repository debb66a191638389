package warehouse

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"fmt"
	"regexp"

	"github.com/billsync/billsync/internal/duckfile"
	"github.com/billsync/billsync/internal/entity"
	"github.com/billsync/billsync/internal/sqlfile"
)

// migrate applies the embedded migrations not yet recorded in schema_migrations, creates the
// tables of entities no migration creates from their declarations, then the macros and views
// of macros.sql, every time: a file opened by a newer billsync gets its definitions even when
// no migration is new.
func migrate(ctx context.Context, db *sql.DB) error {
	if err := sqlfile.Migrate(ctx, db, sqlFS, "migrations"); err != nil {
		return err
	}
	ddl := tableDDL(entity.All())
	for _, t := range declaredOnlyTables() {
		if _, err := db.ExecContext(ctx, ddl[t]); err != nil {
			return fmt.Errorf("create table %s from its declaration: %w", t, err)
		}
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, macrosSQL); err != nil {
		return fmt.Errorf("macros.sql: %w", err)
	}
	if _, err := tx.ExecContext(ctx, "CREATE OR REPLACE MACRO "+macrosVersionMacro+"() AS "+duckfile.QuoteLiteral(MacrosVersion)); err != nil {
		return fmt.Errorf("macros.sql version: %w", err)
	}
	return tx.Commit()
}

// macrosSQL is macros.sql: every statement creates or replaces a macro or a view.
var macrosSQL = mustRead("macros.sql")

// MacrosVersion identifies macros.sql: a warehouse whose billsync_macros_version() returns it
// has exactly these definitions.
var MacrosVersion = func() string {
	sum := sha256.Sum256([]byte(macrosSQL))
	return hex.EncodeToString(sum[:8])
}()

const macrosVersionMacro = "billsync_macros_version"

// UseCurrentMacros makes the macros and views of macros.sql, as this billsync defines them,
// the ones queries on conn see. A warehouse written by this billsync has them; on one
// written by another version (read-only: a reader cannot change it) they are created as
// temporary objects of conn, which shadow the file's own.
func UseCurrentMacros(ctx context.Context, conn *sql.Conn) error {
	var v string
	err := conn.QueryRowContext(ctx, "SELECT "+macrosVersionMacro+"()").Scan(&v)
	if err == nil && v == MacrosVersion {
		return nil
	}
	if _, err := conn.ExecContext(ctx, temporaryMacros); err != nil {
		return fmt.Errorf("the warehouse's macros are of another billsync version; defining this version's failed: %w", err)
	}
	return nil
}

var createRe = regexp.MustCompile(`(?m)^CREATE OR REPLACE (MACRO|VIEW) `)

// temporaryMacros is macros.sql with every object created TEMP.
var temporaryMacros = createRe.ReplaceAllString(macrosSQL, "CREATE OR REPLACE TEMP $1 ")

func mustRead(name string) string {
	b, err := sqlFS.ReadFile(name)
	if err != nil {
		panic(err)
	}
	return string(b)
}

package warehouse

import (
	"context"
	"database/sql"

	"github.com/billsync/billsync/internal/sqlfile"
)

// migrate applies the embedded migrations not yet recorded in schema_migrations.
func migrate(ctx context.Context, db *sql.DB) error {
	return sqlfile.Migrate(ctx, db, sqlFS, "migrations")
}

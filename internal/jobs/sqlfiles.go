package jobs

import (
	"embed"

	"github.com/billsync/billsync/internal/sqlfile"
)

//go:embed migrations/*.sql queries/*.sql
var sqlFS embed.FS

var (
	journalSQL   = sqlfile.MustSections(sqlFS, "queries/journal.sql")
	warehouseSQL = sqlfile.MustSections(sqlFS, "queries/warehouse.sql")
)

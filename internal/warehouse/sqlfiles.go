package warehouse

import (
	"embed"

	"github.com/billsync/billsync/internal/sqlfile"
)

//go:embed migrations/*.sql merge/*.sql queries/*.sql
var sqlFS embed.FS

// mustSections reads the named statements of one of the package's own embedded files.
func mustSections(file string) map[string]string { return sqlfile.MustSections(sqlFS, file) }

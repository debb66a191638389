package warehouse

import "embed"

//go:embed migrations/*.sql merge/*.sql queries/*.sql macros.sql
var sqlFS embed.FS

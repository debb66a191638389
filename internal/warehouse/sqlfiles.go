package warehouse

import "embed"

//go:embed migrations/*.sql merge/*.sql queries/*.sql
var sqlFS embed.FS

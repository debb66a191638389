// Package queries holds the report SQL: one DuckDB query per file, each runnable by hand in any
// DuckDB client against the warehouse (see docs/reports.md), embedded here so the report command
// ships them; and the report macros and views those files call (macros/, one file each), which
// the sync run installs in the warehouse it publishes (Install).
package queries

import "embed"

// FS holds every *.sql query file of this directory (not the macros).
//
//go:embed *.sql
var FS embed.FS

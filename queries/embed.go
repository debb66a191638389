// Package queries holds the report SQL: one DuckDB query per file, each
// runnable by hand in any DuckDB client against the warehouse (see
// docs/reports.md), embedded here so the report command ships them.
package queries

import "embed"

// FS holds every *.sql file of this directory.
//
//go:embed *.sql
var FS embed.FS

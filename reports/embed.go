// Package reports holds the report definitions: one YAML file per report
// naming the queries that fill its sheets, with titles, formats, totals and
// chart. Adding a report is a query file plus a definition here.
package reports

import "embed"

// FS holds every *.yaml file of this directory.
//
//go:embed *.yaml
var FS embed.FS

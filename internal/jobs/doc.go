// Package jobs runs audited batch writes against the billing service: it plans a spreadsheet of changes
// against the published warehouse, stores the plan in the job journal, and sends each action exactly once,
// journaling every state change and reconciling unknown outcomes by reading before any retry.
//
// Each kind of job is one file, kind_*.go: its typed row (Args: the warehouse records it names, its duplicate
// and repeat keys) and jobKind over it (kind.go: its spec, reading a row, checking it against the warehouse,
// its one request), registered in registry.go. The engine holds every kind through typed[A], which reads the
// journal's text maps into the kind's row; the journal, repeats, approvals and reconciliation's settle
// interval and clock checks are shared by every kind and name none. The files are layered: no file refers to
// one above it (TestTheJobsWing in bench/housemap).
//
// The journal is a DuckDB file of its own beside the warehouse (DefaultJournalPath), never the warehouse
// itself: a sync replaces the published warehouse by renaming a new build over it, and analysts hold that
// file open read-only.
package jobs

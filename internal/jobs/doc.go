// Package jobs runs audited batch writes against the billing service: it plans a spreadsheet of changes
// against the published warehouse, stores the plan in the job journal, and sends each action exactly once,
// journaling every state change and reconciling unknown outcomes by reading before any retry.
//
// Each kind of job is one file, kind_*.go, implementing jobKind (kinds.go): its columns and row checks, the
// warehouse records it reads, its duplicate and repeat keys, its one request, and how it proves the outcome of
// a lost answer. The journal, repeats, approvals and reconciliation's settle interval and clock checks are
// shared by every kind and name none.
//
// The journal is a DuckDB file of its own beside the warehouse (DefaultJournalPath), never the warehouse
// itself: a sync replaces the published warehouse by renaming a new build over it, and analysts hold that
// file open read-only.
package jobs

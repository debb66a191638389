package lake

import (
	"github.com/billsync/billsync/internal/entity"
	"github.com/billsync/billsync/internal/warehouse"
)

// The reports read more than the entity tables: the change history (a past as-of date is
// answered from it), the sync runs and streams (sync health, the summary's sources), the
// credit reads and the data-quality tables. The lake holds them too, per account like the
// data, so a report over a snapshot equals the report over the account's file (docs/lake.md,
// "Reading it"). Their columns are the migrations' (internal/warehouse/migrations), account
// first; TestHistoryColumnsAreTheWarehouses fails when a migration changes them.

// Types the history tables have beyond the entity declarations' (warehouse.Column's Type is
// the DuckDB type's name).
const (
	typeInt32 entity.Type = "INTEGER"
	typeBool  entity.Type = "BOOLEAN"
)

// historyTables are the warehouse's sync-state tables the reports read, with their columns.
var historyTables = []struct {
	name string
	cols []warehouse.Column
}{
	{"record_changes", cols("account", entity.Text, "entity", entity.Text, "record_id", entity.Text, "field", entity.Text,
		"old_value", entity.Text, "new_value", entity.Text, "observed_at", entity.Time, "run_id", entity.Int)},
	{"sync_runs", cols("account", entity.Text, "id", entity.Int, "status", entity.Text, "started_at", entity.Time,
		"finished_at", entity.Time, "records", entity.Int, "requests", entity.Int, "retries", entity.Int, "error", entity.Text,
		"clock_source", entity.Text, "clock_offset_ms", entity.Int, "failure", entity.Text)},
	// sync_streams has no account column in the warehouse: its run's (streamsSource).
	{"sync_streams", cols("account", entity.Text, "run_id", entity.Int, "stream", entity.Text, "entity", entity.Text,
		"started_at", entity.Time, "finished_at", entity.Time, "pages", entity.Int, "records", entity.Int,
		"requests", entity.Int, "retries", entity.Int, "complete", typeBool, "error", entity.Text)},
	{"credit_fetch_state", cols("account", entity.Text, "customer_id", entity.Text, "last_fetched_at", entity.Time,
		"run_id", entity.Int, "reason", entity.Text)},
	{"data_quality_conflicts", cols("account", entity.Text, "entity", entity.Text, "stream", entity.Text, "id", entity.Text,
		"run_id", entity.Int, "observed_at", entity.Time, "path", entity.Text, "first_page", typeInt32, "first_item", typeInt32,
		"first_raw", entity.JSON, "second_page", typeInt32, "second_item", typeInt32, "second_raw", entity.JSON)},
	{"data_quality_flags", cols("account", entity.Text, "run_id", entity.Int, "observed_at", entity.Time, "entity", entity.Text,
		"record_id", entity.Text, "flag", entity.Text, "field", entity.Text, "detail", entity.Text, "path", entity.Text,
		"page", typeInt32, "item", typeInt32)},
}

func cols(pairs ...any) []warehouse.Column {
	var out []warehouse.Column
	for i := 0; i < len(pairs); i += 2 {
		out = append(out, warehouse.Column{Name: pairs[i].(string), Type: pairs[i+1].(entity.Type)})
	}
	return out
}

// tableColumns are the columns of every table the lake holds: the entity tables' from their
// declarations, the history tables' from historyTables.
func tableColumns() map[string][]warehouse.Column {
	out := warehouse.DataColumns()
	for _, h := range historyTables {
		out[h.name] = h.cols
	}
	return out
}

// tableNames are the lake's tables: the warehouse's data tables, then the history tables.
func tableNames() []string {
	names := warehouse.DataTables()
	for _, h := range historyTables {
		names = append(names, h.name)
	}
	return names
}

// streamsSource is sync_streams with its run's account, as the lake's table holds it.
const streamsSource = `(SELECT r.account, s.* FROM sync_streams s JOIN sync_runs r ON r.id = s.run_id)`

// sourceOf is what a commit reads a lake table's rows from in the published file.
func sourceOf(name string) string {
	if name == "sync_streams" {
		return streamsSource
	}
	return quote(name)
}

// SourceSQL is the FROM clause reading the lake table name's rows from a warehouse file, for
// readers comparing the two.
func SourceSQL(name string) string { return sourceOf(name) }

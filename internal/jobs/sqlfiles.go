package jobs

import (
	"context"
	"database/sql"
	"embed"
	"encoding/json"

	"github.com/billsync/billsync/internal/sqlfile"
)

//go:embed migrations/*.sql queries/*.sql
var sqlFS embed.FS

// The statements each file must hold, no more: a section nobody runs, or a name with no section, fails the
// load (and so every test of the package).
var (
	journalSQL = sqlfile.MustLoad(sqlFS, "queries/journal.sql", "insert_plan", "insert_plan_action", "plan_by_id",
		"plan_id_by_hash", "plan_actions", "approve_plan", "list_plans", "approved_open_plans", "insert_run", "finish_run",
		"insert_transition", "insert_balance", "last_send", "claimed_ids", "other_topups_since", "credit_sends",
		"insert_approval", "plan_approvals", "plan_runs", "plan_resolutions", "repeat_candidates")
	// The warehouse look-ups are per entity, shared by the kinds (world.go), not per kind.
	warehouseSQL = sqlfile.MustLoad(sqlFS, "queries/warehouse.sql", "customers_by_email", "customers_by_id",
		"products_by_id", "balances", "payment_requests_by_id", "payment_links_by_id", "last_sync", "credit_products",
		"topup_traces", "invoice_traces", "email_traces", "payment_edit_traces")
)

func jsonList(ids []string) string {
	if ids == nil {
		ids = []string{}
	}
	b, _ := json.Marshal(ids)
	return string(b)
}

func queryEach(ctx context.Context, db *sql.DB, q string, scan func(*sql.Rows) error, args ...any) error {
	rows, err := db.QueryContext(ctx, q, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := scan(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}

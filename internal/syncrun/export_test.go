package syncrun

import (
	"context"
	"database/sql"
	"time"

	"github.com/billsync/billsync/internal/fetch"
	"github.com/billsync/billsync/internal/warehouse"
)

// SetListBatch makes lists merge every n records, so small tests exercise batched merges.
func SetListBatch(n int) (restore func()) {
	old := testBuildOptions
	testBuildOptions = func(o *warehouse.BuildOptions) {
		if old != nil {
			old(o)
		}
		o.ListBatch = n
	}
	return func() { testBuildOptions = old }
}

// SetFanoutBatch makes fan-out batches close after n requests or after age (0: after the first
// request), so small tests exercise several queued fan-out merges.
func SetFanoutBatch(n int, age time.Duration) (restore func()) {
	old := testBuildOptions
	testBuildOptions = func(o *warehouse.BuildOptions) {
		if old != nil {
			old(o)
		}
		o.FanoutBatchRequests, o.FanoutBatchAge = n, max(age, time.Nanosecond)
	}
	return func() { testBuildOptions = old }
}

// FailReportInstall makes installing the report macros fail with err.
func FailReportInstall(err error) (restore func()) {
	old := installReportSQL
	installReportSQL = func(context.Context, *sql.DB) error { return err }
	return func() { installReportSQL = old }
}

// MirroredTables are the tables a full sync mirrors record for record from the simulator
// collection of the same name: every list, the credit ledger and the webhook history.
func MirroredTables() []string {
	var out []string
	for _, s := range fetch.Streams() {
		if !s.Detail {
			out = append(out, s.Name)
		}
	}
	return out
}

package syncrun_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/billsync/billsync/internal/syncrun"
	"github.com/billsync/billsync/queries"
)

// TestReportMacrosPublished: the published warehouse carries this billsync's report macros, which
// the report queries and analysts' clients call. When putting them in fails, nothing is published
// (the report queries would fail on the file), and the next run publishes with them.
func TestReportMacrosPublished(t *testing.T) {
	e := newEnv(t, 0.03)
	restore := syncrun.FailReportInstall(errors.New("install refused"))
	_, err := syncrun.Run(context.Background(), e.path, []syncrun.Account{{Name: "test", Client: e.client()}}, e.opts())
	restore()
	if err == nil || !strings.Contains(err.Error(), "install refused") {
		t.Fatalf("run error %v, want the install's", err)
	}
	if _, err := os.Stat(e.path); !os.IsNotExist(err) {
		t.Fatalf("a run whose report macros failed published a warehouse: %v", err)
	}
	e.sync(e.opts())
	if v := e.query("SELECT billsync_report_macros_version()")[0][0]; v != queries.Version {
		t.Errorf("published report macros version %v, want %s", v, queries.Version)
	}
	if n := e.count("SELECT count(*) FROM open_items(DATE '2100-01-01')"); n == 0 {
		t.Error("open_items() finds nothing in the published warehouse")
	}
	e.assertMirrors()
}

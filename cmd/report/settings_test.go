package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/billsync/billsync/internal/cli/clitest"
	conf "github.com/billsync/billsync/internal/config"
)

func TestMain(m *testing.M) {
	// Child mode: the test binary runs as the real command.
	if os.Getenv("REPORT_TEST_MAIN") == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// runChild runs the built command with exactly env (clitest.RunChild).
func runChild(t *testing.T, env map[string]string, args ...string) (int, string) {
	t.Helper()
	return clitest.RunChild(t, "REPORT_TEST_MAIN", env, args...)
}

// TestEverySettingRefused walks every setting report and report deliver read (by reflection: a
// new setting is covered without being listed) with each value its type, its check or its zero
// rule refuses: exit 2, the variable named, one line pointing to -h.
func TestEverySettingRefused(t *testing.T) {
	dir := t.TempDir()
	schedule := filepath.Join(dir, "deliveries.yaml")
	if err := os.WriteFile(schedule, []byte("deliveries:\n  - name: daily\n    reports: [aging]\n    schedule: \"0 7 * * *\"\n"+
		"    as_of: yesterday\n    to: [finance@example.com]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"BILLSYNC_DB": filepath.Join(dir, "w.duckdb"), "BILLSYNC_REPORTS_OUT": filepath.Join(dir, "out"),
		"BILLSYNC_DELIVERIES": schedule, "BILLSYNC_OUTBOX": filepath.Join(dir, "outbox")}
	// the controls: valid settings list the reports, and a delivery gets as far as the missing warehouse
	if code, stderr := runChild(t, env, "-list"); code != 0 {
		t.Fatalf("valid settings: exit %d; stderr:\n%s", code, stderr)
	}
	if code, stderr := runChild(t, env, "deliver", "daily", "-dry-run"); code != 1 {
		t.Fatalf("valid settings, deliver: exit %d, want 1 (no warehouse); stderr:\n%s", code, stderr)
	}
	for _, c := range []struct {
		opts []conf.Option
		args []string
	}{
		{conf.Options(&config{}), []string{"-list"}},
		{conf.Options(&deliverConfig{}), []string{"deliver", "daily", "-dry-run"}},
		{conf.Options(&deliverConfig{}), []string{"deliveries"}},
	} {
		walked := 0
		for _, o := range c.opts {
			for _, v := range o.Refused() {
				walked++
				t.Run(strings.Join(c.args, "_")+"/"+o.Env+"="+v, func(t *testing.T) {
					t.Parallel()
					e := map[string]string{}
					for k, v := range env {
						e[k] = v
					}
					e[o.Env] = v
					code, stderr := runChild(t, e, c.args...)
					help := "report"
					if c.args[0] == "deliver" || c.args[0] == "deliveries" {
						help = "report " + c.args[0]
					}
					if code != 2 || !strings.Contains(stderr, o.Env) || !strings.Contains(stderr, "run '"+help+" -h'") {
						t.Errorf("exit %d, want 2 naming %s and pointing to %s -h; stderr:\n%s", code, o.Env, help, stderr)
					}
				})
			}
		}
		if walked < 4 {
			t.Errorf("%v: only %d invalid values walked: is a group missing?", c.args, walked)
		}
	}
}

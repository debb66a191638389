package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"net/http/httptest"

	"github.com/billsync/billsync/internal/sandbox"
	"github.com/sethvargo/go-envconfig"
)

// TestJobEditedSheetAsAPersonSeesIt runs the command as a finance user does: a top-up is applied, a row is
// added to the sheet and it is planned again (the earlier rows are shown held, with the earlier plan, row and
// time in BILLSYNC_TZ, and only the new row is sent); the sheet sorted the other way has nothing to send; a
// -max run says what it did and what is still planned; the list counts by state.
func TestJobEditedSheetAsAPersonSeesIt(t *testing.T) {
	sb, err := sandbox.New(sandbox.Options{Seed: 3, Scale: 0.02, Key: secret, Now: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(sb)
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	vars := map[string]string{"BILLSYNC_BASE_URL": srv.URL, "BILLSYNC_API_KEY": secret, "BILLSYNC_DB": filepath.Join(dir, "billsync.duckdb"),
		"BILLSYNC_RATE_PER_MIN": "0", "BILLSYNC_ACCOUNT": "main", "BILLSYNC_TZ": "Asia/Jakarta"}
	var logs bytes.Buffer
	if err := run(context.Background(), []string{"-once"}, envconfig.MapLookuper(vars), &logs, &logs); err != nil {
		t.Fatalf("sync: %v\n%s", err, logs.String())
	}
	var custs []string
	for _, raw := range sb.Dump("customers")[:6] {
		var c struct{ ID string }
		json.Unmarshal(raw, &c)
		custs = append(custs, c.ID)
	}
	prod := creditProduct(t, sb)
	write := func(name string, ids []string, amount string) string {
		lines := []string{"customerId,productId,amount"}
		for _, id := range ids {
			lines = append(lines, id+","+prod+","+amount)
		}
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(strings.Join(lines, "\n")+"\n"), 0o644)
		return p
	}
	adds := func() int {
		n := 0
		for _, r := range sb.Requests() {
			if strings.HasSuffix(r.Path, "/add-credit") {
				n++
			}
		}
		return n
	}
	planID := regexp.MustCompile(`^plan ([0-9a-f]{12}):`)

	out, errs, code := syncer(t, vars, "job", "apply", "-kind", "credit-topup", "-in", write("topup.csv", custs[:2], "1000"))
	first := planID.FindStringSubmatch(out)
	if code != 0 || first == nil || adds() != 2 {
		t.Fatalf("first apply: exit %d, %d sends\n%s%s", code, adds(), out, errs)
	}

	// The person adds a row and plans the same sheet again.
	sheet := write("topup.csv", custs[:3], "1000")
	out, errs, code = syncer(t, vars, "job", "plan", "-kind", "credit-topup", "-in", sheet)
	t.Logf("the edited sheet planned:\n%s", out)
	if code != 0 || !strings.Contains(out, "HELD, not sent") || !strings.Contains(out, "repeats plan "+first[1]+" row 1 (line 2 of ") ||
		!strings.Contains(out, " WIB: succeeded") || !strings.Contains(out, "1 still planned, 2 held") ||
		!strings.Contains(out, "dry run: nothing was sent") {
		t.Fatalf("plan of the edited sheet: exit %d\n%s%s", code, out, errs)
	}
	second := planID.FindStringSubmatch(out)
	for range 3 {
		if out, errs, code = syncer(t, vars, "job", "apply", second[1]); code != 0 || adds() != 3 {
			t.Fatalf("apply of the edited sheet: exit %d, %d sends in all, want 3\n%s%s", code, adds(), out, errs)
		}
	}

	// Sorted the other way: every row was sent, nothing to send, and how to send anyway.
	rev := []string{custs[2], custs[1], custs[0]}
	out, errs, code = syncer(t, vars, "job", "plan", "-kind", "credit-topup", "-in", write("sorted.csv", rev, "1000"))
	if code != 0 || !strings.Contains(out, "nothing to send: every row of plan") || !strings.Contains(out, "-again") {
		t.Errorf("plan of the sorted sheet: exit %d\n%s%s", code, out, errs)
	}
	if out, errs, code = syncer(t, vars, "job", "apply", "-kind", "credit-topup", "-in", write("sorted.csv", rev, "1000")); code != 0 ||
		adds() != 3 || !strings.Contains(out, "nothing to send") {
		t.Errorf("apply of the sorted sheet: exit %d, %d sends in all, want 3\n%s%s", code, adds(), out, errs)
	}

	// -max: what this run did, and what is still planned (not unresolved).
	out, errs, code = syncer(t, vars, "job", "apply", "-kind", "credit-topup", "-in", write("next.csv", custs[3:], "2000"), "-max", "2")
	t.Logf("a -max 2 run prints:\n%s", out)
	if code != 0 || !strings.Contains(out, "this run: 2 succeeded, 0 failed") ||
		!strings.Contains(out, "plan now: 2 succeeded, 0 failed, 1 still planned (not sent: reached -max 2)") ||
		strings.Contains(out, "unresolved") || adds() != 5 {
		t.Errorf("apply -max 2: exit %d, %d sends in all\n%s%s", code, adds(), out, errs)
	}

	out, _, code = syncer(t, vars, "job", "list")
	t.Logf("job list prints:\n%s", out)
	if code != 0 || !strings.Contains(out, "PLANNED  HELD  SENT  SUCCEEDED  FAILED  UNRESOLVED  SKIPPED") {
		t.Errorf("job list: exit %d\n%s", code, out)
	}

	if _, errs, code = syncer(t, vars, "job", "plan", "-kind", "credit-topup", "-in", sheet, "-repeat-window", "0s"); code != 2 ||
		!strings.Contains(errs, "-repeat-window") {
		t.Errorf("a zero window: exit %d, %s", code, errs)
	}
}

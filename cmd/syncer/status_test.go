package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/billsync/billsync/internal/sandbox"
	"github.com/sethvargo/go-envconfig"
)

// TestStatusAsAnOperatorUsesIt: syncer status from a new install to a failed night and a job row
// nobody settled, as the operator reads it and as a monitor reads its exit status and JSON.
func TestStatusAsAnOperatorUsesIt(t *testing.T) {
	sb, err := sandbox.New(sandbox.Options{Seed: 3, Scale: 0.02, Key: secret, Now: time.Now().UTC().Truncate(time.Second),
		CreditTimes: sandbox.CreditTimeNoZone})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(sb)
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	vars := map[string]string{"BILLSYNC_BASE_URL": srv.URL, "BILLSYNC_API_KEY": secret, "BILLSYNC_DB": filepath.Join(dir, "billsync.duckdb"),
		"BILLSYNC_RATE_PER_MIN": "0", "BILLSYNC_ACCOUNT": "main", "BILLSYNC_TZ": "Asia/Jakarta"}
	status := func(args ...string) (string, int) {
		t.Helper()
		out, errs, code := syncer(t, vars, append([]string{"status"}, args...)...)
		if strings.Contains(out+errs, secret) {
			t.Fatal("the API key appears in syncer status")
		}
		return out + errs, code
	}

	// A new install: nothing synced, said so, exit 4.
	out, code := status()
	if code != 4 || !strings.Contains(out, "no published warehouse at") || !strings.Contains(out, "no syncer has run") {
		t.Errorf("new install: exit %d\n%s", code, out)
	}

	// A good night: all is well, exit 0, every time in WIB.
	sync := func(env map[string]string) error {
		var logs bytes.Buffer
		err := run(context.Background(), []string{"-once"}, envconfig.MapLookuper(env), &logs, &logs)
		return err
	}
	if err := sync(vars); err != nil {
		t.Fatal(err)
	}
	out, code = status()
	t.Logf("after a good sync:\n%s", out)
	for _, want := range []string{"(times in Asia/Jakarta, WIB)", "main         published run 1 succeeded", "customers", "All is well"} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("after a sync: exit %d, no %q", code, want)
		}
	}
	if regexp.MustCompile(`\d\d:\d\d UTC`).MatchString(out) {
		t.Errorf("a time in UTC:\n%s", out)
	}

	// A failed night (the key was rotated): the published run stays, the attempt is the news.
	bad := map[string]string{}
	for k, v := range vars {
		bad[k] = v
	}
	bad["BILLSYNC_API_KEY"] = secret + "-rotated"
	if err := sync(bad); err == nil {
		t.Fatal("a wrong key synced")
	}
	out, code = status()
	t.Logf("after a failed sync:\n%s", out)
	for _, want := range []string{"published run 1 succeeded", "latest attempt failed", "account main: the latest sync failed", "refused the API key"} {
		if code != 3 || !strings.Contains(out, want) {
			t.Errorf("after a failed sync: exit %d, no %q", code, want)
		}
	}
	jsonOut, code := status("-json")
	var r struct {
		Needs    []string `json:"needs_a_person"`
		Accounts []struct {
			Name    string
			Attempt struct{ Status string } `json:"latest_attempt"`
		}
	}
	if err := json.Unmarshal([]byte(jsonOut[:strings.LastIndex(jsonOut, "}")+1]), &r); err != nil || code != 3 ||
		len(r.Needs) != 1 || len(r.Accounts) != 1 || r.Accounts[0].Attempt.Status != "failed" {
		t.Errorf("-json: exit %d, %v, %+v\n%s", code, err, r, jsonOut)
	}

	// The next night syncs: well again.
	if err := sync(vars); err != nil {
		t.Fatal(err)
	}
	if out, code = status(); code != 0 {
		t.Errorf("after the next good sync: exit %d\n%s", code, out)
	}

	// A top-up whose answer was lost, that the service's history cannot settle: a job row for a person.
	var cust struct{ ID string }
	json.Unmarshal(sb.Dump("customers")[0], &cust)
	in := filepath.Join(dir, "topup.csv")
	os.WriteFile(in, []byte("customerId,productId,amount\n"+cust.ID+","+creditProduct(t, sb)+",2500\n"), 0o644)
	sb.FailNext(sandbox.FaultApplyThen500, 1, "/credit/v1/credit/customer/add-credit")
	jout, jerr, jcode := syncer(t, vars, "job", "plan", "-kind", "credit-topup", "-in", in, "-apply")
	plan := regexp.MustCompile(`syncer job resolve ([0-9a-f]{12}) `).FindStringSubmatch(jout)
	if jcode != 1 || plan == nil {
		t.Fatalf("the unresolved top-up: exit %d\n%s%s", jcode, jout, jerr)
	}
	out, code = status()
	t.Logf("with an unresolved row:\n%s", out)
	for _, want := range []string{"plan " + plan[1] + " (credit-topup, main", "1 unresolved", "plan " + plan[1] + ": 1 rows unresolved (syncer job resolve)"} {
		if code != 3 || !strings.Contains(out, want) {
			t.Errorf("with an unresolved row: exit %d, no %q", code, want)
		}
	}
}

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/billsync/billsync/internal/sandbox"
	"github.com/sethvargo/go-envconfig"
)

func TestIsProduction(t *testing.T) {
	for _, tc := range []struct {
		url, env string
		want     bool
	}{
		{"http://127.0.0.1:8080", "", false},
		{"http://localhost:8080", "", false},
		{"http://[::1]:8080", "", false},
		{"https://api.shop.example", "", true},
		{"https://api.shop.example", "sandbox", false},
		{"https://api.shop.example", "production", true},
		{"http://10.0.0.5", "", true},
	} {
		if got := isProduction(tc.url, tc.env); got != tc.want {
			t.Errorf("isProduction(%q, %q) = %v, want %v", tc.url, tc.env, got, tc.want)
		}
	}
}

// TestJobPlanThenApply runs "syncer job" as a finance user would: sync, plan a top-up (dry run, nothing
// sent), apply the plan id, apply again (nothing sent).
func TestJobPlanThenApply(t *testing.T) {
	sb, err := sandbox.New(sandbox.Options{Seed: 3, Scale: 0.02, Key: secret, Now: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(sb)
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	db := filepath.Join(dir, "billsync.duckdb")
	env := envconfig.MapLookuper(map[string]string{"BILLSYNC_BASE_URL": srv.URL, "BILLSYNC_API_KEY": secret,
		"BILLSYNC_DB": db, "BILLSYNC_RATE_PER_MIN": "0", "BILLSYNC_ACCOUNT": "main"})
	var out, errs bytes.Buffer
	if err := run(context.Background(), []string{"-once"}, env, &out, &errs); err != nil {
		t.Fatalf("sync: %v\n%s", err, errs.String())
	}

	var cust struct{ ID string }
	json.Unmarshal(sb.Dump("customers")[0], &cust)
	prod := creditProduct(t, sb)
	in := filepath.Join(dir, "topup.csv")
	os.WriteFile(in, []byte(fmt.Sprintf("customerId,productId,amount\n%s,%s,750\n", cust.ID, prod)), 0o644)
	posts := func() int {
		n := 0
		for _, r := range sb.Requests() {
			if r.Method == "POST" {
				n++
			}
		}
		return n
	}

	out.Reset()
	if err := jobCommand(context.Background(), []string{"plan", "-kind", "credit-topup", "-in", in}, env, &out); err != nil {
		t.Fatalf("plan: %v", err)
	}
	if posts() != 0 {
		t.Fatal("planning sent a write")
	}
	var id string
	fmt.Sscanf(out.String()[strings.Index(out.String(), "syncer job apply ")+len("syncer job apply "):], "%s", &id)
	if _, err := os.Stat(filepath.Join(dir, "jobs", "plan-"+id+".csv")); err != nil {
		t.Errorf("no plan file: %v\n%s", err, out.String())
	}

	out.Reset()
	if err := jobCommand(context.Background(), []string{"apply", id, "-max", "5"}, env, &out); err != nil {
		t.Fatalf("apply: %v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "completed") || posts() != 2 { // the write probe and the top-up
		t.Errorf("apply printed:\n%s\nwith %d POSTs", out.String(), posts())
	}
	result, err := os.ReadFile(filepath.Join(dir, "jobs", "result-"+id+"-run1.csv"))
	if err != nil || !strings.Contains(string(result), "berhasil") { // the state in the default locale, Indonesian
		t.Errorf("result file: %v\n%s", err, result)
	}
	if _, err := os.Stat(filepath.Join(dir, "jobs", "result-"+id+"-run1.xlsx")); err != nil {
		t.Errorf("no result workbook: %v", err)
	}
	out.Reset()
	if err := jobCommand(context.Background(), []string{"apply", id}, env, &out); err != nil || posts() != 2 {
		t.Errorf("second apply: %v, %d POSTs", err, posts())
	}
	// Nothing to do: said so, and no result file (a run0 or run2 would read as a run that happened).
	if !strings.Contains(out.String(), "nothing to do") || strings.Contains(out.String(), "result written") {
		t.Errorf("a no-op apply printed:\n%s", out.String())
	}
	if files, _ := filepath.Glob(filepath.Join(dir, "jobs", "result-*")); len(files) != 2 {
		t.Errorf("result files after a no-op apply: %v", files)
	}
	if strings.Contains(out.String(), secret) {
		t.Error("the API key appears in the output")
	}
}

// TestDaemonAppliesApprovedPlans: a plan approved by a person is sent by the next sync run when
// BILLSYNC_APPLY_APPROVED is on, and only once however many runs follow.
func TestDaemonAppliesApprovedPlans(t *testing.T) {
	sb, err := sandbox.New(sandbox.Options{Seed: 3, Scale: 0.02, Key: secret, Now: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(sb)
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	vars := map[string]string{"BILLSYNC_BASE_URL": srv.URL, "BILLSYNC_API_KEY": secret,
		"BILLSYNC_DB": filepath.Join(dir, "billsync.duckdb"), "BILLSYNC_RATE_PER_MIN": "0", "BILLSYNC_ACCOUNT": "main"}
	env := envconfig.MapLookuper(vars)
	var out, logs bytes.Buffer
	if err := run(context.Background(), []string{"-once"}, env, &out, &logs); err != nil {
		t.Fatalf("sync: %v\n%s", err, logs.String())
	}
	var cust struct{ ID string }
	json.Unmarshal(sb.Dump("customers")[1], &cust)
	prod := creditProduct(t, sb)
	in := filepath.Join(dir, "topup.csv")
	os.WriteFile(in, []byte(fmt.Sprintf("customerId,productId,amount\n%s,%s,1234\n", cust.ID, prod)), 0o644)
	if err := jobCommand(context.Background(), []string{"plan", "-kind", "credit-topup", "-in", in}, env, &out); err != nil {
		t.Fatalf("plan: %v", err)
	}
	var id string
	fmt.Sscanf(out.String()[strings.Index(out.String(), "syncer job apply ")+len("syncer job apply "):], "%s", &id)
	topups := func() int {
		n := 0
		for _, r := range sb.Requests() {
			if r.Method == "POST" && strings.HasSuffix(r.Path, "/add-credit") && r.Status == 200 {
				n++
			}
		}
		return n
	}

	vars["BILLSYNC_APPLY_APPROVED"] = "true"
	env = envconfig.MapLookuper(vars)
	if err := run(context.Background(), []string{"-once"}, env, &out, &logs); err != nil {
		t.Fatalf("sync with apply-approved: %v", err)
	}
	if topups() != 0 {
		t.Fatal("an unapproved plan was sent")
	}
	if err := jobCommand(context.Background(), []string{"approve", id}, env, &out); err == nil ||
		!strings.Contains(err.Error(), "may not approve it too") {
		t.Fatalf("self-approval: %v", err)
	}
	vars["BILLSYNC_ALLOW_SELF_APPROVE"] = "true" // the test's login planned it: a team of one
	env = envconfig.MapLookuper(vars)
	if err := jobCommand(context.Background(), []string{"approve", id}, env, &out); err != nil {
		t.Fatalf("approve: %v", err)
	}
	for range 2 {
		if err := run(context.Background(), []string{"-once"}, env, &out, &logs); err != nil {
			t.Fatalf("sync with apply-approved: %v\n%s", err, logs.String())
		}
	}
	if n := topups(); n != 1 {
		t.Fatalf("approved top-up sent %d times over two runs, want once", n)
	}
	if !strings.Contains(logs.String(), `"msg":"approved job plan applied"`) {
		t.Errorf("no log line for the applied plan:\n%s", logs.String())
	}
}

// creditProduct is the id of an active credit-usage product of sb, which a top-up needs.
func creditProduct(t *testing.T, sb *sandbox.Server) string {
	t.Helper()
	for _, raw := range sb.Dump("products") {
		var p struct{ ID, SubType, Status string }
		json.Unmarshal(raw, &p)
		if p.SubType == "credit_usage" && p.Status == "active" {
			return p.ID
		}
	}
	t.Fatal("the simulator holds no active credit-usage product")
	return ""
}

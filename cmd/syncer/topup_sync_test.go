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

	"github.com/billsync/billsync/internal/jobs"
	"github.com/billsync/billsync/internal/sandbox"
	"github.com/billsync/billsync/internal/warehouse"
	"github.com/sethvargo/go-envconfig"
)

// TestSyncReadsToppedUpCustomer: after "syncer job apply" of a credit top-up, the next sync reads
// that customer's credit history (the top-up is in the warehouse's ledger, so the credit report
// can confirm it), while a customer with no reason to be read is not read. A journal held by a
// running job does not stop the sync: it logs what it misses.
func TestSyncReadsToppedUpCustomer(t *testing.T) {
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
	var out, logs bytes.Buffer
	if err := run(context.Background(), []string{"-once"}, env, &out, &logs); err != nil {
		t.Fatalf("first sync: %v\n%s", err, logs.String())
	}
	const historyPath = "/credit/v1/credit/customer/paginate-credit-history/"
	read := func(from int) map[string]bool {
		ids := map[string]bool{}
		for _, r := range sb.Requests()[from:] {
			if id, ok := strings.CutPrefix(r.Path, historyPath); ok {
				ids[id] = true
			}
		}
		return ids
	}
	if len(read(0)) == 0 {
		t.Fatal("the first sync read no credit history")
	}

	var custs []struct{ ID string }
	for _, raw := range sb.Dump("customers") {
		var c struct{ ID string }
		json.Unmarshal(raw, &c)
		custs = append(custs, c)
	}
	prod := creditProduct(t, sb)
	topped := custs[0].ID
	in := filepath.Join(dir, "topup.csv")
	os.WriteFile(in, []byte(fmt.Sprintf("customerId,productId,amount\n%s,%s,4321\n", topped, prod)), 0o644)
	if err := jobCommand(context.Background(), []string{"plan", "-kind", "credit-topup", "-in", in}, env, &out); err != nil {
		t.Fatalf("plan: %v", err)
	}
	var id string
	fmt.Sscanf(out.String()[strings.Index(out.String(), "syncer job apply ")+len("syncer job apply "):], "%s", &id)
	out.Reset()
	if err := jobCommand(context.Background(), []string{"apply", id}, env, &out); err != nil || !strings.Contains(out.String(), "completed") {
		t.Fatalf("apply: %v\n%s", err, out.String())
	}

	before := len(sb.Requests())
	if err := run(context.Background(), []string{"-once"}, env, &out, &logs); err != nil {
		t.Fatalf("second sync: %v\n%s", err, logs.String())
	}
	second := read(before)
	if !second[topped] {
		t.Errorf("the second sync did not read the topped-up customer %s (read %d others)", topped, len(second))
	}
	unread := 0
	for _, c := range custs {
		if !second[c.ID] {
			unread++
		}
	}
	if unread == 0 {
		t.Errorf("the second sync read every customer's credit history: reads are not for a reason")
	}
	h, err := warehouse.OpenReadOnly(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	var n int
	err = h.QueryRow(`SELECT count(*) FROM credit_ledger WHERE customer_id = ? AND product_id = ? AND credit = 4321`, topped, prod).Scan(&n)
	h.Close()
	if err != nil || n != 1 {
		t.Fatalf("the top-up is %d times in the warehouse's ledger after the next sync (%v), want once", n, err)
	}

	// A job holds the journal open: the sync still runs, and warns what it misses.
	j, err := jobs.OpenJournal(context.Background(), jobs.DefaultJournalPath(db))
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	logs.Reset()
	if err := run(context.Background(), []string{"-once"}, env, &out, &logs); err != nil {
		t.Fatalf("sync beside a running job: %v\n%s", err, logs.String())
	}
	if !strings.Contains(logs.String(), `"level":"WARN","msg":"job journal unreadable: customers topped up by a job are not re-read`) {
		t.Errorf("no warning about the unreadable journal:\n%s", logs.String())
	}
}

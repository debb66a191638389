package jobs_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/billsync/billsync/internal/duckfile"
	"github.com/billsync/billsync/internal/jobs"
	"github.com/billsync/billsync/internal/sqlfile"
)

// TestSelfApprovalRefusedUnlessAllowed: the login that planned a job cannot approve it (nothing is recorded);
// with AllowSelfApprove (BILLSYNC_ALLOW_SELF_APPROVE) it can, and the journal says it was a self-approval; a
// colleague's approval is not one.
func TestSelfApprovalRefusedUnlessAllowed(t *testing.T) {
	e := newEnv(t)
	cs := e.customers(2)
	p := e.product(creditUsage)
	byBudi := func(o *jobs.PlanOptions) { o.User = "budi" }
	mine := e.mustPlan(jobs.CreditTopup, e.file("a.csv", "customerId,productId,amount", cs[0].ID+","+p.ID+",111"), byBudi)
	theirs := e.mustPlan(jobs.CreditTopup, e.file("b.csv", "customerId,productId,amount", cs[1].ID+","+p.ID+",222"), byBudi)
	ctx := context.Background()
	j := e.open()
	defer j.Close()
	target := jobs.ApproveOptions{By: "budi", Account: "test", BaseURL: e.srv.URL, Summary: "shown"}

	_, err := j.Approve(ctx, mine.ID, target)
	if !errors.Is(err, jobs.ErrSelfApproval) || !strings.Contains(err.Error(), "BILLSYNC_ALLOW_SELF_APPROVE=true") {
		t.Fatalf("self-approval: %v", err)
	}
	if got, _ := j.LoadPlan(ctx, mine.ID); got.Approval != nil || !got.ApprovedAt.IsZero() {
		t.Fatalf("a refused self-approval was recorded: %+v", got.Approval)
	}

	allowed := target
	allowed.AllowSelfApprove = true
	if _, err := j.Approve(ctx, mine.ID, allowed); err != nil {
		t.Fatalf("self-approval allowed: %v", err)
	}
	colleague := target
	colleague.By = "siti"
	if _, err := j.Approve(ctx, theirs.ID, colleague); err != nil {
		t.Fatalf("a colleague's approval: %v", err)
	}
	for id, want := range map[string]struct {
		by   string
		self bool
	}{mine.ID: {"budi", true}, theirs.ID: {"siti", false}} {
		var by, planner, base, summary string
		var self, prod bool
		err := j.DB().QueryRow(`SELECT approved_by, planned_by, self_approved, base_url, production, summary
			FROM job_approvals WHERE plan_id = ?`, id).Scan(&by, &planner, &self, &base, &prod, &summary)
		if err != nil || by != want.by || self != want.self || planner != "budi" || base != e.srv.URL || prod || summary != "shown" {
			t.Errorf("journal approval of %s: %v by=%s self=%v planner=%s base=%s prod=%v summary=%q", id, err, by, self,
				planner, base, prod, summary)
		}
		got, _ := j.LoadPlan(ctx, id)
		if got.Approval == nil || got.Approval.By != want.by || got.Approval.Self != want.self || got.ApprovedBy != want.by {
			t.Errorf("plan %s loads approval %+v", id, got.Approval)
		}
	}
}

// TestApplyApprovedOnlyToTheApprovedTarget: the daemon sends an approved plan only to the base URL and
// production flag it was approved for; an approval that recorded no target sends nothing; each says why.
func TestApplyApprovedOnlyToTheApprovedTarget(t *testing.T) {
	e := newEnv(t)
	cs := e.customers(2)
	p := e.product(creditUsage)
	plan := e.mustPlan(jobs.CreditTopup, e.file("a.csv", "customerId,productId,amount", cs[0].ID+","+p.ID+",111"))
	old := e.mustPlan(jobs.CreditTopup, e.file("b.csv", "customerId,productId,amount", cs[1].ID+","+p.ID+",222"))
	ctx := context.Background()
	j := e.open()
	if _, err := j.Approve(ctx, plan.ID, jobs.ApproveOptions{By: "siti", Account: "test", BaseURL: e.srv.URL}); err != nil {
		t.Fatal(err)
	}
	// An approval as billsync recorded it before approvals named their service.
	if _, err := j.DB().Exec(`UPDATE job_plans SET approved_at = now(), approved_by = 'siti' WHERE id = ?`, old.ID); err != nil {
		t.Fatal(err)
	}
	j.Close()
	adds := func() int { return e.posts("/credit/v1/credit/customer/add-credit") }
	apply := func(base string, production bool) []*jobs.RunResult {
		t.Helper()
		res, err := jobs.ApplyApproved(ctx, e.journal, jobs.ApplyOptions{Client: e.client(testKey), Account: "test",
			BaseURL: base, Production: production})
		if err != nil {
			t.Fatalf("ApplyApproved(%s, production %v): %v", base, production, err)
		}
		return res
	}
	byPlan := func(res []*jobs.RunResult) map[string]*jobs.RunResult {
		m := map[string]*jobs.RunResult{}
		for _, r := range res {
			m[r.Plan.ID] = r
		}
		return m
	}

	for _, tc := range []struct {
		base       string
		production bool
		want       string
	}{
		{"https://api.shop.example", true, "approved by siti for " + e.srv.URL + " (not production), not for https://api.shop.example (production)"},
		{e.srv.URL, true, "not for " + e.srv.URL + " (production)"},
	} {
		res := byPlan(apply(tc.base, tc.production))
		if r := res[plan.ID]; r == nil || r.Status != jobs.RunRefused || !strings.Contains(r.Refused, tc.want) || r.RunID != 0 {
			t.Errorf("to %s production %v: %+v, want refused saying %q", tc.base, tc.production, r, tc.want)
		}
		if r := res[old.ID]; r == nil || r.Status != jobs.RunRefused || !strings.Contains(r.Refused, "before approvals recorded the service") {
			t.Errorf("old-style approval: %+v", r)
		}
		if n := adds(); n != 0 {
			t.Fatalf("%d top-ups sent to a service the plan was not approved for", n)
		}
	}

	res := byPlan(apply(e.srv.URL+"/", false)) // the same service, a trailing slash apart
	if r := res[plan.ID]; r == nil || r.Status != jobs.RunCompleted || r.PlanRun != 1 {
		t.Fatalf("to the approved service: %+v", r)
	}
	if r := res[old.ID]; r == nil || r.Status != jobs.RunRefused {
		t.Errorf("old-style approval sent to the approved service of another plan: %+v", r)
	}
	if n := adds(); n != 1 {
		t.Errorf("%d top-ups sent, want 1", n)
	}
	j = e.open()
	defer j.Close()
	runs, err := j.Runs(ctx, plan.ID)
	if err != nil || len(runs) != 1 || runs[0].By == "" || runs[0].N != 1 || runs[0].BaseURL != e.srv.URL+"/" {
		t.Errorf("runs: %v %+v", err, runs)
	}
}

// TestJournalBeforeApprovalsUpgrades: a journal written before job_approvals existed (only the first
// migration applied, a plan approved the old way) opens, gains the table, and its old approval loads as one
// without a target, which the daemon does not send.
func TestJournalBeforeApprovalsUpgrades(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, jobs.JournalFile)
	first, err := os.ReadFile("migrations/0001_journal.sql")
	if err != nil {
		t.Fatal(err)
	}
	db, err := duckfile.Open(path, duckfile.Options{})
	if err != nil {
		t.Fatal(err)
	}
	old := fstest.MapFS{"migrations/0001_journal.sql": {Data: first}}
	if err := sqlfile.Migrate(context.Background(), db, old, "migrations"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`INSERT INTO job_plans (id, kind, account, plan_hash, actions, created_at, created_by, approved_at, approved_by)
		VALUES ('0123456789ab', 'credit-topup', 'test', 'h', 0, now(), 'budi', now(), 'siti')`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	j, err := jobs.OpenJournal(context.Background(), path)
	if err != nil {
		t.Fatalf("open the old journal: %v", err)
	}
	defer j.Close()
	p, err := j.LoadPlan(context.Background(), "0123456789ab")
	if err != nil || p.Approval != nil || p.ApprovedBy != "siti" {
		t.Fatalf("old approval: %v %+v", err, p)
	}
}

package jobs_test

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/billsync/billsync/internal/api"
	"github.com/billsync/billsync/internal/jobs"
	"github.com/xuri/excelize/v2"
)

func TestJournalLockKeepsASecondJobOut(t *testing.T) {
	e := newEnv(t)
	j := e.open()
	defer j.Close()
	_, err := jobs.OpenJournal(context.Background(), e.journal)
	if err == nil || !strings.Contains(err.Error(), "another job is running") {
		t.Fatalf("second open: %v", err)
	}
}

func TestApplyApprovedSendsOnlyApprovedPlans(t *testing.T) {
	e := newEnv(t)
	cs := e.customers(2)
	p := e.product(creditUsage)
	approved := e.mustPlan(jobs.CreditTopup, e.file("a.csv", "customerId,productId,amount", cs[0].ID+","+p.ID+",111"))
	other := e.mustPlan(jobs.CreditTopup, e.file("b.csv", "customerId,productId,amount", cs[1].ID+","+p.ID+",222"))
	j := e.open()
	if _, err := j.Approve(context.Background(), approved.ID, jobs.ApproveOptions{By: "finance-lead", Account: "test",
		BaseURL: e.srv.URL, Production: true}); err != nil {
		t.Fatal(err)
	}
	j.Close()
	c, _ := api.New(api.Config{BaseURL: e.srv.URL, APIKey: testKey, Unlimited: true})
	o := jobs.ApplyOptions{Client: c, Account: "test", BaseURL: e.srv.URL, Production: true}
	res, err := jobs.ApplyApproved(context.Background(), e.journal, o)
	if err != nil || len(res) != 1 || res[0].Plan.ID != approved.ID || res[0].Status != jobs.RunCompleted {
		t.Fatalf("ApplyApproved: %v, %+v", err, res)
	}
	if again, err := jobs.ApplyApproved(context.Background(), e.journal, o); err != nil || len(again) != 0 {
		t.Errorf("second ApplyApproved: %v, %d runs", err, len(again))
	}
	j = e.open()
	defer j.Close()
	pl, _ := j.LoadPlan(context.Background(), other.ID)
	if pl.Actions[0].State != jobs.Planned {
		t.Errorf("the unapproved plan was touched: %s", pl.Actions[0].State)
	}
}

// TestAPIKeyStoredNowhere runs jobs through success, failure and reconciliation, then looks for the key in
// the journal's text and in its file.
func TestAPIKeyStoredNowhere(t *testing.T) {
	e := newEnv(t)
	plan, _, _, _ := topupPlan(e, 100, 200)
	e.applyWith(plan.ID, roKey)
	e.apply(plan.ID)
	j := e.open()
	var hits int
	err := j.DB().QueryRow(`SELECT count(*) FROM (
		SELECT detail::VARCHAR AS t FROM job_actions UNION ALL SELECT error FROM job_actions
		UNION ALL SELECT error FROM job_runs UNION ALL SELECT request::VARCHAR FROM job_plan_actions)
		WHERE t LIKE '%' || ? || '%' OR t LIKE '%' || ? || '%'`, testKey, roKey).Scan(&hits)
	j.Close()
	if err != nil || hits != 0 {
		t.Fatalf("key found in %d journal values (%v)", hits, err)
	}
	b, err := os.ReadFile(e.journal)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), testKey) || strings.Contains(string(b), roKey) {
		t.Fatal("the API key is in the journal file")
	}
}

// TestXLSXWorkbookPicksTheSheetWithTheColumns feeds a report-like workbook whose first sheet is a summary.
func TestXLSXWorkbookPicksTheSheetWithTheColumns(t *testing.T) {
	e := newEnv(t)
	cs := e.customers(2)
	f := excelize.NewFile()
	f.SetSheetRow("Sheet1", "A1", &[]any{"Summary", "2 problems"})
	f.NewSheet("duplicate or malformed e-mails")
	sh := "duplicate or malformed e-mails"
	f.SetSheetRow(sh, "A1", &[]any{"customer id", "name", "From Email", "to_email"})
	f.SetSheetRow(sh, "A2", &[]any{cs[0].ID, cs[0].Name, cs[0].Email, "first.fixed@example.com"})
	f.SetSheetRow(sh, "A3", &[]any{cs[1].ID, cs[1].Name, cs[1].Email, "bad address"})
	path := e.dir + "/dq.xlsx"
	if err := f.SaveAs(path); err != nil {
		t.Fatal(err)
	}
	_, err := e.plan(jobs.EmailFix, path)
	if err == nil || !strings.Contains(err.Error(), `sheet "duplicate or malformed e-mails" line 3 column D (to_email)`) {
		t.Fatalf("plan: %v", err)
	}
	f.SetSheetRow(sh, "D3", &[]any{"second.fixed@example.com"})
	f.SaveAs(path)
	p := e.mustPlan(jobs.EmailFix, path)
	if len(p.Actions) != 2 || p.Actions[1].Request["toEmail"] != "second.fixed@example.com" {
		t.Fatalf("plan: %+v", p.Actions)
	}
	out := e.dir + "/plan.xlsx"
	if err := jobs.WriteTableFile(out, jobs.PlanTable(p, jobs.FileOptions{}), jobs.FileOptions{}); err != nil {
		t.Fatal(err)
	}
	back, err := excelize.OpenFile(out)
	if err != nil {
		t.Fatal(err)
	}
	defer back.Close()
	if v, _ := back.GetCellValue("Rencana", "F3"); v != cs[1].Email {
		t.Errorf("plan.xlsx F3 = %q, want the fromEmail %q", v, cs[1].Email)
	}
}

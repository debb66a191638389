package jobs_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/billsync/billsync/internal/duckfile"
	"github.com/billsync/billsync/internal/jobs"
	"github.com/billsync/billsync/internal/jobs/journalfile"
)

// TestJournalIsPrivate: the job journal, the record of who planned, approved and sent what, is
// its owner's alone (issue 35): created 0600 in a folder billsync creates 0750, kept 0600 with its
// write-ahead log through a plan and an apply, narrowed when an older billsync left it readable,
// and refused in a folder every user may write in.
func TestJournalIsPrivate(t *testing.T) {
	e := newEnv(t)
	e.journal = filepath.Join(e.dir, "new", "journal", jobs.JournalFile)
	modes := func(when string) {
		t.Helper()
		for _, p := range []string{e.journal, e.journal + ".wal"} {
			fi, err := os.Stat(p)
			if os.IsNotExist(err) {
				continue
			}
			if err != nil {
				t.Fatal(err)
			}
			// its owner's and their group's (the people who approve), never others'
			if m := fi.Mode().Perm(); m&0o007 != 0 || m&0o600 != 0o600 {
				t.Errorf("%s: %s is %v, want -rw-rw---- or narrower", when, filepath.Base(p), m)
			}
		}
	}
	j := e.open()
	modes("created")
	if fi, err := os.Stat(filepath.Dir(e.journal)); err != nil || fi.Mode().Perm()&0o007 != 0 {
		t.Errorf("the journal's new folder: %v, %v; want no access for others", fi.Mode(), err)
	}
	j.Close()
	cs := e.customers(1)
	p := e.product(creditUsage)
	plan := e.mustPlan(jobs.CreditTopup, e.file("a.csv", "customerId,productId,amount", cs[0].ID+","+p.ID+",111"))
	modes("planned")
	e.apply(plan.ID)
	modes("applied")

	// a journal an older billsync left readable by all is narrowed at its next open
	if err := os.Chmod(e.journal, 0o644); err != nil {
		t.Fatal(err)
	}
	e.open().Close()
	modes("reopened")

	// a folder every user may write in: anyone could put a .wal there for DuckDB to replay
	open := filepath.Join(e.dir, "open")
	if err := os.Mkdir(open, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(open, 0o1777); err != nil {
		t.Fatal(err)
	}
	if _, err := jobs.OpenJournal(context.Background(), filepath.Join(open, jobs.JournalFile)); err == nil || !strings.Contains(err.Error(), "writable by every user") {
		t.Errorf("a journal in a world-writable folder: %v", err)
	}
}

// TestJournalReadersCannotUpgrade: a reader gets the journal attached read-only and confined, so
// no statement on its handle writes it, changes a setting or reaches another file (issue 35).
// DuckDB itself still lets a handle DETACH a file and ATTACH it again writable (it allows the
// files attached before the confinement); billsync's readers run only their own SQL, and an
// analyst's is refused both before it runs (TestAnalystSQLLeastPrivilege in internal/report).
func TestJournalReadersCannotUpgrade(t *testing.T) {
	e := newEnv(t)
	e.open().Close()
	ctx := context.Background()
	db, err := duckfile.Open("", duckfile.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := journalfile.Attach(ctx, db, e.journal); err != nil {
		t.Fatal(err)
	}
	if err := duckfile.Confine(ctx, db, duckfile.Confinement{}); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{
		"DELETE FROM journal.job_plans",
		"CREATE TABLE journal.t (a INT)",
		"COPY (SELECT 1) TO " + duckfile.QuoteLiteral(filepath.Join(e.dir, "x.csv")),
		"SET enable_external_access = true",
	} {
		if _, err := db.ExecContext(ctx, s); err == nil {
			t.Errorf("%s: succeeded", s)
		}
	}
	// CreditSends, the journal's other reader, still reads it
	if _, err := jobs.CreditSends(ctx, e.journal); err != nil {
		t.Fatal(err)
	}
}

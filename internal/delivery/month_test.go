package delivery

// A month in the life (docs/delivery.md): the daemon's parts, on the simulator's clock, live 36
// days in a few minutes. The test drives what the daemon wires (cmd/syncer): the nightly sync
// (syncrun.Run against the simulator over HTTP), then Scheduler.SyncFinished and Check, and
// Check at the deliveries' times, in that order, tick by tick; it does not run the daemon's
// real-time loop (schedule.Runner, Scheduler.Run's ticker). A sync stamps its runs with this
// machine's clock (docs/sync.md); the test moves them to the simulated moment the sync ran, as
// the other daemon tests do. Mail goes to a real SMTP server (mailpit), read back through its
// API: exactly the expected messages, each once, and every credit figure in every message
// checked against the warehouse by the reader's SQL (reader_test.go) for its as-of date.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/billsync/billsync/internal/api"
	"github.com/billsync/billsync/internal/config"
	"github.com/billsync/billsync/internal/duckfile"
	"github.com/billsync/billsync/internal/fetch"
	"github.com/billsync/billsync/internal/jobs"
	"github.com/billsync/billsync/internal/sandbox"
	"github.com/billsync/billsync/internal/syncdata"
	"github.com/billsync/billsync/internal/syncrun"
)

const monthSchedule = `deliveries:
  - name: daily
    reports: [credit]
    schedule: "0 7 * * *"
    as_of: yesterday
    to: [finance@toko.example]
  - name: weekly
    reports: [credit, aging]
    schedule: "0 8 * * 1"
    as_of: yesterday
    to: [finance@toko.example]
  - name: close
    reports: [credit, aging, collections]
    schedule: "0 7 1 * *"
    as_of: end of last month
    late_window: 72h
    to: [finance@toko.example, cfo@toko.example]
`

// The month's events, as days after the first (a simulated day runs 00:00-24:00 WIB).
const (
	monthDays   = 36
	failNight   = 9  // the 02:00 sync fails: the service answers 500s
	smtpDownDay = 15 // mailpit is stopped from 00:00 to 24:00
	restartDay  = 20 // the daemon restarts at 12:30: new Scheduler and Alerter, same files
	topupDay    = 11 // alice plans a top-up at 12:30, bob approves it; the daemon applies it after the next night's sync
	topupAmount = 123457
)

// TestMonthInTheLife: see the top of this file and docs/delivery.md's "A month in the life".
func TestMonthInTheLife(t *testing.T) {
	if testing.Short() {
		t.Skip("a month takes about a minute")
	}
	ctx := context.Background()
	mp := startMailpit(t, "finance-bot", "s3cret-pass", false)
	loc := jakarta(t)
	day0 := time.Date(2026, 6, 1, 0, 0, 0, 0, loc)
	install := day0.Add(30 * time.Minute)

	sb, err := sandbox.New(sandbox.Options{Seed: 11, Scale: 0.05, Now: install.UTC(), Key: testKey})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(sb)
	defer srv.Close()
	client, err := api.New(api.Config{BaseURL: srv.URL, APIKey: testKey, Unlimited: true,
		MinBackoff: time.Millisecond, MaxBackoff: 5 * time.Millisecond, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	simNow := install
	advance := func(to time.Time) {
		if to.Before(simNow) {
			t.Fatalf("the clock goes back: %s after %s", to, simNow)
		}
		sb.Advance(to.Sub(simNow))
		simNow = to
	}

	// First start: an empty directory, no warehouse.
	dir := t.TempDir()
	db := filepath.Join(dir, "data", "billsync.duckdb")
	o := testOptions(t, db)
	o.Now = func() time.Time { return simNow }
	o.SMTP = mp.smtp("finance-bot", "s3cret-pass", false)
	o.Retries = 1
	f, err := Parse("month.yaml", []byte(monthSchedule), loc)
	if err != nil {
		t.Fatal(err)
	}
	newDaemon := func() *Scheduler {
		return &Scheduler{File: f, Options: o, Log: quiet, NoSyncAlert: 36 * time.Hour,
			Alerts: &Alerter{To: []string{"ops@toko.example"}, Options: o, Log: quiet}}
	}
	s := newDaemon()
	s.loadFirstStart(ctx, simNow)
	s.reportMissed(ctx, simNow)

	syncOpts := syncrun.Options{Options: fetch.Options{Fetch: config.Fetch{PageSize: 100, Concurrency: 4, Details: true}, Account: "main", Log: quiet}}
	journal := jobs.DefaultJournalPath(db)
	var applied []*jobs.RunResult
	// sync is the daemon's job (cmd/syncer): the customers a job topped up re-read, a sync, its
	// runs at the simulated time, the scheduler told, then the approved plans applied.
	var syncTook, checkTook, readTook time.Duration
	sync := func() error {
		defer func(start time.Time) { syncTook += time.Since(start) }(time.Now())
		if _, err := os.Stat(journal); err == nil {
			sends, err := jobs.CreditSends(ctx, journal)
			if err != nil {
				t.Fatal(err)
			}
			syncOpts.CreditHints = nil
			for _, c := range sends {
				syncOpts.CreditHints = append(syncOpts.CreditHints, syncdata.CreditHint{Account: c.Account, CustomerID: c.CustomerID, At: c.At})
			}
		}
		_, err := syncrun.Run(ctx, db, []syncrun.Account{{Name: "main", Client: client}}, syncOpts)
		at := simNow.UTC().Format(time.RFC3339)
		execJournal(t, db, "UPDATE sync_runs SET started_at = '"+at+"'::TIMESTAMPTZ, finished_at = '"+at+
			"'::TIMESTAMPTZ WHERE started_at > '"+at+"'::TIMESTAMPTZ")
		// the credit histories' reads too: a top-up sent on the simulated clock is after them
		execJournal(t, db, "UPDATE credit_fetch_state SET last_fetched_at = '"+at+"'::TIMESTAMPTZ WHERE last_fetched_at > '"+at+"'::TIMESTAMPTZ")
		s.SyncFinished(err, "", simNow)
		if err != nil {
			return err
		}
		if _, err := os.Stat(journal); err != nil {
			return nil // no job planned yet
		}
		res, err := jobs.ApplyApproved(ctx, journal, jobs.ApplyOptions{Client: client, Account: "main", BaseURL: srv.URL,
			User: "syncer daemon as billsync", Log: quiet, Now: func() time.Time { return simNow }, Location: loc, Warehouse: db})
		if err != nil {
			t.Fatalf("apply approved: %v", err)
		}
		applied = append(applied, res...)
		return nil
	}

	s.Check(ctx, simNow)
	if n := len(mpAll(t, mp)); n != 0 {
		t.Fatalf("%d messages before the first sync (want none: no alert about a warehouse that cannot exist yet)", n)
	}
	if err := sync(); err != nil { // a daemon with no warehouse syncs at start
		t.Fatalf("the first sync: %v", err)
	}
	s.Check(ctx, simNow)

	checked := map[string]bool{} // mailpit IDs whose figures were read
	readNew := func() {
		defer func(start time.Time) { readTook += time.Since(start) }(time.Now())
		for _, m := range mpAll(t, mp) {
			if checked[m.ID] {
				continue
			}
			checked[m.ID] = true
			if strings.HasPrefix(m.Subject, "[billsync]") {
				continue
			}
			checkMonthMessage(t, mp, db, m)
		}
	}
	for d := 0; d < monthDays; d++ {
		date := day0.AddDate(0, 0, d)
		if d == smtpDownDay {
			advance(date)
			mp.stop()
		}
		if d == smtpDownDay+1 {
			advance(date)
			mp.start(t)
		}
		for _, hm := range []time.Duration{2 * time.Hour, 7 * time.Hour, 8 * time.Hour, 12*time.Hour + 30*time.Minute, 19 * time.Hour} {
			at := date.Add(hm)
			if !at.After(simNow) {
				continue
			}
			advance(at)
			if d == restartDay && hm == 12*time.Hour+30*time.Minute {
				s = newDaemon()
				s.loadFirstStart(ctx, simNow)
				s.reportMissed(ctx, simNow)
			}
			if hm == 2*time.Hour {
				if d == failNight {
					if err := sb.FailNext(sandbox.FaultServerError, 1000, ""); err != nil {
						t.Fatal(err)
					}
				}
				err := sync()
				if d == failNight {
					if err == nil {
						t.Fatal("the failing night's sync succeeded")
					}
					if err := sb.SetFaults(sandbox.Faults{}); err != nil {
						t.Fatal(err)
					}
				} else if err != nil {
					t.Fatalf("day %d: sync: %v", d, err)
				}
			}
			if d == topupDay && hm == 12*time.Hour+30*time.Minute {
				planTopup(t, ctx, db, journal, srv.URL, simNow, loc)
			}
			start := time.Now()
			s.Check(ctx, simNow)
			checkTook += time.Since(start)
			if d != smtpDownDay {
				readNew()
			}
		}
	}

	t.Logf("%d days: the syncs (and the top-up) took %s, the deliveries and alerts %s, reading the messages %s",
		monthDays, syncTook.Round(time.Second), checkTook.Round(time.Second), readTook.Round(time.Second))
	// The top-up: applied once, by the daemon, the night after bob approved it; the warehouse has
	// it from the sync after, so the credit tables read above (the reader's SQL) include it.
	if len(applied) != 1 || applied[0].Status != jobs.RunCompleted || applied[0].Succeeded != 1 {
		t.Errorf("the daemon applied %d plans, want the top-up once: %+v", len(applied), applied)
	}
	conn, err := duckfile.OpenReadOnly(db)
	if err != nil {
		t.Fatal(err)
	}
	var n int
	var when time.Time
	if err := conn.QueryRow(`SELECT count(*), max(created_at) FROM credit_ledger WHERE credit = ?`, topupAmount).Scan(&n, &when); err != nil {
		t.Fatal(err)
	}
	conn.Close()
	if wantDay := day0.AddDate(0, 0, topupDay+1).Format(time.DateOnly); n != 1 || when.In(loc).Format(time.DateOnly) != wantDay {
		t.Errorf("the warehouse has %d credits of %d (the newest at %s), want the top-up once, made on %s", n, topupAmount, when, wantDay)
	}

	var got []string
	read := 0
	for _, m := range mpAll(t, mp) {
		got = append(got, m.Subject)
		if !strings.HasPrefix(m.Subject, "[billsync]") {
			read++
		}
	}
	if read < monthDays {
		t.Errorf("%d deliveries' figures read, want at least %d", read, monthDays)
	}
	sort.Strings(got)
	want := monthExpected(day0, loc)
	sort.Strings(want)
	if !slices.Equal(got, want) {
		t.Errorf("the mailbox:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// monthExpected is the mailbox the month must leave: one message per occurrence of each
// delivery, its subject marked as the code marks it, and the alerts' changes of state.
func monthExpected(day0 time.Time, loc *time.Location) []string {
	var out []string
	date := func(t time.Time) string {
		return fmt.Sprintf("%d %s %d", t.Day(), idMonths[t.Month()-1], t.Year())
	}
	for d := 0; d < monthDays; d++ {
		today := day0.AddDate(0, 0, d)
		yesterday := today.AddDate(0, 0, -1)
		tag, late := "", ""
		switch d {
		case failNight:
			tag = "[DATA BELUM TERBARU] " // no sync finished after the as-of date: the data was stale
		case smtpDownDay:
			late = " (terlambat)" // sent the next night, once the server is back
		}
		out = append(out, tag+"Laporan daily per "+date(yesterday)+late)
		if today.Weekday() == time.Monday {
			out = append(out, tag+"Laporan weekly per "+date(yesterday)+late)
		}
		if today.Day() == 1 {
			out = append(out, tag+"Laporan close per "+date(yesterday)+late)
		}
	}
	return append(out,
		// the failed night: the sync's state, and the 48 hours without a successful one
		"[billsync] PROBLEM: sync failed", "[billsync] RESOLVED: sync failed",
		"[billsync] PROBLEM: no successful sync for more than 36h0m0s", "[billsync] RESOLVED: no successful sync for more than 36h0m0s",
		"[billsync] delivery daily as of "+day0.AddDate(0, 0, failNight-1).Format(time.DateOnly)+" went out stale",
		// the day without SMTP: told once the server is back, with its end
		"[billsync] PROBLEM: delivery daily failed", "[billsync] RESOLVED: delivery daily failed")
}

var idMonths = []string{"Jan", "Feb", "Mar", "Apr", "Mei", "Jun", "Jul", "Agu", "Sep", "Okt", "Nov", "Des"}

// mpAll is every message in the mailbox.
func mpAll(t *testing.T, mp *mailpit) []mpSummary {
	t.Helper()
	var list struct{ Messages []mpSummary }
	b := mp.get(t, "/api/v1/messages?limit=1000", nil)
	if err := json.Unmarshal(b, &list); err != nil {
		t.Fatal(err)
	}
	return list.Messages
}

// checkMonthMessage reads a delivery's message as it arrived and checks its credit table
// against the warehouse by the reader's SQL, as of the date in its subject.
func checkMonthMessage(t *testing.T, mp *mailpit, db string, m mpSummary) {
	t.Helper()
	i := strings.Index(m.Subject, " per ")
	if i < 0 {
		t.Errorf("%q: no as-of date in the subject", m.Subject)
		return
	}
	rest := strings.TrimSuffix(strings.TrimSuffix(m.Subject[i+5:], " (terlambat)"), " (dikirim ulang)")
	f := strings.Fields(rest)
	if len(f) != 3 {
		t.Errorf("%q: as-of date %q", m.Subject, rest)
		return
	}
	mon := slices.Index(idMonths, f[1])
	var day, year int
	fmt.Sscan(f[0], &day)
	fmt.Sscan(f[2], &year)
	asOf := time.Date(year, time.Month(mon+1), day, 0, 0, 0, 0, time.UTC)
	msg := mp.message(t, m.ID)
	mine := filepath.Join(t.TempDir(), "copy.duckdb")
	if err := copyFile(db, mine); err != nil {
		t.Fatal(err)
	}
	conn, err := duckfile.OpenReadOnly(mine)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	tc := readerTables[0] // credit: per product and wallet, opening + credits - debits = closing
	const locale = "id"
	src := querySource(t, conn, sqlTextAt(tc.sql, locale, asOf))
	title := reportTitles["credit"][locale]
	var headings []string
	for _, c := range readerTables {
		headings = append(headings, c.heading[locale])
	}
	for _, rd := range []*reading{readTextPart(msg.Text, title, locale, headings), readHTMLPart(t, msg.HTML, title, locale)} {
		rd.where = m.Subject + ": " + rd.where
		checkTable(t, rd.where, tc, locale, rd.tables[lookup(rd, tc.heading[locale], tc.tab[locale])], src, true, true)
	}
}

// planTopup is two people's part of a top-up: alice plans it from a file for a customer with
// credit history, bob (another login) approves it for the simulator.
func planTopup(t *testing.T, ctx context.Context, db, journal, baseURL string, now time.Time, loc *time.Location) {
	t.Helper()
	wh, err := duckfile.OpenReadOnly(db)
	if err != nil {
		t.Fatal(err)
	}
	defer wh.Close()
	var customer, product string
	if err := wh.QueryRow(`SELECT l.customer_id, l.product_id FROM credit_ledger l JOIN products p ON p.account = l.account AND p.id = l.product_id
		WHERE p.status = 'active' AND p.sub_type = 'credit_usage' AND p.deleted_upstream_at IS NULL ORDER BY l.customer_id, l.product_id LIMIT 1`).Scan(&customer, &product); err != nil {
		t.Fatalf("a customer with credit history: %v", err)
	}
	in := filepath.Join(t.TempDir(), "topup.csv")
	if err := os.WriteFile(in, []byte(fmt.Sprintf("customerId,productId,amount\n%s,%s,%d\n", customer, product, topupAmount)), 0o644); err != nil {
		t.Fatal(err)
	}
	j, err := jobs.OpenJournal(ctx, journal)
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	p, err := j.Plan(ctx, wh, jobs.PlanOptions{Kind: jobs.CreditTopup, Input: in, Account: "main", Location: loc, Now: now, User: "alice", Host: "finance-pc"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := j.Approve(ctx, p.ID, jobs.ApproveOptions{By: "alice", Host: "finance-pc", Account: "main", BaseURL: baseURL, Now: now}); !errors.Is(err, jobs.ErrSelfApproval) {
		t.Fatalf("alice approved her own plan: %v", err)
	}
	if _, err := j.Approve(ctx, p.ID, jobs.ApproveOptions{By: "bob", Host: "ops-pc", Account: "main", BaseURL: baseURL, Now: now}); err != nil {
		t.Fatal(err)
	}
}

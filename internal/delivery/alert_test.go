package delivery

import (
	"context"
	"fmt"
	"github.com/billsync/billsync/internal/config"
	"io"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/billsync/billsync/internal/duckfile"
	"github.com/billsync/billsync/internal/jobs"
	"github.com/billsync/billsync/internal/jobs/journalfile"
	"github.com/billsync/billsync/internal/metrics"
)

const opsUser, opsPass = "alerts-bot", "ops-pass-7"

// daemonWithAlerts is a scheduler (a daemon's) whose alerts go to ops@ through mailpit.
func daemonWithAlerts(t *testing.T, db string, mp *mailpit, c *clock) (*Scheduler, Options) {
	t.Helper()
	o := testOptions(t, db)
	o.Now = c.now
	o.SMTP = mp.smtp(opsUser, opsPass, false)
	s := &Scheduler{File: &File{Loc: jakarta(t)}, Options: o, Log: quiet} // alerts only
	s.Alerts = &Alerter{To: []string{"ops@toko.example"}, Options: o, Log: quiet}
	return s, o
}

// arrived are the subjects mailpit received, oldest first.
func (m *mailpit) subjects(t *testing.T) []string {
	t.Helper()
	list := m.messages(t)
	var out []string
	for i := len(list) - 1; i >= 0; i-- {
		out = append(out, list[i].Subject)
	}
	return out
}

// jobJournal creates the job journal beside db with its real migrations and returns its path.
func jobJournal(t *testing.T, db string) string {
	t.Helper()
	path := journalfile.DefaultPath(db)
	j, err := jobs.OpenJournal(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// jobState appends a state to a job row's history, as an apply or a resolve does.
func jobState(t *testing.T, path, plan string, seq int, state string) {
	t.Helper()
	execJournal(t, path, fmt.Sprintf(`INSERT INTO job_actions (plan_id, action_id, seq, state, recorded_at)
		VALUES ('%s', '%s-a%d', %d, '%s', now())`, plan, plan, seq, seq, state))
}

// TestAlertsPersistAcrossRestart: a problem that persists across a daemon's restart (and a
// second daemon) is told once; unresolved job rows make one alert however many checks see
// them; the messages arrive through a real SMTP server.
func TestAlertsPersistAcrossRestart(t *testing.T) {
	mp := startMailpit(t, opsUser, opsPass, false)
	db := testWarehouse(t)
	jp := jobJournal(t, db)
	jobState(t, jp, "plan-1", 1, "planned")
	jobState(t, jp, "plan-1", 1, "sent")
	jobState(t, jp, "plan-1", 1, "unresolved")
	jobState(t, jp, "plan-1", 2, "planned")
	jobState(t, jp, "plan-1", 2, "succeeded")
	c := &clock{t: wib(t, "2026-12-01 08:00")}
	ctx := context.Background()

	s, _ := daemonWithAlerts(t, db, mp, c)
	s.SyncFinished(context.DeadlineExceeded, "", c.t)
	for range 3 {
		s.Check(ctx, c.t)
		c.t = c.t.Add(time.Minute)
	}
	want := []string{"[billsync] PROBLEM: sync failed", "[billsync] PROBLEM: unresolved job rows waiting"}
	if got := mp.subjects(t); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("first daemon sent:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	list := mp.messages(t)
	body := mp.message(t, list[0].ID).Text
	if !strings.Contains(body, "1 job rows are unresolved") || !strings.Contains(body, "plan plan-1: 1") {
		t.Errorf("the unresolved rows' alert says:\n%s", body)
	}
	if to := list[0].To; len(to) != 1 || to[0].Address != "ops@toko.example" {
		t.Errorf("sent to %+v", to)
	}

	// A restart, and a second daemon beside it: the sync fails again, the rows still wait.
	for _, name := range []string{"restarted", "second"} {
		s2, _ := daemonWithAlerts(t, db, mp, c)
		s2.SyncFinished(context.DeadlineExceeded, "", c.t)
		s2.Check(ctx, c.t)
		c.t = c.t.Add(time.Minute)
		if got := mp.subjects(t); len(got) != 2 {
			t.Fatalf("the %s daemon told a persisting problem again: %q", name, got)
		}
	}
}

// TestAlertsEachChange: problem, fixed, problem again: each change is told once, across
// restarts between them.
func TestAlertsEachChange(t *testing.T) {
	mp := startMailpit(t, opsUser, opsPass, false)
	db := testWarehouse(t)
	jp := jobJournal(t, db)
	c := &clock{t: wib(t, "2026-12-01 08:00")}
	ctx := context.Background()
	check := func() {
		s, _ := daemonWithAlerts(t, db, mp, c) // a daemon started afresh each time
		s.Check(ctx, c.t)
		s.Check(ctx, c.t.Add(time.Minute))
		c.t = c.t.Add(time.Hour)
	}
	check() // nothing wrong: nothing told
	jobState(t, jp, "plan-2", 1, "unresolved")
	check()
	check()
	jobState(t, jp, "plan-2", 1, "succeeded") // a person resolved it: applied
	check()
	jobState(t, jp, "plan-3", 4, "unresolved")
	check()
	want := []string{"[billsync] PROBLEM: unresolved job rows waiting", "[billsync] RESOLVED: unresolved job rows waiting",
		"[billsync] PROBLEM: unresolved job rows waiting"}
	if got := mp.subjects(t); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("sent:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestAlertsServerDown: an alert the SMTP server refused is not lost: it is journaled and
// sent once the server takes it, and the change is not told twice.
func TestAlertsServerDown(t *testing.T) {
	mp := startMailpit(t, opsUser, opsPass, false)
	db := testWarehouse(t)
	c := &clock{t: wib(t, "2026-12-01 08:00")}
	ctx := context.Background()
	s, o := daemonWithAlerts(t, db, mp, c)
	o.SMTP = mp.smtp(opsUser, "wrong", false)
	s.Alerts.Options = o
	s.SyncFinished(context.DeadlineExceeded, "", c.t)
	s.Check(ctx, c.t)
	if n := len(mp.messages(t)); n != 0 {
		t.Fatalf("%d messages with a refused password", n)
	}
	// The password fixed, a restart: the recorded alert goes out, once.
	s2, _ := daemonWithAlerts(t, db, mp, c)
	s2.SyncFinished(context.DeadlineExceeded, "", c.t)
	for range 2 {
		c.t = c.t.Add(2 * time.Minute)
		s2.Check(ctx, c.t)
	}
	if got := mp.subjects(t); len(got) != 1 || got[0] != "[billsync] PROBLEM: sync failed" {
		t.Fatalf("after the server took it: %q", got)
	}
}

// TestAlertsDataQuality: the data-quality report's exceptions at or above BILLSYNC_ALERT_DQ_MIN
// make one alert; below it none.
func TestAlertsDataQuality(t *testing.T) {
	mp := startMailpit(t, opsUser, opsPass, false)
	db := testWarehouse(t)
	c := &clock{t: wib(t, "2026-12-01 08:00")}
	ctx := context.Background()
	s, o := daemonWithAlerts(t, db, mp, c)
	n, parts, err := dqExceptions(ctx, o, time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	if n == 0 || !strings.Contains(parts, "e-mail fixes") || !strings.Contains(parts, "conflicting duplicates") {
		t.Fatalf("the test warehouse's exceptions: %d (%s): the test would prove nothing", n, parts)
	}
	s.DQMin = n + 1
	s.Check(ctx, c.t)
	if got := mp.subjects(t); len(got) != 0 {
		t.Fatalf("below the threshold: %q", got)
	}
	s2, _ := daemonWithAlerts(t, db, mp, c)
	s2.DQMin = n
	for range 2 {
		s2.Check(ctx, c.t)
		c.t = c.t.Add(time.Minute)
	}
	got := mp.subjects(t)
	if want := fmt.Sprintf("[billsync] PROBLEM: data-quality exceptions (%d or more)", n); len(got) != 1 || got[0] != want {
		t.Fatalf("at the threshold: %q, want %q", got, want)
	}
	body := mp.message(t, mp.messages(t)[0].ID).Text
	if !strings.Contains(body, fmt.Sprintf("lists %d exceptions (%s)", n, parts)) {
		t.Errorf("the alert says:\n%s", body)
	}
}

// TestAlertMetrics: the alert states, the deliveries sent and the last delivery's time are on
// /metrics, and a restarted daemon serves the states the journal holds.
func TestAlertMetrics(t *testing.T) {
	db := testWarehouse(t)
	syncedAt(t, db, wib(t, "2026-12-01 02:30"))
	jp := jobJournal(t, db)
	jobState(t, jp, "plan-9", 1, "unresolved")
	c := &clock{t: wib(t, "2026-12-01 07:00")}
	ctx := context.Background()
	var m metrics.Sync
	s, o := scheduler(t, db, closePack, c)
	s.Observer = &m
	s.Alerts = &Alerter{To: []string{"ops@toko.example"}, Options: o, Log: quiet, Observer: &m}
	s.SyncFinished(nil, "", c.t)
	s.Check(ctx, c.t)
	body := scrape(t, &m)
	for _, want := range []string{
		`billsync_alert_active{alert="unresolved_jobs"} 1`,
		`billsync_deliveries_total{outcome="sent"} 1`,
		`billsync_deliveries_total{outcome="failed"} 0`,
		fmt.Sprintf("billsync_last_delivery_success_timestamp_seconds %s", promFloat(c.t)),
	} {
		if !strings.Contains(body, want+"\n") {
			t.Errorf("/metrics lacks %q:\n%s", want, grepLines(body, "billsync_"))
		}
	}
	jobState(t, jp, "plan-9", 1, "succeeded")
	s.Check(ctx, c.t.Add(time.Minute))
	if body := scrape(t, &m); !strings.Contains(body, `billsync_alert_active{alert="unresolved_jobs"} 0`+"\n") {
		t.Errorf("resolved, /metrics says:\n%s", grepLines(body, "billsync_alert"))
	}
	// A restart while the sync failure persists: the gauge is 1 at once, from the journal.
	s.SyncFinished(context.DeadlineExceeded, "", c.t)
	s.Check(ctx, c.t.Add(2*time.Minute))
	var m2 metrics.Sync
	s2, _ := scheduler(t, db, closePack, c)
	s2.Alerts = &Alerter{To: []string{"ops@toko.example"}, Options: o, Log: quiet, Observer: &m2}
	s2.Check(ctx, c.t.Add(3*time.Minute))
	if body := scrape(t, &m2); !strings.Contains(body, `billsync_alert_active{alert="sync_failed"} 1`+"\n") {
		t.Errorf("after a restart, /metrics says:\n%s", grepLines(body, "billsync_alert"))
	}
}

func scrape(t *testing.T, m *metrics.Sync) string {
	t.Helper()
	srv := httptest.NewServer(m)
	defer srv.Close()
	resp, err := srv.Client().Get(srv.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

// promFloat is a time as the text exposition writes a float of seconds.
func promFloat(at time.Time) string {
	return fmt.Sprintf("%g", float64(at.UnixMilli())/1000)
}

func grepLines(s, prefix string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(l, prefix) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

const alertChildEnv = "BILLSYNC_ALERT_TEST_CHILD"

// alertChild is a daemon killed with SIGKILL once the server accepted its alert, before the
// journal recorded it sent.
func alertChild() int {
	testAfterAlertAccept = func() { syscall.Kill(os.Getpid(), syscall.SIGKILL) }
	loc, _ := time.LoadLocation("Asia/Jakarta")
	now := time.Date(2026, 12, 1, 1, 0, 0, 0, time.UTC)
	o := Options{Report: config.Report{TZ: config.MustZone("Asia/Jakarta")}, DB: os.Getenv("CHILD_DB"), Outbox: os.Getenv("CHILD_OUTBOX"), From: "billsync@toko.example",
		Log: quiet, Now: func() time.Time { return now }}
	s := &Scheduler{File: &File{Loc: loc}, Options: o, Log: quiet,
		Alerts: &Alerter{To: []string{"ops@toko.example"}, Options: o, Log: quiet}}
	s.SyncFinished(context.DeadlineExceeded, "", now)
	s.Check(context.Background(), now)
	return 4 // not killed
}

// TestAlertKilled: a daemon killed after the server accepted an alert and before the journal
// recorded it: the restarted daemon sends it once more, marked "(resent)", then never again.
func TestAlertKilled(t *testing.T) {
	db := testWarehouse(t)
	c := &clock{t: wib(t, "2026-12-01 08:05")}
	o := testOptions(t, db)
	o.Now = c.now
	s := &Scheduler{File: &File{Loc: jakarta(t)}, Options: o, Log: quiet}
	s.Alerts = &Alerter{To: []string{"ops@toko.example"}, Options: o, Log: quiet}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), alertChildEnv+"=1", "CHILD_DB="+db, "CHILD_OUTBOX="+o.Outbox)
	err := cmd.Run()
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("child was not killed: %v", err)
	}
	if got := subjects(t, o); len(got) != 1 || got[0] != "[billsync] PROBLEM: sync failed" {
		t.Fatalf("the killed daemon left %q", got)
	}
	for range 2 {
		s.Check(context.Background(), c.t)
		c.t = c.t.Add(2 * time.Minute)
	}
	got := subjects(t, o)
	if len(got) != 2 || !strings.Contains(strings.Join(got, "\n"), "[billsync] PROBLEM: sync failed (resent)") {
		t.Fatalf("after the restart: %q", got)
	}
	if m, _ := filepath.Glob(filepath.Join(o.Outbox, "*.eml")); len(m) != 2 {
		t.Errorf("outbox %v", m)
	}
}

// TestAlertsJournalBusy: while another process holds the delivery journal (report deliver
// sending a large pack), the changes seen wait in order; once it is free each is told, a
// problem that came and went included.
func TestAlertsJournalBusy(t *testing.T) {
	db := testWarehouse(t)
	c := &clock{t: wib(t, "2026-12-01 08:00")}
	o := testOptions(t, db)
	o.Now = c.now
	s := &Scheduler{File: &File{Loc: jakarta(t)}, Options: o, Log: quiet,
		Alerts: &Alerter{To: []string{"ops@toko.example"}, Options: o, Log: quiet}}
	ctx := context.Background()
	s.Check(ctx, c.t) // the journal's states are read
	lock, err := duckfile.Acquire(JournalPath(db))
	if err != nil {
		t.Fatal(err)
	}
	s.SyncFinished(context.DeadlineExceeded, "", c.t)
	s.Check(ctx, c.t)
	s.SyncFinished(nil, "", c.t)
	s.Check(ctx, c.t)
	s.Check(ctx, c.t)
	if got := subjects(t, o); len(got) != 0 {
		t.Fatalf("sent while the journal was held: %q", got)
	}
	if err := lock.Release(); err != nil {
		t.Fatal(err)
	}
	s.Check(ctx, c.t)
	want := []string{"[billsync] PROBLEM: sync failed", "[billsync] RESOLVED: sync failed"}
	if got := subjects(t, o); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("sent %q, want %q", got, want)
	}
	if n := len(s.Alerts.queue); n != 0 {
		t.Errorf("%d changes still queued", n)
	}
}

// TestServiceClockAlert: a published sync under a service clock ahead of this machine's tells the
// operators once, naming both clocks and the offset; the clock right again, once more, saying so
// (on main the end said "It works again.").
func TestServiceClockAlert(t *testing.T) {
	mp := startMailpit(t, opsUser, opsPass, false)
	db := testWarehouse(t)
	c := &clock{t: wib(t, "2026-12-01 08:00")}
	ctx := context.Background()
	note := "Account toko: the service's clock (its Date header) read 2026-12-03 01:00 UTC when this machine's clock read " +
		"2026-12-01 01:00 UTC: 48h0m0s ahead of it."
	s, _ := daemonWithAlerts(t, db, mp, c)
	for range 2 {
		s.SyncClock(note)
		s.SyncFinished(nil, "toko", c.t)
		s.Check(ctx, c.t)
		c.t = c.t.Add(time.Minute)
	}
	s.SyncClock("")
	s.SyncFinished(nil, "", c.t)
	s.Check(ctx, c.t)
	want := []string{"[billsync] PROBLEM: partial sync", "[billsync] PROBLEM: the service's clock disagrees with this machine's",
		"[billsync] RESOLVED: partial sync", "[billsync] RESOLVED: the service's clock disagrees with this machine's"}
	if got := mp.subjects(t); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("sent:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for _, m := range mp.messages(t) {
		if strings.HasPrefix(m.Subject, "[billsync] PROBLEM: the service's clock") {
			if body := mp.message(t, m.ID).Text; !strings.Contains(body, note) {
				t.Errorf("the alert says:\n%s\nwant the note naming both clocks:\n%s", body, note)
			}
		}
		// the end says the clock is right again, not "It works again."
		if strings.HasPrefix(m.Subject, "[billsync] RESOLVED: the service's clock") {
			if body := mp.message(t, m.ID).Text; !strings.Contains(body, "The service's clock (its Date header) agrees with this machine's again") ||
				!strings.Contains(body, "keep those dates") {
				t.Errorf("the clock's alert ends with:\n%s\nwant it to say the clock agrees again and what stays", body)
			}
		}
	}
}

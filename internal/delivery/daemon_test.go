package delivery

import (
	"context"
	"github.com/billsync/billsync/internal/config"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

const closePack = `deliveries:
  - name: close
    reports: [aging, collections]
    schedule: "0 7 1 * *"
    as_of: end of last month
    late_window: 72h
    to: [finance@toko.example]
`

// clock is a settable now for the scheduler.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func wib(t *testing.T, s string) time.Time {
	t.Helper()
	loc := jakarta(t)
	v, err := time.ParseInLocation("2006-01-02 15:04", s, loc)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// syncedAt makes the warehouse's sync runs end at t: the reports' data is the test's, its
// sync time the simulated clock's.
func syncedAt(t *testing.T, db string, at time.Time) {
	t.Helper()
	execJournal(t, db, "UPDATE sync_runs SET finished_at = '"+at.UTC().Format(time.RFC3339)+"'::TIMESTAMPTZ")
}

func scheduler(t *testing.T, db, text string, c *clock) (*Scheduler, Options) {
	t.Helper()
	o := testOptions(t, db)
	o.Now = c.now
	f, err := Parse("test.yaml", []byte(text), jakarta(t))
	if err != nil {
		t.Fatal(err)
	}
	return &Scheduler{File: f, Options: o, Log: quiet}, o
}

func subjects(t *testing.T, o Options) []string {
	t.Helper()
	var out []string
	for _, p := range outbox(t, o) {
		for _, l := range strings.Split(readFile(t, p), "\r\n") {
			if s, ok := strings.CutPrefix(l, "Subject: "); ok {
				out = append(out, s)
			}
		}
	}
	return out
}

// TestDaemonMonthBoundary: the clock crosses from November into December; the close pack
// goes out exactly once, at 07:00 WIB on the 1st, as of 30 November.
func TestDaemonMonthBoundary(t *testing.T) {
	db := testWarehouse(t)
	syncedAt(t, db, wib(t, "2026-12-01 02:30"))
	c := &clock{}
	s, o := scheduler(t, db, closePack, c)
	ctx := context.Background()
	for _, at := range []string{"2026-11-30 12:00", "2026-11-30 23:59", "2026-12-01 00:00", "2026-12-01 06:59",
		"2026-12-01 07:00", "2026-12-01 07:01", "2026-12-01 09:00", "2026-12-02 07:00", "2026-12-03 23:00"} {
		c.t = wib(t, at)
		s.Check(ctx, c.t)
		if at < "2026-12-01 07:00" && len(outbox(t, o)) != 0 {
			t.Fatalf("sent before its time, at %s", at)
		}
	}
	got := subjects(t, o)
	if len(got) != 1 || got[0] != "Laporan close per 30 Nov 2026" {
		t.Fatalf("sent %q, want the close pack once, not late, not stale", got)
	}
	// A restart: the journal knows it was sent.
	s2, _ := scheduler(t, db, closePack, c)
	s2.Check(ctx, c.t)
	if n := len(outbox(t, o)); n != 1 {
		t.Errorf("after a restart %d messages", n)
	}
}

// TestDaemonLate: an occurrence missed while the daemon was down is sent within its
// late_window, marked late; one beyond it is reported, not sent.
func TestDaemonLate(t *testing.T) {
	db := testWarehouse(t)
	syncedAt(t, db, wib(t, "2026-12-01 02:30"))
	// The daemon ran in November, then was down over the 1st's 07:00.
	c := &clock{t: wib(t, "2026-11-30 12:00")}
	s, o := scheduler(t, db, closePack, c)
	s.Check(context.Background(), c.t)
	c.t = wib(t, "2026-12-02 10:00")
	s, _ = scheduler(t, db, closePack, c)
	s.Check(context.Background(), c.t)
	got := subjects(t, o)
	if len(got) != 1 || got[0] != "Laporan close per 30 Nov 2026 (terlambat)" {
		t.Fatalf("sent %q", got)
	}
	// Beyond the window (72h): February's first is missed by 4 days; November's was journaled.
	c.t = wib(t, "2027-01-05 10:00")
	alerts := &Alerter{To: []string{"ops@toko.example"}, Options: o, Log: quiet}
	s2, _ := scheduler(t, db, closePack, c)
	s2.Alerts = alerts
	s2.reportMissed(context.Background(), c.t)
	s2.Check(context.Background(), c.t)
	got = subjects(t, o)
	if len(got) != 2 || !strings.Contains(got[1], "1 delivery occurrences missed") && !strings.Contains(got[0], "1 delivery occurrences missed") {
		t.Fatalf("after missing January's: %q", got)
	}
}

// TestDaemonStaleWait: with no sync after the as-of date's end, the occurrence waits up to
// stale_wait, then goes out marked stale (not late: the delay was the wait) and the
// operators are told.
func TestDaemonStaleWait(t *testing.T) {
	db := testWarehouse(t)
	syncedAt(t, db, wib(t, "2026-11-30 02:30")) // before the end of 30 Nov
	c := &clock{}
	s, o := scheduler(t, db, closePack, c)
	s.Alerts = &Alerter{To: []string{"ops@toko.example"}, Options: o, Log: quiet}
	for _, at := range []string{"2026-12-01 07:00", "2026-12-01 08:30"} {
		c.t = wib(t, at)
		s.Check(context.Background(), c.t)
		if n := len(outbox(t, o)); n != 0 {
			t.Fatalf("sent while waiting for a sync, at %s", at)
		}
	}
	s.SyncFinished(context.DeadlineExceeded, "", wib(t, "2026-12-01 08:45"))
	c.t = wib(t, "2026-12-01 09:01")
	s.Check(context.Background(), c.t)
	got := strings.Join(subjects(t, o), "\n")
	for _, want := range []string{"[DATA BELUM TERBARU] Laporan close per 30 Nov 2026\n", "[billsync] PROBLEM: sync failed",
		"[billsync] delivery close as of 2026-11-30 went out stale"} {
		if !strings.Contains(got+"\n", want) {
			t.Errorf("messages lack %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "terlambat") {
		t.Error("marked late for waiting on a sync")
	}
	es, _ := List(context.Background(), JournalPath(db), "close", 5)
	if len(es) != 1 || !strings.Contains(es[0].Stale, "sinkronisasi terakhir gagal") {
		t.Errorf("journal %+v", es)
	}
}

const childEnv = "BILLSYNC_DELIVERY_TEST_CHILD"

// childMain is a daemon killed with SIGKILL around the send (BILLSYNC_DELIVERY_TEST_CHILD =
// before: after the journal's row, before the message leaves; after: once it left).
func childMain(kind string) int {
	kill := func() { syscall.Kill(os.Getpid(), syscall.SIGKILL) }
	switch kind {
	case "before":
		testBeforeSend = kill
	case "after":
		testAfterAccept = kill
	}
	db, outboxDir := os.Getenv("CHILD_DB"), os.Getenv("CHILD_OUTBOX")
	loc, _ := time.LoadLocation("Asia/Jakarta")
	f, err := Parse("test.yaml", []byte(closePack), loc)
	if err != nil {
		return 3
	}
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC) // 07:00 WIB, when the daemon started
	o := Options{Report: config.Report{TZ: config.MustZone(loc.String()), ReportsOut: outboxDir + "/.."}, DB: db, Outbox: outboxDir, From: "billsync@toko.example",
		Log: quiet, Now: func() time.Time { return now }}
	s := &Scheduler{File: f, Options: o, Log: quiet}
	s.Check(context.Background(), now)
	return 4 // not killed
}

// TestDaemonKilled: a daemon killed with SIGKILL just before or just after the message left
// loses no occurrence; the restarted one sends it once more, marked "(dikirim ulang)", and
// then never again.
func TestDaemonKilled(t *testing.T) {
	for _, kind := range []string{"before", "after"} {
		t.Run(kind, func(t *testing.T) {
			db := testWarehouse(t)
			syncedAt(t, db, wib(t, "2026-12-01 02:30"))
			c := &clock{t: wib(t, "2026-12-01 07:05")}
			s, o := scheduler(t, db, closePack, c)
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), childEnv+"="+kind, "CHILD_DB="+db, "CHILD_OUTBOX="+o.Outbox)
			err := cmd.Run()
			if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
				t.Fatalf("child was not killed: %v", err)
			}
			sentBefore := len(outbox(t, o))
			if want := map[string]int{"before": 0, "after": 1}[kind]; sentBefore != want {
				t.Fatalf("%d messages left by the killed daemon, want %d", sentBefore, want)
			}
			s.Check(context.Background(), c.t)
			c.t = wib(t, "2026-12-01 08:00")
			s.Check(context.Background(), c.t)
			got := subjects(t, o)
			if len(got) != sentBefore+1 || !strings.Contains(strings.Join(got, "\n"), "Laporan close per 30 Nov 2026 (dikirim ulang)") {
				t.Fatalf("after the restart: %q", got)
			}
			es, _ := List(context.Background(), JournalPath(db), "close", 5)
			if len(es) != 2 || es[0].State != "outbox" || es[0].Kind != "resend" || es[1].State != "unknown" ||
				es[0].MessageID != es[1].MessageID {
				t.Errorf("journal %+v", es)
			}
		})
	}
}

// TestAlertsOncePerChange: the operators hear once when a problem starts and once when it
// ends, however many checks and syncs see it meanwhile.
func TestAlertsOncePerChange(t *testing.T) {
	db := testWarehouse(t)
	syncedAt(t, db, wib(t, "2026-12-01 01:00")) // the warehouse's last success: hours count from it
	c := &clock{t: wib(t, "2026-12-01 02:00")}
	s, o := scheduler(t, db, closePack, c)
	s.NoSyncAlert = 3 * time.Hour
	s.Alerts = &Alerter{To: []string{"ops@toko.example"}, Options: o, Log: quiet}
	ctx := context.Background()
	for _, step := range []struct {
		at   string
		sync string // "", "ok" or "fail"
	}{
		{"2026-12-01 02:00", ""}, {"2026-12-01 04:00", "fail"}, {"2026-12-01 04:30", "fail"},
		{"2026-12-01 05:30", ""}, {"2026-12-01 06:00", ""}, {"2026-12-01 06:30", "ok"}, {"2026-12-01 06:31", "ok"},
	} {
		c.t = wib(t, step.at)
		switch step.sync {
		case "fail":
			s.SyncFinished(context.DeadlineExceeded, "", c.t)
		case "ok":
			s.SyncFinished(nil, "", c.t)
		}
		s.Check(ctx, c.t)
	}
	var alerts []string
	for _, sub := range subjects(t, o) {
		if strings.HasPrefix(sub, "[billsync]") {
			alerts = append(alerts, sub)
		}
	}
	want := []string{"[billsync] PROBLEM: sync failed", "[billsync] PROBLEM: no successful sync for more than 3h0m0s",
		"[billsync] RESOLVED: sync failed", "[billsync] RESOLVED: no successful sync for more than 3h0m0s"}
	if strings.Join(alerts, "\n") != strings.Join(want, "\n") {
		t.Errorf("alerts:\n%s\nwant:\n%s", strings.Join(alerts, "\n"), strings.Join(want, "\n"))
	}
}

// TestDaemonFirstStart: a new install's daemon starts at 10:00 with no warehouse. Nothing is
// sent and nobody alerted until its first sync published one (no "PROBLEM: delivery failed"
// about a warehouse that cannot exist yet); the 07:00 occurrence of that morning, before the
// install, is owed to nobody; the 10:30 one, due while the first sync ran, goes out after it,
// fresh and not late; a restart the next day keeps the install's start.
func TestDaemonFirstStart(t *testing.T) {
	const file = `deliveries:
  - name: daily
    reports: [aging]
    schedule: "0 7 * * *"
    as_of: yesterday
    to: [finance@toko.example]
  - name: morning
    reports: [aging]
    schedule: "30 10 * * *"
    as_of: today
    to: [finance@toko.example]
`
	db := testWarehouse(t)
	later := db + ".later"
	if err := os.Rename(db, later); err != nil {
		t.Fatal(err)
	}
	c := &clock{t: wib(t, "2026-12-01 10:00")}
	s, o := scheduler(t, db, file, c)
	s.NoSyncAlert = 30 * time.Minute
	s.Alerts = &Alerter{To: []string{"ops@toko.example"}, Options: o, Log: quiet}
	ctx := context.Background()
	for _, at := range []string{"2026-12-01 10:00", "2026-12-01 10:01", "2026-12-01 10:31", "2026-12-01 10:39"} {
		c.t = wib(t, at)
		s.Check(ctx, c.t)
		if got := subjects(t, o); len(got) != 0 {
			t.Fatalf("at %s, before the first sync: %q", at, got)
		}
	}
	if err := os.Rename(later, db); err != nil {
		t.Fatal(err)
	}
	syncedAt(t, db, wib(t, "2026-12-01 10:40"))
	s.SyncFinished(nil, "", wib(t, "2026-12-01 10:40"))
	c.t = wib(t, "2026-12-01 10:41")
	s.Check(ctx, c.t)
	if got := subjects(t, o); len(got) != 1 || got[0] != "Laporan morning per 1 Des 2026" {
		t.Fatalf("after the first sync: %q, want the 10:30 occurrence only, fresh, not late", got)
	}
	syncedAt(t, db, wib(t, "2026-12-02 02:30"))
	c.t = wib(t, "2026-12-02 07:00")
	s2, _ := scheduler(t, db, file, c)
	s2.Alerts = s.Alerts
	s2.Check(ctx, c.t)
	got := subjects(t, o)
	if len(got) != 2 || got[1] != "Laporan daily per 1 Des 2026" && got[0] != "Laporan daily per 1 Des 2026" {
		t.Fatalf("the next morning: %q", got)
	}
	for _, sub := range got {
		if strings.Contains(sub, "[billsync]") {
			t.Errorf("an alert: %q", sub)
		}
	}
}

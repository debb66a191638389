package delivery

import (
	"context"
	"strings"
	"testing"
)

// TestAsOfRulesCanBeMet: every as-of rule, with the newest sync finished before the delivery's
// time (the message goes out fresh at once) and with one finished after it (the daemon waits
// for it, then sends fresh, not late). A delivery as of today after the morning's sync is not
// stale: its figures are as of the newest sync of the day, which no sync can make complete
// before midnight. 1 December 2026 is a Tuesday.
func TestAsOfRulesCanBeMet(t *testing.T) {
	for _, tc := range []struct {
		rule, asOf string // the rule and the date it gives at 07:00 WIB on 1 December
		old        string // a sync too early for the as-of date
	}{
		{"today", "1 Des 2026", "2026-11-30 23:00"},
		{"yesterday", "30 Nov 2026", "2026-11-30 23:00"},
		{"end of last week", "29 Nov 2026", "2026-11-29 22:00"},
		{"end of last month", "30 Nov 2026", "2026-11-30 23:00"},
		{"2026-11-15", "15 Nov 2026", "2026-11-15 12:00"},
	} {
		file := `deliveries:
  - name: pack
    reports: [aging]
    schedule: "0 7 * * *"
    as_of: ` + tc.rule + `
    to: [finance@toko.example]
`
		want := "Laporan pack per " + tc.asOf
		t.Run(tc.rule+"/sync before", func(t *testing.T) {
			db := testWarehouse(t)
			syncedAt(t, db, wib(t, "2026-12-01 02:30"))
			c := &clock{t: wib(t, "2026-12-01 07:00")}
			s, o := scheduler(t, db, file, c)
			s.Check(context.Background(), c.t)
			if got := subjects(t, o); len(got) != 1 || got[0] != want {
				t.Fatalf("sent %q, want %q", got, want)
			}
		})
		t.Run(tc.rule+"/sync after", func(t *testing.T) {
			db := testWarehouse(t)
			syncedAt(t, db, wib(t, tc.old))
			c := &clock{t: wib(t, "2026-12-01 07:00")}
			s, o := scheduler(t, db, file, c)
			s.Check(context.Background(), c.t)
			if got := subjects(t, o); len(got) != 0 {
				t.Fatalf("sent %q before a sync reflecting its as-of date", got)
			}
			syncedAt(t, db, wib(t, "2026-12-01 08:00"))
			s.SyncFinished(nil, "", wib(t, "2026-12-01 08:00"))
			c.t = wib(t, "2026-12-01 08:01")
			s.Check(context.Background(), c.t)
			if got := subjects(t, o); len(got) != 1 || got[0] != want {
				t.Fatalf("sent %q, want %q (fresh, not late: it waited for the sync)", got, want)
			}
		})
	}
}

// TestAsOfTodayMaxAge: as of today, a sync of the day older than max_age (default 12h) is
// stale, and so is one of the day before, with the reason saying since when a sync was
// wanted; a stale one goes out marked after stale_wait.
func TestAsOfTodayMaxAge(t *testing.T) {
	const file = `deliveries:
  - name: evening
    reports: [aging]
    schedule: "0 19 * * *"
    as_of: today
    locale: en
    to: [finance@toko.example]
`
	db := testWarehouse(t)
	syncedAt(t, db, wib(t, "2026-12-01 02:30")) // 16.5 hours before 19:00
	c := &clock{t: wib(t, "2026-12-01 19:00")}
	s, o := scheduler(t, db, file, c)
	s.Check(context.Background(), c.t)
	if got := subjects(t, o); len(got) != 0 {
		t.Fatalf("sent %q while waiting for a sync", got)
	}
	c.t = wib(t, "2026-12-01 21:01") // stale_wait (2h) is over
	s.Check(context.Background(), c.t)
	got := subjects(t, o)
	if len(got) != 1 || got[0] != "[STALE DATA] evening reports as of 1 Dec 2026" {
		t.Fatalf("sent %q", got)
	}
	es, _ := List(context.Background(), JournalPath(db), "evening", 1)
	if len(es) != 1 || !strings.Contains(es[0].Stale, "no sync of account main finished since 1 Dec 2026 09:01") ||
		!strings.Contains(es[0].Stale, "max_age 12 hours") {
		t.Errorf("journal %+v", es)
	}
}

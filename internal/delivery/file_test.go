package delivery

import (
	"strings"
	"testing"
	"time"
)

func jakarta(t *testing.T) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation("Asia/Jakarta")
	if err != nil {
		t.Fatal(err)
	}
	return loc
}

// TestExampleFile: the shipped examples parse, and the month-end pack fires on the 1st at 07:00
// WIB as of the last day of the month before.
func TestExampleFile(t *testing.T) {
	loc := jakarta(t)
	f, err := Load("../../deliveries.example.yaml", loc)
	if err != nil {
		t.Fatal(err)
	}
	daily, err := f.Find("daily")
	if err != nil {
		t.Fatal(err)
	}
	me, err := f.Find("month-end")
	if err != nil {
		t.Fatal(err)
	}
	next := me.Next(time.Date(2026, 11, 26, 12, 0, 0, 0, loc))
	if want := time.Date(2026, 12, 1, 7, 0, 0, 0, loc); !next.Equal(want) {
		t.Errorf("month-end next = %v, want %v", next, want)
	}
	asOf, err := AsOfDate(me.AsOf, next, loc)
	if err != nil || asOf.Format(time.DateOnly) != "2026-11-30" {
		t.Errorf("month-end as of = %v, %v; want 2026-11-30", asOf, err)
	}
	if me.Format != "both" || me.LateWindow.Duration != 72*time.Hour || me.MaxAttachMB != DefaultMaxAttachMB {
		t.Errorf("month-end = %+v", me)
	}
	if daily.Format != "xlsx" || daily.Locale != "id" || daily.StaleWait.Duration != DefaultStaleWait {
		t.Errorf("daily defaults = %+v", daily)
	}
	next = daily.Next(time.Date(2026, 11, 26, 7, 0, 0, 0, loc))
	if want := time.Date(2026, 11, 27, 7, 0, 0, 0, loc); !next.Equal(want) {
		t.Errorf("daily next = %v, want %v", next, want)
	}
}

func TestAsOfRules(t *testing.T) {
	loc := jakarta(t)
	// Wednesday 2 Dec 2026, 06:30 WIB is still 1 Dec in UTC: the rules read the date in loc.
	at := time.Date(2026, 12, 1, 23, 30, 0, 0, time.UTC)
	for rule, want := range map[string]string{
		"today": "2026-12-02", "yesterday": "2026-12-01", "end of last week": "2026-11-29",
		"End of  last month": "2026-11-30", "2026-10-15": "2026-10-15",
	} {
		got, err := AsOfDate(rule, at, loc)
		if err != nil || got.Format(time.DateOnly) != want {
			t.Errorf("%q: %v, %v; want %s", rule, got, err, want)
		}
	}
	// On a Sunday the week that ended is the one before; on a Monday it ended yesterday.
	for day, want := range map[int]string{29: "2026-11-22", 30: "2026-11-29"} {
		got, _ := AsOfDate("end of last week", time.Date(2026, 11, day, 12, 0, 0, 0, loc), loc)
		if got.Format(time.DateOnly) != want {
			t.Errorf("end of last week on Nov %d = %s, want %s", day, got.Format(time.DateOnly), want)
		}
	}
	for _, bad := range []string{"", "tomorrow", "2026-13-01", "last month"} {
		if _, err := AsOfDate(bad, at, loc); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

// TestParseErrors: each mistake is reported with the file and line where it is.
func TestParseErrors(t *testing.T) {
	loc := jakarta(t)
	good := "  - name: d\n    reports: [aging]\n    schedule: \"0 7 * * *\"\n    as_of: yesterday\n    to: [a@example.com]\n"
	for _, tc := range []struct {
		name, text, want string
	}{
		{"unknown top field", "deliverys:\n" + good, "x.yaml:1: unknown field \"deliverys\""},
		{"empty", "deliveries: []\n", "x.yaml:1: deliveries: want a list"},
		{"unknown field", "deliveries:\n" + good + "    subjekt: hi\n", "x.yaml:7: unknown field \"subjekt\""},
		{"bad cron", "deliveries:\n" + strings.Replace(good, "0 7 * * *", "0 25 * * *", 1), "x.yaml:4: cron spec \"0 25 * * *\""},
		{"tz prefix", "deliveries:\n" + strings.Replace(good, "0 7 * * *", "CRON_TZ=UTC 0 7 * * *", 1), "x.yaml:4: cron spec"},
		{"unknown report", "deliveries:\n" + strings.Replace(good, "[aging]", "[aging, agin]", 1), "x.yaml:3: no report named \"agin\""},
		{"bad address", "deliveries:\n" + strings.Replace(good, "a@example.com", "finance.example.com", 1), "x.yaml:6: to: address \"finance.example.com\""},
		{"bad as_of", "deliveries:\n" + strings.Replace(good, "yesterday", "last friday", 1), "x.yaml:5: as_of \"last friday\""},
		{"bad date", "deliveries:\n" + strings.Replace(good, "yesterday", "2026-02-30", 1), "x.yaml:5: as_of \"2026-02-30\""},
		{"bad format", "deliveries:\n" + good + "    format: pdf\n", "x.yaml:7: format \"pdf\""},
		{"bad locale", "deliveries:\n" + good + "    locale: fr\n", "x.yaml:7:"},
		{"bad csv dialect", "deliveries:\n" + good + "    csv_dialect: excel\n", "x.yaml:7: CSV dialect \"excel\": want rfc or id"},
		{"bad window", "deliveries:\n" + good + "    late_window: 3 days\n", "line 7: \"3 days\": want a duration"},
		{"missing to", "deliveries:\n" + strings.Replace(good, "    to: [a@example.com]\n", "", 1), "x.yaml:2: to: want at least one address"},
		{"twice", "deliveries:\n" + good + good, "x.yaml:7: delivery \"d\" declared twice (first on line 2)"},
		{"not a list", "deliveries:\n" + strings.Replace(good, "[a@example.com]", "a@example.com", 1), "x.yaml:2:"},
		{"bad var", "deliveries:\n" + good + "    vars: {nope: 1}\n", "x.yaml:3:"},
		{"bad name", "deliveries:\n" + strings.Replace(good, "name: d", "name: Month End", 1), "x.yaml:2: name \"Month End\""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("x.yaml", []byte(tc.text), loc)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want it to contain %q", err, tc.want)
			}
		})
	}
	if _, err := Parse("x.yaml", []byte("deliveries:\n"+good), loc); err != nil {
		t.Errorf("good file: %v", err)
	}
}

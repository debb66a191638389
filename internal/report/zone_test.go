package report

import (
	"context"
	"testing"
	"time"

	"github.com/billsync/billsync/internal/warehouse"
)

// TestLocalTimeIsTimezone: with the interval proveFixedZone proves set on the connection, the
// warehouse's local_time() gives what ICU's timezone() gives, for instants inside the interval
// (shifted) and outside it (ICU), in zones with and without daylight saving time.
func TestLocalTimeIsTimezone(t *testing.T) {
	w := testWorld(t)
	ctx := context.Background()
	db, err := warehouse.OpenReadOnly(ctx, w.db)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, c := range []struct {
		tz, asOf string
		since    time.Time // the start of the interval proven; zero: not checked
	}{
		{"Asia/Jakarta", "2026-06-30", time.Date(1963, 12, 31, 16, 30, 0, 0, time.UTC)},
		{"UTC", "2026-06-30", zoneProofFirst},
		{"Asia/Kolkata", "2026-01-15", time.Date(1945, 10, 14, 17, 30, 0, 0, time.UTC)},
		{"Europe/Berlin", "2026-06-30", time.Date(2026, 3, 29, 1, 0, 0, 0, time.UTC)},
		{"Europe/Berlin", "2026-01-15", time.Date(2025, 10, 26, 1, 0, 0, 0, time.UTC)},
		{"Australia/Lord_Howe", "2026-06-30", time.Time{}},
		{"America/Sao_Paulo", "2026-06-30", time.Time{}},
	} {
		t.Run(c.tz+"/"+c.asOf, func(t *testing.T) {
			loc, err := time.LoadLocation(c.tz)
			if err != nil {
				t.Fatal(err)
			}
			day, _ := time.ParseInLocation(time.DateOnly, c.asOf, loc)
			z, err := proveFixedZone(ctx, db, c.tz, loc, day)
			if err != nil {
				t.Fatal(err)
			}
			if z == nil {
				t.Fatal("nothing proven: the test proves nothing")
			}
			if !c.since.IsZero() && !z.from.Equal(c.since) {
				t.Errorf("proven from %v, want %v", z.from, c.since)
			}
			conn, err := db.Conn(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			if err := prepareConn(ctx, conn, false); err != nil {
				t.Fatal(err)
			}
			if err := setVar(ctx, conn, "tz", "VARCHAR", c.tz); err != nil {
				t.Fatal(err)
			}
			if err := z.setVars(ctx, conn); err != nil {
				t.Fatal(err)
			}
			// every 23 h 7 min 7 s from 1850 to 2150, and the interval's edges
			var n, fast, differ int64
			err = conn.QueryRowContext(ctx, `
				WITH i AS (
				    SELECT make_timestamptz(range) AS t FROM range(epoch_us(TIMESTAMPTZ '1850-01-01 00:00:00+00'), epoch_us(TIMESTAMPTZ '2150-01-01 00:00:00+00'), 83227000000)
				    UNION ALL SELECT make_timestamptz(getvariable('tz_fixed_from_us') + d) FROM range(-1, 2) r(d)
				    UNION ALL SELECT make_timestamptz(getvariable('tz_fixed_until_us') + d) FROM range(-1, 2) r(d)
				    UNION ALL SELECT NULL)
				SELECT count(*),
				       count(*) FILTER (epoch_us(t) >= getvariable('tz_fixed_from_us') AND epoch_us(t) < getvariable('tz_fixed_until_us')),
				       count(*) FILTER (local_time(t, getvariable('tz')) IS DISTINCT FROM timezone(getvariable('tz'), t))
				FROM i`).Scan(&n, &fast, &differ)
			if err != nil {
				t.Fatal(err)
			}
			if differ != 0 {
				t.Errorf("local_time differs from timezone at %d of %d instants", differ, n)
			}
			if fast == 0 || fast == n {
				t.Errorf("%d of %d instants inside the proven interval: both paths must be tried", fast, n)
			}
		})
	}
}

// TestZoneProofChecksICU: an interval or offset that ICU does not confirm is refused.
func TestZoneProofChecksICU(t *testing.T) {
	w := testWorld(t)
	ctx := context.Background()
	db, err := warehouse.OpenReadOnly(ctx, w.db)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	jakarta := func(from time.Time, offset time.Duration) *fixedZone {
		return &fixedZone{zone: "Asia/Jakarta", from: from, until: zoneProofLast, offset: offset}
	}
	since1964 := time.Date(1963, 12, 31, 16, 30, 0, 0, time.UTC)
	for _, c := range []struct {
		name string
		z    *fixedZone
		want bool
	}{
		{"as proven", jakarta(since1964, 7*time.Hour), true},
		{"one microsecond earlier (+07:30 then)", jakarta(since1964.Add(-time.Microsecond), 7*time.Hour), false},
		{"a year earlier", jakarta(since1964.AddDate(-1, 0, 0), 7*time.Hour), false},
		{"another offset", jakarta(since1964, 8*time.Hour), false},
		{"another zone", &fixedZone{zone: "Asia/Makassar", from: since1964, until: zoneProofLast, offset: 7 * time.Hour}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := icuAgrees(ctx, db, c.z)
			if err != nil {
				t.Fatal(err)
			}
			if got != c.want {
				t.Errorf("icuAgrees = %v, want %v", got, c.want)
			}
		})
	}
}

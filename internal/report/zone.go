package report

import (
	"context"
	"database/sql"
	_ "embed"
	"fmt"
	"strconv"
	"time"
)

//go:embed zone.sql
var zoneSQL string

// fixedZone is an interval of instants over which the reports' time zone has one UTC offset,
// proven at run time. The local_time() macro then shifts an instant inside it by the offset
// instead of asking ICU's timezone(), whose calendar is dear per value, and the reports convert a
// few dates per record.
type fixedZone struct {
	zone        string
	from, until time.Time // [from, until)
	offset      time.Duration
}

// The proof covers no instant outside these years: a value beyond them keeps ICU's timezone().
var (
	zoneProofFirst = time.Date(1900, 1, 1, 0, 0, 0, 0, time.UTC)
	zoneProofLast  = time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC)
)

// proveFixedZone finds the interval around at in which loc keeps one offset by Go's zone database
// (time.Time.ZoneBounds: Asia/Jakarta's +07:00 since 1964), then asks DuckDB's ICU, which has its
// own copy of the zone database, for the offset every 7 days across it and at its last instant:
// only an interval both agree on is used. Nil (local_time() stays timezone()) when they disagree.
func proveFixedZone(ctx context.Context, db *sql.DB, tz string, loc *time.Location, at time.Time) (*fixedZone, error) {
	t := at.In(loc)
	start, end := t.ZoneBounds()
	_, off := t.Zone()
	z := &fixedZone{zone: tz, from: zoneProofFirst, until: zoneProofLast, offset: time.Duration(off) * time.Second}
	if start.After(z.from) {
		z.from = start
	}
	if !end.IsZero() && end.Before(z.until) {
		z.until = end
	}
	if !z.from.Before(z.until) {
		return nil, nil
	}
	ok, err := icuAgrees(ctx, db, z)
	if err != nil || !ok {
		return nil, err
	}
	return z, nil
}

// icuAgrees says whether ICU gives z's offset throughout z's interval (sampled as zone.sql says).
func icuAgrees(ctx context.Context, db *sql.DB, z *fixedZone) (bool, error) {
	var checked, differ int64
	err := db.QueryRowContext(ctx, zoneSQL, z.zone, z.offset.Microseconds(), z.from.UnixMicro(), z.until.UnixMicro()).Scan(&checked, &differ)
	if err != nil {
		return false, fmt.Errorf("check time zone %s against ICU: %w", z.zone, err)
	}
	return checked > 0 && differ == 0, nil
}

// setVars hands the proven interval to local_time() on conn: the variables queries/macros/local_time.sql names.
func (z *fixedZone) setVars(ctx context.Context, conn *sql.Conn) error {
	for _, v := range []struct{ name, typ, value string }{
		{"tz_fixed_zone", "VARCHAR", z.zone},
		{"tz_fixed_from_us", "BIGINT", strconv.FormatInt(z.from.UnixMicro(), 10)},
		{"tz_fixed_until_us", "BIGINT", strconv.FormatInt(z.until.UnixMicro(), 10)},
		{"tz_fixed_offset_us", "BIGINT", strconv.FormatInt(z.offset.Microseconds(), 10)},
	} {
		if err := setVar(ctx, conn, v.name, v.typ, v.value); err != nil {
			return err
		}
	}
	return nil
}

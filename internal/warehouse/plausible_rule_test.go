package warehouse

import (
	"database/sql"
	"fmt"
	"testing"
	"time"
)

// TestImplausibleTimeMatchesMerge: the Go rule (ImplausibleTime, used where Go reads records itself) and the
// merge's bs_when judge every time alike and say the same words, so a time a sync refuses never settles a
// write job's outcome, and the other way round.
func TestImplausibleTimeMatchesMerge(t *testing.T) {
	b := startBuild(t, newPath(t))
	server := time.Date(2026, 11, 1, 3, 0, 0, 0, time.UTC)
	ms := server.UnixMilli()
	for _, raw := range []string{fmt.Sprint(ms), fmt.Sprint(ms / 1000), "0", fmt.Sprint(ms * 1000), "946684799999", "946684800000",
		fmt.Sprint(ms + 24*3_600_000), fmt.Sprint(ms + 24*3_600_000 + 1000), "1999-12-31T23:59:59Z", "2999-01-01T00:00:00.000Z",
		"2026-11-01T10:00:00+0700", "1970-01-21T06:00:00Z"} {
		var v sql.NullTime
		var sqlMsg sql.NullString
		if err := b.DB().QueryRow(`SELECT bs_ts(?::VARCHAR), bs_when('createdAt', ?::VARCHAR, bs_ts(?::VARCHAR), ?::TIMESTAMPTZ, ?::VARCHAR)`,
			raw, raw, raw, ServiceClockBound(server).Latest, ServiceClockBound(server).Clocks).Scan(&v, &sqlMsg); err != nil {
			t.Fatal(err)
		}
		if !v.Valid {
			t.Fatalf("%s: bs_ts read nothing", raw)
		}
		shown := raw
		if _, err := fmt.Sscan(raw, new(int64)); err != nil || fmt.Sprint(mustInt(raw)) != raw {
			shown = fmt.Sprintf("%q", raw)
		}
		if got := ImplausibleTime("createdAt", shown, v.Time, server); got != sqlMsg.String {
			t.Errorf("%s: Go says %q, the merge %q", raw, got, sqlMsg.String)
		}
	}
}

func mustInt(s string) int64 {
	var n int64
	fmt.Sscan(s, &n)
	return n
}

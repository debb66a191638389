package clitest

import (
	"slices"
	"testing"
	"time"
)

func TestUnzoned(t *testing.T) {
	jkt, err := time.LoadLocation("Asia/Jakarta")
	if err != nil {
		t.Fatal(err)
	}
	text := `started 2026-11-29 07:00 WIB ok
2026-11-29T07:00:00.000+07:00 ok
20261129T070000.123456+0700_daily_2026-11-28.eml ok
as of 2026-11-28 ok (a date)
2026-11-29 00:00:05 bad
2026-11-29 00:00 UTC bad
2026-11-29T00:00:00Z bad
20261129T000000.123456Z_daily.eml bad
20261129T000000Z bad`
	got := Unzoned(text, jkt, time.Now())
	want := []string{"2026-11-29 00:00:05", "2026-11-29 00:00 UTC", "2026-11-29T00:00:00Z", "20261129T000000.123456Z", "20261129T000000Z"}
	if !slices.Equal(got, want) {
		t.Errorf("got %q\nwant %q", got, want)
	}
}

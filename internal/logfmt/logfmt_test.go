package logfmt

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
	"time"
)

func TestDurationsInJSON(t *testing.T) {
	for _, tc := range []struct {
		d    time.Duration
		want string
	}{
		{33 * time.Millisecond, `"took":"33ms"`},
		{1234567 * time.Microsecond, `"took":"1.235s"`},
		{1500 * time.Microsecond, `"took":"1.5ms"`},
		{0, `"took":"0s"`},
	} {
		var buf bytes.Buffer
		slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{ReplaceAttr: Durations})).Info("merged", "took", tc.d, "n", 3)
		if !strings.Contains(buf.String(), tc.want) || !strings.Contains(buf.String(), `"n":3`) {
			t.Errorf("%v logged as %s, want %s", tc.d, buf.String(), tc.want)
		}
	}
}

// TestTimesInTheZone: the record's time and a time attribute print as RFC 3339 with the
// configured zone's offset, in JSON and in text, never as UTC "Z" when the zone is Jakarta's;
// no zone yet (nil: the settings not read) keeps UTC rather than guess.
func TestTimesInTheZone(t *testing.T) {
	at := time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC) // 07:00 WIB
	for _, tc := range []struct {
		tz, want string
	}{
		{"Asia/Jakarta", "2026-11-29T07:00:00.000+07:00"},
		{"Asia/Makassar", "2026-11-29T08:00:00.000+08:00"},
		{"", "2026-11-29T00:00:00.000Z"},
	} {
		for _, json := range []bool{true, false} {
			var buf bytes.Buffer
			var loc *time.Location
			if tc.tz != "" {
				var err error
				if loc, err = time.LoadLocation(tc.tz); err != nil {
					t.Fatal(err)
				}
			}
			opts := &slog.HandlerOptions{ReplaceAttr: In(loc)}
			var h slog.Handler = slog.NewTextHandler(&buf, opts)
			if json {
				h = slog.NewJSONHandler(&buf, opts)
			}
			r := slog.NewRecord(at, slog.LevelInfo, "delivery sent", 0)
			r.AddAttrs(slog.Time("due", at), slog.Duration("took", 1500*time.Microsecond))
			if err := h.Handle(t.Context(), r); err != nil {
				t.Fatal(err)
			}
			out := buf.String()
			if strings.Count(out, tc.want) != 2 || !strings.Contains(out, "1.5ms") {
				t.Errorf("%s json=%v: %s\nwant the time and due as %s, took 1.5ms", tc.tz, json, out, tc.want)
			}
			if tc.tz == "Asia/Jakarta" && strings.Contains(out, "Z") {
				t.Errorf("%s: a UTC time in %s", tc.tz, out)
			}
		}
	}
}

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

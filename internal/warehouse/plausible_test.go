package warehouse

import (
	"fmt"
	"strings"
	"testing"

	"github.com/billsync/billsync/internal/entity"
)

// TestImplausibleTimes: a time that parses but cannot be right (epoch seconds, 0 or microseconds
// read as milliseconds, a date in 2999) is a validation error with its location, and nothing of
// the batch is merged; plausible times in every accepted form pass.
func TestImplausibleTimes(t *testing.T) {
	ms := t0.UnixMilli() - 3_600_000
	tests := []struct {
		entity  entity.Name
		field   string
		value   string
		problem string // "" = valid
	}{
		{entity.Customers, "createdAt", fmt.Sprint(ms / 1000), fmt.Sprintf("createdAt %d looks like epoch seconds, not milliseconds", ms/1000)},
		{entity.Customers, "createdAt", "0", "createdAt 0 is before 2000-01-01"},
		{entity.Customers, "createdAt", fmt.Sprint(ms * 1000), fmt.Sprintf("createdAt %d looks like epoch microseconds, not milliseconds", ms*1000)},
		{entity.Customers, "updatedAt", `"1999-12-31T23:59:59Z"`, `updatedAt "1999-12-31T23:59:59Z" is before 2000-01-01`},
		{entity.WebhookDeliveries, "createdAt", `"2999-01-01T00:00:00.000Z"`,
			`createdAt "2999-01-01T00:00:00.000Z" is more than a day after the run's clock (2026-06-01 05:00 UTC)`},
		{entity.CreditLedger, "createdAt", `"1970-01-21T06:00:00Z"`, `createdAt "1970-01-21T06:00:00Z" is before 2000-01-01`},
		{entity.Invoices, "createdAt", fmt.Sprint(t0.UnixMilli() + 25*3_600_000), "is more than a day after the run's clock"},
		{entity.Customers, "createdAt", fmt.Sprint(ms), ""},
		{entity.Customers, "createdAt", `"2026-06-01T10:00:00+0700"`, ""},
		{entity.Customers, "createdAt", fmt.Sprint(t0.UnixMilli() + 23*3_600_000), ""},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s %s %s", tt.entity, tt.field, tt.value), func(t *testing.T) {
			b := startBuild(t, newPath(t))
			run := startRun(t, b, "acct")
			rec := fmt.Sprintf(`{"id":"r1","%s":%s}`, tt.field, tt.value)
			if tt.field != "createdAt" {
				rec = fmt.Sprintf(`{"id":"r1","createdAt":%d,"%s":%s}`, ms, tt.field, tt.value)
			}
			_, err := tryLoad(b, tt.entity, run, t0, false, `{"id":"ok","createdAt":`+fmt.Sprint(ms)+`}`, rec)
			if tt.problem == "" {
				if err != nil {
					t.Fatalf("a plausible time refused: %v", err)
				}
				return
			}
			want := fmt.Sprintf("%s page 1 item 1 (id r1): ", tt.entity)
			if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), tt.problem) ||
				!strings.Contains(err.Error(), "nothing merged") {
				t.Fatalf("error %v\nwant %q ... %q", err, want, tt.problem)
			}
			var n int
			b.DB().QueryRow(fmt.Sprintf("SELECT count(*) FROM %s", entityDefs[tt.entity].table)).Scan(&n)
			if n != 0 {
				t.Errorf("%d rows merged from a batch with an implausible time", n)
			}
		})
	}
}

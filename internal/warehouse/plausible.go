package warehouse

import (
	"fmt"
	"regexp"
	"strings"
	"time"
)

// The rule the merge applies to every time a record carries (bs_when in macros.sql), for Go code that
// reads records itself (the write jobs' reconciliation): a time before PlausibleFrom (epoch seconds or 0
// read as milliseconds land in 1970) or more than PlausibleAhead after the server's clock (epoch
// microseconds land in the year 57971) cannot be right. TestImplausibleTimeMatchesMerge holds the two
// equal.
var PlausibleFrom = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

// PlausibleAhead is how far past the server's clock a record's time may lie.
const PlausibleAhead = 24 * time.Hour

var (
	epochSecondsText = regexp.MustCompile(`^\d{9,10}$`)
	epochMicrosText  = regexp.MustCompile(`^\d{15,17}$`)
)

// ImplausibleTime says what is wrong with time t, read from the text shown (as the record wrote it: a
// number's digits, or a string with its quotes) for field, against the server's clock serverNow; "" when
// it is plausible. The words are bs_when's.
func ImplausibleTime(field, shown string, t, serverNow time.Time) string {
	digits := strings.Trim(strings.TrimSpace(shown), `"`)
	switch {
	case t.Before(PlausibleFrom):
		if epochSecondsText.MatchString(digits) {
			return fmt.Sprintf("%s %s looks like epoch seconds, not milliseconds", field, shown)
		}
		return fmt.Sprintf("%s %s is before 2000-01-01", field, shown)
	case t.After(serverNow.Add(PlausibleAhead)):
		if epochMicrosText.MatchString(digits) {
			return fmt.Sprintf("%s %s looks like epoch microseconds, not milliseconds", field, shown)
		}
		return fmt.Sprintf("%s %s is more than a day after the server's clock (%s)", field, shown,
			serverNow.UTC().Format("2006-01-02 15:04 UTC"))
	}
	return ""
}

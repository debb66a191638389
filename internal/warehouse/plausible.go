package warehouse

import (
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/billsync/billsync/internal/syncdata"
)

// The rule the merge applies to every time a record carries (bs_when in macros.sql), for Go code that
// reads records itself (the write jobs' reconciliation): a time before PlausibleFrom (epoch seconds or 0
// read as milliseconds land in 1970) or more than PlausibleAhead after the clocks (epoch microseconds
// land in the year 57971) cannot be right. A sync's clocks are the later of the service's (its Date
// header, when consistent) and this machine's: a record dated by a service whose clock runs ahead is
// stored as it is dated, and flagged (fetch's clock rule). TestImplausibleTimeMatchesMerge holds the
// two equal.
var PlausibleFrom = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

// PlausibleAhead is how far past the later of the run's clocks (the service's and this machine's) a record's time may lie.
const PlausibleAhead = 24 * time.Hour

var (
	epochSecondsText = regexp.MustCompile(`^\d{9,10}$`)
	epochMicrosText  = regexp.MustCompile(`^\d{15,17}$`)
)

// ImplausibleTime says what is wrong with time t, read from the text shown (as the record wrote it: a
// number's digits, or a string with its quotes) for field, against the service's clock serviceNow (its
// Date header); "" when it is plausible. The words are bs_when's.
func ImplausibleTime(field, shown string, t, serviceNow time.Time) string {
	return ImplausibleTimeBy(field, shown, t, ServiceClockBound(serviceNow))
}

// ServiceClockBound is the bound of a record's times a day after the service's clock now (its Date).
func ServiceClockBound(now time.Time) syncdata.TimeBound {
	return syncdata.TimeBound{Latest: now.Add(PlausibleAhead),
		Clocks: fmt.Sprintf("the service's clock (its Date header: %s)", ClockText(now))}
}

// RunClockBound is the bound a day after a run's observation time, for a run whose clock rule set
// none (the warehouse's own tests, a sink opened without fetch).
func RunClockBound(observed time.Time) syncdata.TimeBound {
	return syncdata.TimeBound{Latest: observed.Add(PlausibleAhead),
		Clocks: fmt.Sprintf("the run's clock (%s)", ClockText(observed))}
}

// ClockText shows a clock's time in messages, to the minute, in UTC.
func ClockText(t time.Time) string { return t.UTC().Format("2006-01-02 15:04 UTC") }

// ImplausibleTimeBy is ImplausibleTime against a bound (bs_when's latest and clocks).
func ImplausibleTimeBy(field, shown string, t time.Time, bound syncdata.TimeBound) string {
	digits := strings.Trim(strings.TrimSpace(shown), `"`)
	switch {
	case t.Before(PlausibleFrom):
		if epochSecondsText.MatchString(digits) {
			return fmt.Sprintf("%s %s looks like epoch seconds, not milliseconds", field, shown)
		}
		return fmt.Sprintf("%s %s is before 2000-01-01", field, shown)
	case t.After(bound.Latest):
		if epochMicrosText.MatchString(digits) {
			return fmt.Sprintf("%s %s looks like epoch microseconds, not milliseconds", field, shown)
		}
		return fmt.Sprintf("%s %s is more than a day after %s", field, shown, bound.Clocks)
	}
	return ""
}

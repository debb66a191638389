package syncdata

import "time"

// The reasons a customer's credit history is due, as the warehouse's queries name them, most
// important first (internal/warehouse/queries/credit_targets.sql; credit_never.sql gives never
// alone).
const (
	CreditNever    = "never"
	CreditTopup    = "topup"
	CreditSignal   = "signal"
	CreditBound    = "bound"
	CreditInterval = "interval"
	CreditAhead    = "ahead"
)

// CreditReasons are the Credit* reasons, most important first.
var CreditReasons = []string{CreditNever, CreditTopup, CreditSignal, CreditBound, CreditInterval, CreditAhead}

// CreditOwed says whether a run owes a read for this reason: left unread, the customer's credit is
// older than promised (the bound's hard limit, or a run late for a signal or billsync's own
// top-up). Never-read customers are the first sync's backlog, and an interval or a read ahead
// only comes early.
func CreditOwed(reason string) bool {
	return reason == CreditTopup || reason == CreditSignal || reason == CreditBound
}

// CreditTarget is a customer whose credit history should be fetched.
type CreditTarget struct {
	CustomerID  string
	Since       time.Time // fetch records from here; zero means the full history
	LastFetched time.Time // zero when never fetched
	// Reason is why it is due: one of the Credit* reasons above; ahead is read before its
	// bound to level the runs' reads.
	Reason string
}

// CreditPlan says when credit histories are due.
type CreditPlan struct {
	Now time.Time // the run's observation time
	// ServiceAhead is how far the service's clock is ahead of Now's clock: the run's offset when
	// it set the service's clock aside for this machine's, 0 when Now is the service's clock (or
	// the offset is unknown). The ledger's dates are compared with Now moved by it.
	ServiceAhead time.Duration
	// Overlap re-reads this much history before the last read, for entries that arrive late.
	Overlap time.Duration
	// Refresh is the hard staleness bound: every customer is read at least this often.
	Refresh time.Duration
	// MinInterval is the shortest adaptive interval between reads of a customer whose own
	// history says entries arrive often; zero means the warehouse's DefaultCreditMinInterval.
	MinInterval time.Duration
	// Hints are customers billsync itself sent credit to (job journal add-credit sends): one sent
	// after the customer's last read makes it due with reason topup, before every signal. Hints
	// of other accounts are ignored.
	Hints []CreditHint
}

// CreditHint says billsync sent credit to a customer of Account at At (the latest time recorded
// for the send or its outcome).
type CreditHint struct {
	Account, CustomerID string
	At                  time.Time
}

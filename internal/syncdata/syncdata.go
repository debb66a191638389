// Package syncdata holds the plain values a sync's reader (internal/fetch) and its writer (the
// warehouse build) pass each other: what a stream, a list pass or a run did, the conflicts a
// list sent, the customers whose credit history is due and why, and the failure of the writer.
// It imports nothing of billsync, so both sides depend on it and neither on the other.
package syncdata

import (
	"encoding/json"
	"time"
)

// Run is one account's sync run inside a build.
type Run struct {
	ID      int64
	Account string
	Resumed bool // the run was interrupted before and continues now
	// Clock is the clock an earlier attempt of a resumed run decided to store its times by;
	// zero when none did.
	Clock RunClock
	// Failure is what the run's previous attempt failed with (warehouse.FailureSignature), ""
	// when none.
	Failure string
}

// RunClock is the clock a run stores its times by: the service's (its Date header) or this
// machine's, and how far the service's clock was ahead when the run decided.
type RunClock struct {
	Source string // ClockService, ClockMachine, or "" when not decided yet
	Offset time.Duration
	// NoDate: the service's answers carried no Date header when the run decided, so how far its
	// clock was off is unknown (Offset 0, stored as NULL): nothing the run stored can be put on
	// the service's clock (the credit targets' interval waits for the bound).
	NoDate bool
}

// The sources of a run's times.
const (
	ClockService = "service"
	ClockMachine = "machine"
)

// StreamStats is what one stream (one endpoint walk) did in a run.
type StreamStats struct {
	Stream, Entity                    string
	Started, Finished                 time.Time
	Pages, Records, Requests, Retries int64
	Complete                          bool // the stream reached its end; a resume skips it
	Error                             string
}

// RunStats closes a run. Status is "succeeded", "failed" or "partial".
type RunStats struct {
	Status                     string
	Finished                   time.Time // zero means now
	Records, Requests, Retries int64
	Error                      string
}

// ListEnd is what the server announced about one pass over a list, as the pager saw it.
type ListEnd struct {
	Stream   string
	Expected int64 // records the server says the list holds (its total, or its page structure)
	Stable   bool  // the server's count did not move between the first and the last page
	// Conflicts are ids read twice in the pass with different contents.
	Conflicts []Conflict
	// Doubts say, located, why the pass cannot be proven whole whatever arrived: an envelope
	// that broke the spec or contradicted itself.
	Doubts []string
}

// Conflict is one id a list sent with two different contents in one run, and again when the list
// was paged once more; where each version came from is its page and item on path. FirstRaw is nil
// when the earlier version was not kept.
type Conflict struct {
	ID                    string
	Path                  string
	FirstPage, FirstIdx   int
	FirstRaw              json.RawMessage
	SecondPage, SecondIdx int
	SecondRaw             json.RawMessage
}

// TimeBound is the latest time a record of a run may carry (a day after the later of the
// service's clock and this machine's), and Clocks the words naming them with their times, for
// the message of a record dated after it: "is more than a day after <Clocks>".
type TimeBound struct {
	Latest time.Time
	Clocks string
}

// Flag kinds of data_quality_flags.
const (
	FlagKeyRedacted  = "api_key_redacted" // the record held the API key, stored redacted
	FlagServiceClock = "service_clock"    // the record is dated after this machine's clock by a service clock ahead
)

// Flag is one record the run stored but flags for data quality: its entity and id, the kind of
// flag, the field concerned, what was found (in words) and where it was read.
type Flag struct {
	Entity, ID, Kind, Field, Detail string
	Path                            string
	Page, Item                      int
}

// MergeResult counts what a merge did to the entity's table.
type MergeResult struct {
	Inserted, Updated, Unchanged, Deleted, Restored int64
}

// WriteError is a failure of the sink's writer. Writes are queued and merges pipelined, so it
// surfaces on whichever stream next calls the sink, not necessarily the stream whose write
// failed: its message names the write (the entity merged, the page staged) and a caller must
// not label it with its own stream, or a run failing the same way twice looks like two
// different failures.
type WriteError struct{ Err error }

func (e *WriteError) Error() string { return e.Err.Error() }
func (e *WriteError) Unwrap() error { return e.Err }

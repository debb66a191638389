package jobs

import (
	"fmt"
	"strings"
	"time"
)

// State is where an action stands; the journal keeps every transition.
type State string

// Action states. Sent is journaled before the request leaves, so a process killed mid-request leaves it
// sent: its outcome is unknown and it is reconciled by reading before anything is sent again.
const (
	Planned    State = "planned"     // stored with the plan, never sent
	Sent       State = "sent"        // request about to leave (or left); outcome not yet journaled
	Succeeded  State = "succeeded"   // the service confirmed it, or reconciliation found it applied
	Failed     State = "failed"      // the service refused it (4xx): never retried
	Unknown    State = "unknown"     // sent, outcome unknown (timeout, 5xx, reset); reconcile before any retry
	NotApplied State = "not_applied" // proven not applied (never left, 401/403/429, or reconciled absent): may be sent
	// Unresolved: reading could not prove whether it was applied. Never sent again automatically; a person
	// settles it with Journal.Resolve (syncer job resolve).
	Unresolved State = "unresolved"
)

// PlanOptions say what to plan.
type PlanOptions struct {
	Kind    Kind
	Input   string // .csv or .xlsx
	Account string // the warehouse account the rows refer to
	// SkipBlank is kept so existing command lines work: an email-fix row with a blank toEmail is always left out.
	SkipBlank bool
	// Again plans the file as a new job even when an identical plan exists (a repeated monthly top-up), and
	// lets every row repeat what billsync sent before (as repeat = yes on each row).
	Again bool
	// RepeatWindow is how far back a row is compared with what billsync sent; zero = DefaultRepeatWindow.
	RepeatWindow time.Duration

	Location *time.Location // zone of bare dates in the input and of the times in messages; nil = UTC
	Locale   string         // digit grouping of the change texts: id (default) or en
	Now      time.Time      // zero = time.Now()
	User     string         // zero = Login(), the OS account of this process's uid
	Host     string         // zero = the host name
}

// Plan is a validated, stored job.
type Plan struct {
	ID                string
	Kind              Kind
	Account           string
	Hash              string // sha256 of kind, account and every request
	Input             string
	InputSHA256       string
	CreatedAt         time.Time
	CreatedBy, Host   string
	WarehouseSyncedAt time.Time
	ApprovedAt        time.Time // zero when not approved
	ApprovedBy        string
	Approval          *Approval   // the latest approval with its target; nil when none recorded one
	Approvals         []*Approval // every approval with its target, oldest first
	Existing          bool        // planning found this identical plan already stored
	SkippedLines      []int       // email-fix lines left out because their toEmail is blank
	Again             bool        // planned with -again: every row may repeat what was sent before it was planned
	Actions           []*Action
	// start is the plan's first journal transition: sends journaled after it are ones the person did not see
	// when marking rows to repeat.
	start int64
}

// Action is one row of a plan with its latest journaled state.
type Action struct {
	Seq     int
	Line    int
	ID      string // idempotency key
	Target  string
	Change  string
	Request map[string]string
	Current map[string]string // warehouse values at plan time
	State   State
	Detail  map[string]string // response summary or reconciliation evidence
	Error   string
	Sends   int // times journaled as sent
	// AllowRepeat: the row may repeat what billsync sent before it was planned (repeat = yes, or -again).
	AllowRepeat bool
}

// PlanSummary is one line of the plan list.
type PlanSummary struct {
	ID        string
	Kind      Kind
	Account   string
	CreatedAt time.Time
	CreatedBy string
	Approved  bool
	Actions   int
	Counts
}

// Held: the row makes a change billsync already sent (or may have sent) for the account within the repeat
// window, from another plan. It is never sent unless the person marks the row (repeat = yes) or the whole file
// (-again) and plans it again. Holding is decided by content, never by the file, its name or its row order, so
// a sheet edited and planned again cannot send what was already sent.
const Held State = "held"

// Counts are a plan's rows by state, as people count them.
type Counts struct {
	Planned    int // still to send: planned, or proven not applied
	Held       int // repeats of an earlier send: not sent unless marked
	Sent       int // sent, outcome not yet known: the next apply reads before anything is sent again
	Succeeded  int
	Failed     int // refused by the service: never retried
	Unresolved int // a person must settle them (syncer job resolve)
	Skipped    int // input lines left out of the plan (email-fix rows with a blank toEmail)
}

// Counts tallies the plan's rows by state.
func (p *Plan) Counts() Counts {
	c := Counts{Skipped: len(p.SkippedLines)}
	for _, a := range p.Actions {
		c.add(a.State)
	}
	return c
}

func (c *Counts) add(st State) {
	switch st {
	case Planned, NotApplied:
		c.Planned++
	case Held:
		c.Held++
	case Sent, Unknown:
		c.Sent++
	case Succeeded:
		c.Succeeded++
	case Failed:
		c.Failed++
	case Unresolved:
		c.Unresolved++
	}
}

// String is "2 succeeded, 0 failed, 3 planned, …": succeeded and failed always, the rest when there are any.
func (c Counts) String() string {
	parts := []string{fmt.Sprintf("%d succeeded", c.Succeeded), fmt.Sprintf("%d failed", c.Failed)}
	for _, f := range []struct {
		n    int
		what string
	}{{c.Planned, "still planned"}, {c.Sent, "sent, outcome unknown (read by the next apply)"},
		{c.Unresolved, "unresolved (waiting for a person)"}, {c.Held, "held (repeats of earlier sends)"},
		{c.Skipped, "skipped"}} {
		if f.n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", f.n, f.what))
		}
	}
	return strings.Join(parts, ", ")
}

// Approval is a person's approval of a plan for the daemon, with the one target it was given for.
type Approval struct {
	At         time.Time
	By, Host   string
	Self       bool // the login that planned it approved it (BILLSYNC_ALLOW_SELF_APPROVE)
	Account    string
	BaseURL    string
	Production bool
}

// Run is one apply run of a plan, as the journal has it.
type Run struct {
	ID                int64 // journal-wide run id
	N                 int   // 1, 2, 3 … within the plan
	Started, Finished time.Time
	By, Host, BaseURL string
	Status            string
	Sent              int
	Error             string
}

// Resolution is a row a person settled by hand.
type Resolution struct {
	Seq   int
	At    time.Time
	State State
	By    string // the login
	Host  string // "" for one journaled before resolutions recorded it
	Why   string
}

// Kind names a job kind: what one row of a job file asks the service to do.
type Kind string

// request is what one action sends, as text keyed by API field name; stored as JSON in the plan.
type request map[string]string

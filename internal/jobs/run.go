package jobs

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/billsync/billsync/internal/api"
	"github.com/billsync/billsync/internal/config"
)

// ApplyOptions say how to send a plan.
type ApplyOptions struct {
	Client  *api.Client
	Account string // must be the plan's account
	BaseURL string // recorded in the run; the Client already uses it
	Max     int    // most actions this run may send; 0 = no cap
	// Production says the base URL is the live service; sending then needs Confirmed and an approval for
	// this service by a login other than the planner's (read-only kinds excepted).
	Production bool
	Confirmed  bool
	// AllowSelfApprove lets a self-approval count; RequireApproval makes every service need an approval.
	config.Approvals
	User, Host string // zero = Login() and the host name
	daemon     bool   // ApplyApproved: every plan it sends needs an approval for this service
	Log        *slog.Logger
	// Now is billsync's clock, on which every send is anchored; nil = time.Now. Tests run it on the
	// simulator's clock.
	Now func() time.Time
	// Settle is how long after a send a read that does not find the change is not yet proof of its absence;
	// 0 = DefaultSettle.
	Settle time.Duration
	// RepeatWindow is how far back each row is compared, right before it is sent, with what other plans sent;
	// zero = DefaultRepeatWindow.
	RepeatWindow time.Duration
	Location     *time.Location // zone of the times in messages (BILLSYNC_TZ); nil = UTC
	// Warehouse is the published warehouse file: before it is sent, each row is compared with the service's
	// own records as last synced there too (traces.go). "" compares only with the journal and, for top-ups,
	// with a fresh read of the customer's credit history.
	Warehouse string
}

// ErrNeedsConfirmation is returned, before anything is sent, when a plan would be sent to production
// without an explicit confirmation.
var ErrNeedsConfirmation = errors.New("this would change data on the production service: confirm explicitly to send")

// Run statuses.
const (
	RunCompleted             = "completed"               // every action succeeded
	RunCompletedWithFailures = "completed_with_failures" // every action is settled, some were refused
	RunIncomplete            = "incomplete"              // some actions are still to send, of unknown outcome or unresolved
	RunAborted               = "aborted"                 // stopped by an error (key, service, journal)
	RunNothingToDo           = "nothing_to_do"           // every action was already settled; no run recorded
	RunRefused               = "refused"                 // ApplyApproved: not approved for this service; no run recorded
)

// RunResult is what one Apply did; Plan holds every action's state afterwards.
type RunResult struct {
	RunID      int64 // 0 when nothing was to do
	PlanRun    int   // the run's number among the plan's runs: 1, 2, 3 …
	Plan       *Plan
	Status     string
	Sent       int // requests sent by this run
	Reconciled int // actions whose unknown outcome this run settled by reading
	// Run counts the rows this run settled, by the state it left them in (its Sent: sent by it, outcome
	// still unknown); job_runs keeps these.
	Run Counts
	// Counts are the whole plan's rows by state after this run (Succeeded, Failed, Unresolved, Planned, …).
	Counts
	Stopped string // why the run stopped before the end, if it did
	Refused string // why ApplyApproved did not send the plan (RunRefused)
}

// afterSend runs right after a request returns and before its outcome is journaled; tests use it to kill
// the process at the worst moment.
var afterSend = func() {}

// run is one Apply in progress.
type run struct {
	j    *Journal
	p    *Plan
	s    kind
	o    ApplyOptions
	jctx context.Context // journal writes outlive a cancelled run: what was sent must be recorded
	id   int64
	rc   *reconciler
	rp   *repeats
	ts   *traceSet // the service's records of the plan's changes, as last synced

	sent, reconciled int
	touched          map[int]bool // seqs of the rows this run journaled a transition for
	stopped          string
}

// unresolved leaves an action for a person: what was read, what is missing and the command that settles it.
func (r *run) unresolved(a *Action, evidence map[string]string) error {
	if evidence == nil {
		evidence = map[string]string{}
	}
	evidence["settle"] = ResolveCommand(r.p.ID, a.Seq)
	r.o.Log.Warn("job action unresolved", "run", r.id, "plan", r.p.ID, "seq", a.Seq, "line", a.Line,
		"read", evidence["read"], "missing", evidence["missing"])
	return r.transition(a, Unresolved, evidence, a.Error) // keep what the service answered, if anything
}

// ResolveCommand is the command a person runs to settle an unresolved action by hand.
func ResolveCommand(planID string, seq int) string {
	return fmt.Sprintf("syncer job resolve %s %d applied|not-applied -why \"what you checked\"", planID, seq)
}

var errRateLimited = errors.New("rate limited by the service")

func (r *run) transition(a *Action, st State, detail map[string]string, errText string) error {
	return r.transitionAt(a, st, r.o.Client.LastDate(), detail, errText)
}

func (r *run) transitionAt(a *Action, st State, serverAt time.Time, detail map[string]string, errText string) error {
	return r.record(a, st, serverAt, detail, errText, nil)
}

// record appends one transition (and whatever also must land with it) in one transaction.
func (r *run) record(a *Action, st State, serverAt time.Time, detail map[string]string, errText string, also func(*sql.Tx) error) error {
	var det any
	if len(detail) > 0 {
		b, _ := json.Marshal(detail)
		det = string(b)
	}
	var e any
	if errText != "" {
		e = errText
	}
	err := r.j.inTx(r.jctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(r.jctx, journalSQL.Get("insert_transition"), r.p.ID, a.ID, a.Seq, r.id, string(st),
			r.o.Now().UTC(), nullTime(serverAt), det, e); err != nil {
			return err
		}
		if also != nil {
			return also(tx)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("job journal: record action %d of plan %s as %s: %w", a.Seq, r.p.ID, st, err)
	}
	a.State, a.Error = st, errText
	r.touched[a.Seq] = true
	if detail != nil {
		a.Detail = detail
	}
	if st == Sent {
		a.Sends++
	}
	lvl := slog.LevelDebug
	if st == Failed || st == Unknown {
		lvl = slog.LevelWarn
	}
	r.o.Log.Log(r.jctx, lvl, "job action", "run", r.id, "plan", r.p.ID, "seq", a.Seq, "line", a.Line, "state", st,
		"err", errText)
	return nil
}

func (r *run) finish(runErr error) (*RunResult, error) {
	res := &RunResult{RunID: r.id, Sent: r.sent, Reconciled: r.reconciled, Stopped: r.stopped}
	p, err := r.j.LoadPlan(r.jctx, r.p.ID)
	if err != nil {
		return nil, errors.Join(runErr, err)
	}
	res.Plan = p
	res.count()
	for _, a := range p.Actions {
		if r.touched[a.Seq] {
			res.Run.add(a.State)
		}
	}
	switch {
	case runErr != nil && !errors.Is(runErr, errRateLimited):
		res.Status = RunAborted
	case res.Unresolved+res.Planned+res.Counts.Sent > 0:
		res.Status = RunIncomplete
	case res.Failed > 0:
		res.Status = RunCompletedWithFailures
	default:
		res.Status = RunCompleted
	}
	var errText any
	if runErr != nil {
		errText = runErr.Error()
	} else if r.stopped != "" {
		errText = r.stopped
	}
	if err := r.j.exec(r.jctx, journalSQL.Get("finish_run"), r.o.Now().UTC(), res.Status, res.Sent,
		res.Run.Succeeded, res.Run.Failed, res.Run.Unresolved, res.Run.Held, errText, r.id); err != nil {
		return res, errors.Join(runErr, fmt.Errorf("job journal: finish run %d: %w", r.id, err))
	}
	if n, err := r.j.runNumber(r.jctx, r.p.ID, r.id); err == nil {
		res.PlanRun = n
	}
	r.o.Log.Info("job run finished", "run", r.id, "plan_run", res.PlanRun, "plan", r.p.ID, "status", res.Status, "sent", res.Sent,
		"succeeded", res.Run.Succeeded, "failed", res.Run.Failed, "unresolved", res.Run.Unresolved, "held", res.Run.Held,
		"plan_counts", res.Counts.String())
	if runErr != nil && !errors.Is(runErr, errRateLimited) {
		return res, fmt.Errorf("job run %d of plan %s: %w", r.id, r.p.ID, runErr)
	}
	return res, nil
}

func (res *RunResult) count() { res.Counts = res.Plan.Counts() }

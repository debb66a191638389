package jobs

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"sort"
	"strings"
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

// probeLinkID is a payment link that does not exist: validating a coupon against it changes nothing and
// tells whether the key may write (a read-only key gets 403 on every POST).
const probeLinkID = "00000000-0000-0000-0000-000000000000"

// Apply sends what is left of a plan, exactly once per action. Actions whose outcome is unknown from an
// earlier run are first reconciled by reading the service; only those proven absent are sent again.
func (j *Journal) Apply(ctx context.Context, planID string, o ApplyOptions) (*RunResult, error) {
	p, err := j.LoadPlan(ctx, planID)
	if err != nil {
		return nil, err
	}
	s, err := kindOf(p.Kind)
	if err != nil {
		return nil, err
	}
	if err := o.check(p, s); err != nil {
		return nil, err
	}
	var recon, todo []*Action
	for _, a := range p.Actions {
		switch a.State {
		case Sent, Unknown:
			recon = append(recon, a)
		case Planned, NotApplied:
			todo = append(todo, a)
		} // held rows are never sent by this plan
	}
	if len(recon)+len(todo) == 0 {
		res := &RunResult{Plan: p, Status: RunNothingToDo}
		res.count()
		return res, nil
	}
	// Before any read or send: reconciling may send again what it proves absent.
	if why := fourEyes(p, s, &o); why != "" {
		return nil, fmt.Errorf("%w: %s", ErrNeedsApproval, why) // the why names the plan and the commands
	}
	if o.Production && !o.Confirmed && !s.traits().readOnly {
		return nil, fmt.Errorf("plan %s (%s, %d actions) against %s: %w", p.ID, p.Kind, len(p.Actions), o.BaseURL,
			ErrNeedsConfirmation)
	}
	r := &run{j: j, p: p, s: s, o: o, jctx: context.WithoutCancel(ctx)}
	if err := r.start(); err != nil {
		return nil, err
	}
	err = r.do(ctx, recon, todo)
	return r.finish(err)
}

func (o *ApplyOptions) check(p *Plan, s kind) error {
	if o.Client == nil {
		return errors.New("apply: no API client")
	}
	if o.Account != p.Account {
		return fmt.Errorf("plan %s was validated against account %q, not %q: set BILLSYNC_ACCOUNT=%s", p.ID, p.Account,
			o.Account, p.Account)
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if o.RepeatWindow <= 0 {
		o.RepeatWindow = DefaultRepeatWindow
	}
	if o.User == "" {
		o.User = Login()
	}
	if o.Host == "" {
		o.Host, _ = os.Hostname()
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Settle <= 0 {
		o.Settle = DefaultSettle
	}
	return nil
}

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

func (r *run) start() error {
	err := r.j.db.QueryRowContext(r.jctx, journalSQL.Get("insert_run"), r.p.ID, r.p.Hash, string(r.p.Kind), r.p.Account,
		r.o.BaseURL, r.o.Now().UTC(), r.o.User, r.o.Host, os.Getpid()).Scan(&r.id)
	if err == nil {
		err = r.j.private()
	}
	if err != nil {
		return fmt.Errorf("job journal: start run of plan %s: %w", r.p.ID, err)
	}
	r.rc = &reconciler{j: r.j, p: r.p, s: r.s, c: r.o.Client, now: r.o.Now, settle: r.o.Settle, loc: r.o.Location}
	r.touched = map[int]bool{}
	// Read once per run: the journal's lock keeps every other job process out until this run ends, and this
	// run's own sends belong to this plan, which is never compared with itself.
	rp, err := loadRepeats(r.jctx, r.j.db, r.s, r.p.Account, r.p.ID, r.o.Now().Add(-r.o.RepeatWindow), r.o.Location)
	if err != nil {
		return err
	}
	r.rp = rp
	if r.ts, err = r.syncedTraces(); err != nil {
		return err
	}
	r.o.Log.Info("job run started", "run", r.id, "plan", r.p.ID, "kind", r.p.Kind, "base_url", r.o.BaseURL)
	return nil
}

func (r *run) do(ctx context.Context, recon, todo []*Action) error {
	// A kind that changes nothing is its own probe: its first request shows whether the key is accepted.
	if !r.s.traits().readOnly {
		if err := probeWrite(ctx, r.o.Client); err != nil {
			return err
		}
	}
	for _, a := range recon {
		if err := r.reconcile(ctx, a); err != nil {
			return err
		}
		if a.State == NotApplied {
			todo = append(todo, a)
		}
	}
	sort.Slice(todo, func(i, k int) bool { return todo[i].Seq < todo[k].Seq })
	for _, a := range todo {
		if r.o.Max > 0 && r.sent >= r.o.Max {
			r.stopped = fmt.Sprintf("reached -max %d", r.o.Max)
			return nil
		}
		if err := ctx.Err(); err != nil {
			r.stopped = "interrupted: " + err.Error()
			return nil
		}
		// Another plan may have sent the same change since this one was planned: checked right before sending.
		if d := r.rp.hold(a, r.p.start, r.o.RepeatWindow); d != nil {
			r.o.Log.Warn("job row held: another plan sent the same change", "run", r.id, "plan", r.p.ID, "seq", a.Seq,
				"line", a.Line, "repeat_of", d["repeatOf"])
			if err := r.transition(a, Held, d, ""); err != nil {
				return err
			}
			continue
		}
		// The service's own records (as synced, and for a top-up read now) may show the change though the
		// journal has no send of it: a lost journal, a change made in the dashboard.
		if held, err := r.holdOnService(ctx, a); err != nil {
			return err
		} else if held {
			continue
		}
		// A row a person resolved as not applied is read once more: held when the change shows now.
		if a.State == NotApplied && a.Detail["resolvedBy"] != "" {
			hold, err := r.recheck(ctx, a)
			if err != nil {
				return err
			}
			if hold {
				continue
			}
		}
		if err := r.send(ctx, a); err != nil {
			return err
		}
	}
	return nil
}

// recheck reads the service once more before sending an action a person resolved as not applied: a change
// that shows now (and did not when they resolved it) holds the action, unresolved, for them to look again.
func (r *run) recheck(ctx context.Context, a *Action) (hold bool, err error) {
	v, ev, err := r.rc.check(ctx, a)
	if err != nil {
		r.o.Log.Warn("job recheck failed", "run", r.id, "plan", r.p.ID, "seq", a.Seq, "err", err)
		return true, fmt.Errorf("read the service before sending row %d, which was resolved as not applied: %w", a.Seq, err)
	}
	seen := map[string]bool{}
	for _, id := range strings.Fields(a.Detail["candidates"]) {
		seen[id] = true
	}
	var fresh []string
	for _, c := range r.rc.found {
		if !seen[c.id] {
			fresh = append(fresh, c.what)
		}
	}
	if v != applied && len(fresh) == 0 {
		return false, nil
	}
	if ev == nil {
		ev = map[string]string{}
	}
	ev["reconciled"] = fmt.Sprintf("resolved as not applied by %s, but the read before sending shows %s", a.Detail["resolvedBy"],
		strings.Join(fresh, "; "))
	ev["missing"] = "whether this is the change after all: if it is, resolve the row as applied"
	r.reconciled++
	return true, r.unresolved(a, ev)
}

// probeWrite fails before anything is sent when the key cannot write or the service cannot be reached.
func probeWrite(ctx context.Context, c *api.Client) error {
	_, err := c.ValidateCoupon(ctx, api.ValidateCouponRequest{PaymentLinkID: probeLinkID, CouponCode: "BILLSYNC-PROBE",
		FinalAmount: 1})
	var ae *api.APIError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &ae) && (ae.Status == http.StatusUnauthorized || ae.Status == http.StatusForbidden):
		return fmt.Errorf("the API key may not write (the service answered %d: %s): use a read-write key; nothing was sent",
			ae.Status, ae.Message)
	case errors.As(err, &ae) && ae.Status >= 400 && ae.Status < 500 && ae.Status != http.StatusTooManyRequests:
		return nil // the made-up payment link is refused: the key may write
	}
	return fmt.Errorf("check that the service accepts writes: %w; nothing was sent", err)
}

// reconcile settles an action whose outcome is unknown by reading the service.
func (r *run) reconcile(ctx context.Context, a *Action) error {
	v, evidence, err := r.rc.check(ctx, a)
	if err != nil {
		r.o.Log.Warn("job reconcile failed", "run", r.id, "plan", r.p.ID, "seq", a.Seq, "err", err)
		return r.transition(a, Unknown, evidence, "reconcile: "+err.Error())
	}
	r.reconciled++
	switch v {
	case applied:
		return r.transition(a, Succeeded, evidence, "")
	case absent:
		return r.transition(a, NotApplied, evidence, "")
	case inconclusive:
		return r.unresolved(a, evidence)
	}
	return r.transition(a, Unknown, evidence, "") // waiting: read again by a later run
}

// settleNow reads the service right after a send whose outcome is unknown. Found: succeeded. Not found: it
// stays unknown, because the service may still apply it; the next run reads again before any resend. When the
// service said the write already exists (409, duplicate-429) and a complete read does not find it, a person must
// look. No transition to not_applied is journaled here: a run killed after it would resend without that check.
func (r *run) settleNow(ctx context.Context, a *Action, saidExists bool, ae *api.APIError) error {
	v, ev, err := r.rc.check(ctx, a)
	if err != nil {
		r.o.Log.Warn("job reconcile failed", "run", r.id, "plan", r.p.ID, "seq", a.Seq, "err", err)
		return r.transition(a, Unknown, ev, "reconcile: "+err.Error())
	}
	r.reconciled++
	switch {
	case v == applied:
		return r.transition(a, Succeeded, ev, "")
	case v == inconclusive:
		return r.unresolved(a, ev)
	case (v == absent || v == waiting) && saidExists:
		ev["reconciled"] = "the service answered \"" + ae.Message + "\", but no matching record is in the complete list"
		ev["missing"] = "the record the service says exists"
		return r.unresolved(a, ev)
	case v == absent || v == waiting:
		ev["note"] = "not found right after the failure; checked again before any resend"
	}
	return r.transition(a, Unknown, ev, "")
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

// send journals the action as sent, sends it once and journals what came back.
func (r *run) send(ctx context.Context, a *Action) error {
	// The send is anchored on billsync's clock (recorded_at); the Date of the answer before it is kept
	// beside it, for the reconciliation to check that the two clocks agree.
	if err := r.transitionAt(a, Sent, r.o.Client.LastDate(), nil, ""); err != nil {
		return err
	}
	r.sent++
	r.rc.forget()
	res, err := r.s.send(ctx, r.o.Client, a.Request)
	afterSend()
	if err == nil {
		return r.succeeded(a, res)
	}
	var ae *api.APIError
	isAPI := errors.As(err, &ae)
	// A 409 "already exist" (where the kind says so) or a 429 "Duplicate request detected" is an answer
	// about this very write: something like it is there. It is reconciled, never sent again.
	exists := r.s.traits().conflictMeansExists && isAPI && ae.Status == http.StatusConflict
	switch {
	case api.IsUnknownOutcome(err) || api.IsDuplicateRequest(err) || exists:
		r.o.Log.Warn("job action outcome unknown", "run", r.id, "plan", r.p.ID, "seq", a.Seq, "err", err)
		if jerr := r.transition(a, Unknown, nil, err.Error()); jerr != nil {
			return jerr
		}
		if ctx.Err() != nil {
			return nil // reconciled by the next run
		}
		return r.settleNow(ctx, a, isAPI && (exists || api.IsDuplicateRequest(err)), ae)
	case isAPI && (ae.Status == http.StatusUnauthorized || ae.Status == http.StatusForbidden):
		if jerr := r.transition(a, NotApplied, nil, err.Error()); jerr != nil {
			return jerr
		}
		return fmt.Errorf("the API key may not write (the service answered %d: %s): use a read-write key", ae.Status, ae.Message)
	case isAPI && ae.Status == http.StatusTooManyRequests:
		if jerr := r.transition(a, NotApplied, nil, err.Error()); jerr != nil {
			return jerr
		}
		r.stopped = "rate limited by the service; run again later"
		return errRateLimited
	case isAPI:
		return r.transition(a, Failed, map[string]string{"reason": ae.Message}, err.Error())
	}
	// No answer and the request never left (the client says so by not marking the outcome unknown).
	if jerr := r.transition(a, NotApplied, nil, err.Error()); jerr != nil {
		return jerr
	}
	return fmt.Errorf("action %d was not sent: %w", a.Seq, err)
}

var errRateLimited = errors.New("rate limited by the service")

func (r *run) succeeded(a *Action, res map[string]string) error {
	if !r.s.traits().journalsBalance || res["balance"] == "" {
		return r.transition(a, Succeeded, res, "")
	}
	// The balance is as of the answer that reported it: its Date, unless that is off billsync's clock.
	date, at := r.o.Client.LastDate(), r.o.Now().UTC()
	if !date.IsZero() && date.Sub(at).Abs() <= ClockBound {
		at = date
	}
	return r.record(a, Succeeded, date, res, "", func(tx *sql.Tx) error {
		_, err := tx.ExecContext(r.jctx, journalSQL.Get("insert_balance"), r.p.Account, a.Request["customerId"],
			a.Request["productId"], res["balance"], at, r.id, a.ID)
		return err
	})
}

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

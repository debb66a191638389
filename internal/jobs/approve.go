package jobs

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/billsync/billsync/internal/config"
)

// Approval is a person's approval of a plan for the daemon, with the one target it was given for.
type Approval struct {
	At         time.Time
	By, Host   string
	Self       bool // the login that planned it approved it (BILLSYNC_ALLOW_SELF_APPROVE)
	Account    string
	BaseURL    string
	Production bool
}

// ApproveOptions say who approves a plan and for which service.
type ApproveOptions struct {
	By, Host string // zero = Login() and the host name; the CLI never takes them from a flag or $USER
	Account  string // must be the plan's account
	// BaseURL and Production are the target: the plan is sent there (by the daemon or syncer job apply)
	// and nowhere else.
	BaseURL    string
	Production bool
	// AllowSelfApprove lets the login that planned the job approve it (a team of one); journaled as such.
	config.Approvals
	Summary string // what the approver was shown, kept with the approval
	Now     time.Time
}

// ErrSelfApproval is returned when the login that planned a job tries to approve it.
var ErrSelfApproval = errors.New("a plan is approved by someone other than the login that planned it (four eyes)")

// ErrNeedsApproval is returned, before anything is sent, when a plan would be sent without the approval
// by another login its target needs (four eyes): production always, every service with
// BILLSYNC_REQUIRE_APPROVAL.
var ErrNeedsApproval = errors.New("four eyes")

// Approve records a person's approval of a plan for one target (base URL and whether it is production), which
// lets it be sent there: by the daemon (ApplyApproved), and by Apply where the target needs an approval. The
// login that planned it is refused unless AllowSelfApprove. A plan approved for this target already is left
// as it is; one approved for another service (or before approvals recorded their service) gains an approval
// for this one.
func (j *Journal) Approve(ctx context.Context, id string, o ApproveOptions) (*Plan, error) {
	p, err := j.LoadPlan(ctx, id)
	if err != nil {
		return nil, err
	}
	if p.ApprovalFor(o.BaseURL, o.Production) != nil {
		return p, nil
	}
	if o.By == "" {
		o.By = Login()
	}
	if o.Host == "" {
		o.Host, _ = os.Hostname()
	}
	if o.Now.IsZero() {
		o.Now = time.Now()
	}
	if o.Account != p.Account {
		return nil, fmt.Errorf("plan %s is for account %q, not %q: set BILLSYNC_ACCOUNT=%s", p.ID, p.Account, o.Account, p.Account)
	}
	if strings.TrimSpace(o.BaseURL) == "" {
		return nil, fmt.Errorf("approve plan %s: BILLSYNC_BASE_URL is not set: an approval is for one service, the one "+
			"the plan will be sent to", p.ID)
	}
	self := o.By == p.CreatedBy
	if self && !o.AllowSelfApprove {
		return nil, fmt.Errorf("plan %s was planned by %s, who may not approve it too: %w; ask a colleague (another login) to "+
			"run `syncer job approve %s`, or, in a team of one, set BILLSYNC_ALLOW_SELF_APPROVE=true (journaled as a self-approval)",
			p.ID, p.CreatedBy, ErrSelfApproval, p.ID)
	}
	a := &Approval{At: o.Now.UTC(), By: o.By, Host: o.Host, Self: self, Account: p.Account, BaseURL: o.BaseURL,
		Production: o.Production}
	err = j.inTx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, journalSQL.Get("insert_approval"), p.ID, a.At, a.By, a.Host, p.CreatedBy, a.Self,
			a.Account, a.BaseURL, a.Production, o.Summary); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, journalSQL.Get("approve_plan"), a.At, a.By, p.ID)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("job journal: approve plan %s: %w", p.ID, err)
	}
	p.ApprovedAt, p.ApprovedBy, p.Approval = a.At, a.By, a
	p.Approvals = append(p.Approvals, a)
	return p, nil
}

// approvals are the plan's recorded approvals, oldest first; none for a plan approved only before approvals
// recorded their target.
func (j *Journal) approvals(ctx context.Context, id string) ([]*Approval, error) {
	var out []*Approval
	err := queryEach(ctx, j.db, journalSQL.Get("plan_approvals"), func(r *sql.Rows) error {
		a := &Approval{}
		err := r.Scan(&a.At, &a.By, &a.Host, &a.Self, &a.Account, &a.BaseURL, &a.Production)
		out = append(out, a)
		return err
	}, id)
	if err != nil {
		return nil, fmt.Errorf("job journal: read the approvals of plan %s: %w", id, err)
	}
	return out, nil
}

// ApprovalFor is the plan's latest approval for the service at baseURL with that production flag; nil when
// it has none.
func (p *Plan) ApprovalFor(baseURL string, production bool) *Approval {
	for i := len(p.Approvals) - 1; i >= 0; i-- {
		if a := p.Approvals[i]; sameService(a.BaseURL, baseURL) && a.Production == production {
			return a
		}
	}
	return nil
}

// sameService says whether two base URLs name one service: scheme and host compared without case, a
// trailing slash ignored.
func sameService(a, b string) bool {
	norm := func(s string) string {
		u, err := url.Parse(strings.TrimSpace(s))
		if err != nil {
			return strings.TrimSpace(s)
		}
		u.Scheme, u.Host = strings.ToLower(u.Scheme), strings.ToLower(u.Host)
		u.Path = strings.TrimRight(u.Path, "/")
		return u.String()
	}
	return norm(a) == norm(b)
}

// needsApproval says whether sending plan p of kind s to the service of o needs an approval: every send of
// the daemon (it sends approved plans only), a change to production, and any change with
// BILLSYNC_REQUIRE_APPROVAL. A kind that changes nothing (coupon-check) needs none from syncer job apply.
func needsApproval(s kind, o *ApplyOptions) bool {
	return o.daemon || !s.traits().readOnly && (o.Production || o.RequireApproval)
}

// fourEyes says why plan p may not be sent to the service of o (ErrNeedsApproval), "" when it may: the
// target needs an approval and the plan has none for this service by a login other than its planner (a
// self-approval counts while BILLSYNC_ALLOW_SELF_APPROVE is true). Each refusal names the command to run.
func fourEyes(p *Plan, s kind, o *ApplyOptions) string {
	if !needsApproval(s, o) {
		return ""
	}
	target := describeTarget(o.BaseURL, o.Production)
	then := ""
	if !o.daemon {
		then = fmt.Sprintf(", then `%s` sends it", applyCommand(p.ID, o.Production))
	}
	approve := fmt.Sprintf("`syncer job approve %s` with BILLSYNC_BASE_URL=%s", p.ID, o.BaseURL)
	a := p.ApprovalFor(o.BaseURL, o.Production)
	switch {
	case a == nil && len(p.Approvals) == 0 && !p.ApprovedAt.IsZero():
		return fmt.Sprintf("plan %s was approved by %s before approvals recorded the service they are for: it needs an "+
			"approval for %s by someone other than %s: they run %s%s", p.ID, p.ApprovedBy, target, p.CreatedBy, approve, then)
	case a == nil && p.Approval != nil:
		return fmt.Sprintf("plan %s was approved by %s for %s, not for %s: it is sent only to a service it was approved "+
			"for; someone other than %s approves it for this one: they run %s%s", p.ID, p.Approval.By,
			describeTarget(p.Approval.BaseURL, p.Approval.Production), target, p.CreatedBy, approve, then)
	case a == nil:
		return fmt.Sprintf("plan %s needs an approval by someone other than %s (who planned it) before it is sent to %s, "+
			"as %s: they run %s%s; a team of one sets BILLSYNC_ALLOW_SELF_APPROVE=true and approves it", p.ID,
			p.CreatedBy, target, requiredBy(o), approve, then)
	case (a.Self || a.By == p.CreatedBy) && !o.AllowSelfApprove:
		return fmt.Sprintf("plan %s was approved by %s, who planned it (a self-approval), and BILLSYNC_ALLOW_SELF_APPROVE is "+
			"not true here: it needs an approval by someone other than %s: they run %s%s; or set "+
			"BILLSYNC_ALLOW_SELF_APPROVE=true where it is sent too", p.ID, a.By, p.CreatedBy, approve, then)
	}
	return ""
}

// requiredBy says what makes an approval needed, for a refusal.
func requiredBy(o *ApplyOptions) string {
	switch {
	case o.daemon:
		return "the daemon sends approved plans only"
	case o.Production:
		return "production is changed only after an approval"
	}
	return "BILLSYNC_REQUIRE_APPROVAL=true"
}

// applyCommand is the command that sends plan id by hand.
func applyCommand(id string, production bool) string {
	if production {
		return "syncer job apply " + id + " -confirm-production"
	}
	return "syncer job apply " + id
}

func describeTarget(baseURL string, production bool) string {
	if production {
		return baseURL + " (production)"
	}
	return baseURL + " (not production)"
}

// ApplyApproved sends every approved plan of the account that still has actions to send or reconcile,
// oldest first, each only to the service it was approved for: a plan approved for the sandbox is never
// sent to production, and an approval that recorded no service sends nothing; a self-approval sends only
// while o.AllowSelfApprove. Those plans come back with Refused saying why and nothing sent. It is for the
// daemon, after a sync: the approval is the person's confirmation, so production needs no further flag.
// It stops at the first plan whose run fails.
func ApplyApproved(ctx context.Context, journalPath string, o ApplyOptions) ([]*RunResult, error) {
	j, err := OpenJournal(ctx, journalPath)
	if err != nil {
		return nil, err
	}
	defer j.Close()
	var ids []string
	err = queryEach(ctx, j.db, journalSQL.Get("approved_open_plans"), func(r *sql.Rows) error {
		var id string
		err := r.Scan(&id)
		ids = append(ids, id)
		return err
	}, o.Account)
	if err != nil {
		return nil, fmt.Errorf("job journal: approved plans: %w", err)
	}
	o.Confirmed, o.daemon = true, true
	var out []*RunResult
	for _, id := range ids {
		p, err := j.LoadPlan(ctx, id)
		if err != nil {
			return out, err
		}
		s, err := kindOf(p.Kind)
		if err != nil {
			return out, err
		}
		if why := fourEyes(p, s, &o); why != "" {
			res := &RunResult{Plan: p, Status: RunRefused, Refused: why}
			res.count()
			out = append(out, res)
			continue
		}
		res, err := j.Apply(ctx, id, o)
		if res != nil {
			out = append(out, res)
		}
		if err != nil {
			return out, err
		}
	}
	return out, nil
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

// Runs lists the plan's runs, oldest first.
func (j *Journal) Runs(ctx context.Context, planID string) ([]Run, error) {
	var out []Run
	err := queryEach(ctx, j.db, journalSQL.Get("plan_runs"), func(r *sql.Rows) error {
		var x Run
		var fin sql.NullTime
		err := r.Scan(&x.ID, &x.N, &x.Started, &fin, &x.By, &x.Host, &x.BaseURL, &x.Status, &x.Sent, &x.Error)
		x.Finished = fin.Time
		out = append(out, x)
		return err
	}, planID)
	if err != nil {
		return nil, fmt.Errorf("job journal: runs of plan %s: %w", planID, err)
	}
	return out, nil
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

// Resolutions lists the rows of the plan settled with Resolve, in order.
func (j *Journal) Resolutions(ctx context.Context, planID string) ([]Resolution, error) {
	var out []Resolution
	err := queryEach(ctx, j.db, journalSQL.Get("plan_resolutions"), func(r *sql.Rows) error {
		var x Resolution
		var st string
		err := r.Scan(&x.Seq, &x.At, &st, &x.By, &x.Host, &x.Why)
		x.State = State(st)
		out = append(out, x)
		return err
	}, planID)
	if err != nil {
		return nil, fmt.Errorf("job journal: resolutions of plan %s: %w", planID, err)
	}
	return out, nil
}

// runNumber is run id's number among the runs of its plan: 1, 2, 3 …
func (j *Journal) runNumber(ctx context.Context, planID string, id int64) (int, error) {
	runs, err := j.Runs(ctx, planID)
	if err != nil {
		return 0, err
	}
	for _, r := range runs {
		if r.ID == id {
			return r.N, nil
		}
	}
	return 0, fmt.Errorf("job journal: plan %s has no run %d", planID, id)
}

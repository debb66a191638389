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
	By, Host string // zero = the OS login and the host name; never taken from a flag
	Account  string // must be the plan's account
	// BaseURL and Production are the target: the daemon sends the plan there and nowhere else.
	BaseURL    string
	Production bool
	// AllowSelf lets the login that planned the job approve it (a team of one); journaled as such.
	AllowSelf bool
	Summary   string // what the approver was shown, kept with the approval
	Now       time.Time
}

// ErrSelfApproval is returned when the login that planned a job tries to approve it.
var ErrSelfApproval = errors.New("a plan is approved by someone other than the login that planned it (four eyes)")

// Approve records a person's approval of a plan for one target (base URL and whether it is production), which
// lets ApplyApproved send it there from the daemon. The login that planned it is refused unless AllowSelf.
// A plan approved before approvals recorded their target is approved again; one approved with a target
// is left as it is.
func (j *Journal) Approve(ctx context.Context, id string, o ApproveOptions) (*Plan, error) {
	p, err := j.LoadPlan(ctx, id)
	if err != nil {
		return nil, err
	}
	if p.Approval != nil {
		return p, nil
	}
	if o.By == "" {
		o.By = currentUser()
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
			"the daemon will send the plan to", p.ID)
	}
	self := o.By == p.CreatedBy
	if self && !o.AllowSelf {
		return nil, fmt.Errorf("plan %s was planned by %s, who may not approve it too: %w; ask a colleague to run "+
			"syncer job approve %s, or, in a team of one, set BILLSYNC_ALLOW_SELF_APPROVE=true (journaled as a self-approval)",
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
	return p, nil
}

// approval is the plan's recorded approval, nil when there is none (or only one made before approvals
// recorded their target).
func (j *Journal) approval(ctx context.Context, id string) (*Approval, error) {
	a := &Approval{}
	err := j.db.QueryRowContext(ctx, journalSQL.Get("plan_approval"), id).Scan(&a.At, &a.By, &a.Host, &a.Self, &a.Account,
		&a.BaseURL, &a.Production)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("job journal: read the approval of plan %s: %w", id, err)
	}
	return a, nil
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

// refuseTarget says why an approved plan may not be sent to the service of o; "" when it may.
func refuseTarget(p *Plan, o *ApplyOptions) string {
	a := p.Approval
	switch {
	case a == nil:
		return fmt.Sprintf("plan %s was approved by %s before approvals recorded the service they are for: approve it "+
			"again (syncer job approve %s) to have the daemon send it", p.ID, p.ApprovedBy, p.ID)
	case !sameService(a.BaseURL, o.BaseURL) || a.Production != o.Production:
		return fmt.Sprintf("plan %s was approved by %s for %s, not for %s: it is sent only to the service it was "+
			"approved for; approve it for this one, or send it by hand with syncer job apply", p.ID, a.By,
			describeTarget(a.BaseURL, a.Production), describeTarget(o.BaseURL, o.Production))
	}
	return ""
}

func describeTarget(baseURL string, production bool) string {
	if production {
		return baseURL + " (production)"
	}
	return baseURL + " (not production)"
}

// ApplyApproved sends every approved plan of the account that still has actions to send or reconcile,
// oldest first, each only to the service it was approved for: a plan approved for the sandbox is never
// sent to production, and an approval that recorded no service sends nothing. Those plans come back
// with Refused saying why and nothing sent. It is for the daemon, after a sync: the approval is the
// person's confirmation, so production needs no further flag. It stops at the first plan whose run fails.
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
	o.Confirmed = true
	var out []*RunResult
	for _, id := range ids {
		p, err := j.LoadPlan(ctx, id)
		if err != nil {
			return out, err
		}
		if why := refuseTarget(p, &o); why != "" {
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
	Seq     int
	At      time.Time
	State   State
	By, Why string
}

// Resolutions lists the rows of the plan settled with Resolve, in order.
func (j *Journal) Resolutions(ctx context.Context, planID string) ([]Resolution, error) {
	var out []Resolution
	err := queryEach(ctx, j.db, journalSQL.Get("plan_resolutions"), func(r *sql.Rows) error {
		var x Resolution
		var st string
		err := r.Scan(&x.Seq, &x.At, &st, &x.By, &x.Why)
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

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

package jobs

import (
	"errors"
	"fmt"
)

// ErrNeedsApproval is returned, before anything is sent, when a plan would be sent without the approval
// by another login its target needs (four eyes): production always, every service with
// BILLSYNC_REQUIRE_APPROVAL.
var ErrNeedsApproval = errors.New("four eyes")

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

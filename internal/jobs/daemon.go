package jobs

import (
	"context"
	"database/sql"
	"fmt"
)

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

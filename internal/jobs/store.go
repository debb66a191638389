package jobs

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

func (j *Journal) planIDByHash(ctx context.Context, hash string) (string, error) {
	var id string
	err := j.db.QueryRowContext(ctx, journalSQL.Get("plan_id_by_hash"), hash).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("job journal: find plan: %w", err)
	}
	return id, nil
}

func (j *Journal) storePlan(ctx context.Context, p *Plan) error {
	return j.inTx(ctx, func(tx *sql.Tx) error {
		skipped, _ := json.Marshal(append([]int{}, p.SkippedLines...))
		if _, err := tx.ExecContext(ctx, journalSQL.Get("insert_plan"), p.ID, string(p.Kind), p.Account, p.Hash, p.Input,
			p.InputSHA256, len(p.Actions), p.CreatedAt, p.CreatedBy, p.Host, nullTime(p.WarehouseSyncedAt), p.Again,
			string(skipped)); err != nil {
			return err
		}
		for _, a := range p.Actions {
			req, _ := json.Marshal(a.Request)
			cur, _ := json.Marshal(a.Current)
			if _, err := tx.ExecContext(ctx, journalSQL.Get("insert_plan_action"), p.ID, a.Seq, a.Line, a.ID, a.Target,
				a.Change, string(req), string(cur), a.AllowRepeat); err != nil {
				return err
			}
			var det any // a held row says what it repeats; a row marked to repeat, what it will repeat
			if len(a.Detail) > 0 {
				b, _ := json.Marshal(a.Detail)
				det = string(b)
			}
			if _, err := tx.ExecContext(ctx, journalSQL.Get("insert_transition"), p.ID, a.ID, a.Seq, nil, string(a.State),
				p.CreatedAt, nil, det, nil); err != nil {
				return err
			}
		}
		return nil
	})
}

func nullTime(t time.Time) sql.NullTime { return sql.NullTime{Time: t, Valid: !t.IsZero()} }

// LoadPlan reads a stored plan with every action's latest state.
func (j *Journal) LoadPlan(ctx context.Context, id string) (*Plan, error) {
	p := &Plan{}
	var kind string
	var synced, approved sql.NullTime
	var skipped string
	err := j.db.QueryRowContext(ctx, journalSQL.Get("plan_by_id"), id).Scan(&p.ID, &kind, &p.Account, &p.Hash, &p.Input,
		&p.InputSHA256, &p.CreatedAt, &p.CreatedBy, &p.Host, &synced, &approved, &p.ApprovedBy, &p.Again, &skipped,
		&p.start)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("no plan %q in the job journal %s", id, j.path)
	}
	if err != nil {
		return nil, fmt.Errorf("job journal: read plan %s: %w", id, err)
	}
	p.Kind, p.WarehouseSyncedAt, p.ApprovedAt = Kind(kind), synced.Time, approved.Time
	if p.Approvals, err = j.approvals(ctx, id); err != nil {
		return nil, err
	}
	if n := len(p.Approvals); n > 0 {
		p.Approval = p.Approvals[n-1]
	}
	if err := json.Unmarshal([]byte(skipped), &p.SkippedLines); err != nil {
		return nil, fmt.Errorf("job journal: plan %s: skipped lines: %w", id, err)
	}
	err = queryEach(ctx, j.db, journalSQL.Get("plan_actions"), func(r *sql.Rows) error {
		a := &Action{}
		var req, cur, detail, state string
		if err := r.Scan(&a.Seq, &a.Line, &a.ID, &a.Target, &a.Change, &req, &cur, &state, &detail, &a.Error,
			&a.Sends, &a.AllowRepeat); err != nil {
			return err
		}
		a.State = State(state)
		for _, f := range []struct {
			s string
			m *map[string]string
		}{{req, &a.Request}, {cur, &a.Current}, {detail, &a.Detail}} {
			if err := json.Unmarshal([]byte(f.s), f.m); err != nil {
				return fmt.Errorf("action %d: %w", a.Seq, err)
			}
		}
		p.Actions = append(p.Actions, a)
		return nil
	}, id)
	if err != nil {
		return nil, fmt.Errorf("job journal: read actions of plan %s: %w", id, err)
	}
	return p, nil
}

// Plans lists the stored plans, newest first.
func (j *Journal) Plans(ctx context.Context) ([]PlanSummary, error) {
	var out []PlanSummary
	err := queryEach(ctx, j.db, journalSQL.Get("list_plans"), func(r *sql.Rows) error {
		var s PlanSummary
		var kind string
		err := r.Scan(&s.ID, &kind, &s.Account, &s.CreatedAt, &s.CreatedBy, &s.Approved, &s.Actions, &s.Planned,
			&s.Held, &s.Sent, &s.Succeeded, &s.Failed, &s.Unresolved, &s.Skipped)
		s.Kind = Kind(kind)
		out = append(out, s)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("job journal: list plans: %w", err)
	}
	return out, nil
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

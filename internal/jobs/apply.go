package jobs

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sort"
	"time"
)

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

func (r *run) start() error {
	err := r.j.db.QueryRowContext(r.jctx, journalSQL.Get("insert_run"), r.p.ID, r.p.Hash, string(r.p.Kind), r.p.Account,
		r.o.BaseURL, r.o.Now().UTC(), r.o.User, r.o.Host, os.Getpid()).Scan(&r.id)
	if err == nil {
		err = r.j.private()
	}
	if err != nil {
		return fmt.Errorf("job journal: start run of plan %s: %w", r.p.ID, err)
	}
	r.rc = &reconciler{j: r.j, p: r.p, read: r.s.reconcile, settles: r.s.traits().settles, c: r.o.Client, now: r.o.Now, settle: r.o.Settle, loc: r.o.Location}
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

package jobs

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// Outcomes a person can give an action with Resolve.
const (
	ResolvedApplied    = "applied"     // the change is on the service: the action succeeded
	ResolvedNotApplied = "not-applied" // the change is not there: the next apply sends it
)

// Resolve settles by a person's word an action whose outcome reading could not prove (unresolved), or that a
// killed run left sent or unknown. It is journaled with who and why; applied marks it succeeded, not-applied
// lets the next apply send it. Settled actions (succeeded, failed) and unsent ones cannot be resolved.
func (j *Journal) Resolve(ctx context.Context, planID string, seq int, outcome, by, why string) (*Action, error) {
	p, err := j.LoadPlan(ctx, planID)
	if err != nil {
		return nil, err
	}
	if seq < 1 || seq > len(p.Actions) {
		return nil, fmt.Errorf("plan %s has rows 1 to %d, not %d (ROW is the plan's seq column)", p.ID, len(p.Actions), seq)
	}
	a := p.Actions[seq-1]
	var to State
	switch outcome {
	case ResolvedApplied:
		to = Succeeded
	case ResolvedNotApplied:
		to = NotApplied
	default:
		return nil, fmt.Errorf("resolve row %d of plan %s: outcome %q: want %s or %s", seq, p.ID, outcome, ResolvedApplied,
			ResolvedNotApplied)
	}
	why = strings.TrimSpace(why)
	if why == "" {
		return nil, fmt.Errorf("resolve row %d of plan %s: say why (-why \"what you checked\"): it is kept in the journal", seq, p.ID)
	}
	switch a.State {
	case Unresolved, Unknown, Sent:
	default:
		return nil, fmt.Errorf("row %d of plan %s (line %d) is %s: only an unresolved or unknown row can be resolved", seq, p.ID,
			a.Line, a.State)
	}
	if by == "" {
		by = currentUser()
	}
	detail := map[string]string{"reconciled": "resolved by hand: " + outcome, "resolvedBy": by, "why": why,
		"resolvedFrom": string(a.State)}
	b, _ := json.Marshal(detail)
	if _, err := j.db.ExecContext(ctx, journalSQL["insert_transition"], p.ID, a.ID, a.Seq, sql.NullInt64{}, string(to),
		time.Now().UTC(), sql.NullTime{}, string(b), nil); err != nil {
		return nil, fmt.Errorf("job journal: resolve row %d of plan %s: %w", seq, p.ID, err)
	}
	a.State, a.Detail, a.Error = to, detail, ""
	return a, nil
}

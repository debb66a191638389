package jobs

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/billsync/billsync/internal/api"
)

// Outcomes a person can give an action with Resolve.
const (
	ResolvedApplied    = "applied"     // the change is on the service: the action succeeded
	ResolvedNotApplied = "not-applied" // the change is not there: the next apply sends it
)

// ResolveOptions say how a person's resolution is checked against the service.
type ResolveOptions struct {
	// Client reads the service for the evidence before the resolution is journaled; without one (or when
	// the read fails) only a forced resolution is accepted.
	Client *api.Client
	// Force journals the resolution even when the read contradicts it; why must then say why.
	Force    bool
	Now      func() time.Time // billsync's clock; nil = time.Now
	Settle   time.Duration    // 0 = DefaultSettle
	Location *time.Location   // zone of the times in messages (BILLSYNC_TZ); nil = UTC
}

// ErrContradicted is returned (wrapped, with what the read shows) when a resolution contradicts a fresh
// read of the service; -force overrides it.
var ErrContradicted = errors.New("the service's evidence contradicts this resolution")

// Resolve settles by a person's word an action whose outcome reading could not prove (unresolved), or that a
// killed run left sent or unknown. The service is read first, and the word may not contradict it:
// not-applied is refused while the read shows a candidate record (or while the settle interval since the
// send is not over, when the service may still show it), applied while it shows no candidate at all.
// o.Force overrides that, journaled as forced. It is journaled with who (by; "" = Login()), where and why; applied marks it succeeded,
// not-applied lets the next apply send it (after reading once more). Settled actions (succeeded, failed)
// and unsent ones cannot be resolved.
func (j *Journal) Resolve(ctx context.Context, planID string, seq int, outcome, by, why string, o ResolveOptions) (*Action, error) {
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
		by = Login()
	}
	host, _ := os.Hostname()
	detail := map[string]string{"reconciled": "resolved by hand: " + outcome, "resolvedBy": by, "resolvedOn": host, "why": why,
		"resolvedFrom": string(a.State)}
	evidence, contradiction, err := j.evidence(ctx, p, a, outcome, o)
	for k, v := range evidence {
		detail[k] = v
	}
	switch {
	case err != nil && !o.Force:
		return nil, fmt.Errorf("resolve row %d of plan %s: cannot read the service to check the resolution against it: %w; "+
			"with -force -why \"...\" it is journaled unchecked", seq, p.ID, err)
	case err != nil:
		detail["forced"], detail["evidence"] = "true", "not read: "+err.Error()
	case contradiction != "" && !o.Force:
		return nil, fmt.Errorf("resolve row %d of plan %s as %s: %w: %s", seq, p.ID, outcome, ErrContradicted, contradiction)
	case contradiction != "":
		detail["forced"], detail["contradicted"] = "true", contradiction
	}
	now := time.Now
	if o.Now != nil {
		now = o.Now
	}
	b, _ := json.Marshal(detail)
	if err := j.exec(ctx, journalSQL.Get("insert_transition"), p.ID, a.ID, a.Seq, sql.NullInt64{}, string(to),
		now().UTC(), sql.NullTime{}, string(b), nil); err != nil {
		return nil, fmt.Errorf("job journal: resolve row %d of plan %s: %w", seq, p.ID, err)
	}
	a.State, a.Detail, a.Error = to, detail, ""
	return a, nil
}

// evidence reads the service for action a and says what of it contradicts outcome ("" when nothing).
func (j *Journal) evidence(ctx context.Context, p *Plan, a *Action, outcome string, o ResolveOptions) (map[string]string, string, error) {
	s, err := kindOf(p.Kind)
	if err != nil {
		return nil, "", err
	}
	if o.Client == nil {
		return nil, "", errors.New("no API client to read it with")
	}
	rc := &reconciler{j: j, p: p, read: s.reconcile, settles: s.traits().settles, c: o.Client, now: o.Now, settle: o.Settle, loc: o.Location}
	if rc.now == nil {
		rc.now = time.Now
	}
	if rc.settle <= 0 {
		rc.settle = DefaultSettle
	}
	v, ev, err := rc.check(ctx, a)
	if err != nil {
		return nil, "", err
	}
	out := map[string]string{"evidence": ev["reconciled"], "read": ev["read"]}
	if m := ev["missing"]; m != "" {
		out["evidenceMissing"] = m
	}
	var ids, whats []string
	for _, c := range rc.found {
		ids = append(ids, c.id)
		whats = append(whats, c.what)
	}
	if len(ids) > 0 {
		out["candidates"] = strings.Join(ids, " ")
	}
	cmd := func(o string) string {
		return fmt.Sprintf("syncer job resolve %s %d %s -why \"...\"", p.ID, a.Seq, o)
	}
	switch {
	case outcome == ResolvedNotApplied && len(whats) > 0:
		return out, fmt.Sprintf("the service shows %s, which may be this change: %s fits (%s); to send it anyway: -force "+
			"-why \"why it is not this change\"", strings.Join(whats, "; "), ResolvedApplied, cmd(ResolvedApplied)), nil
	case outcome == ResolvedNotApplied && v == waiting:
		return out, ev["waiting"] + "; to send it anyway now: -force -why \"...\"", nil
	case outcome == ResolvedApplied && len(whats) == 0 && ev["read"] != "":
		return out, fmt.Sprintf("the service shows no record that may be this change (%s; %s); if you saw it on the service, "+
			"-force -why \"where you saw it\"", ev["reconciled"], ev["read"]), nil
	}
	return out, "", nil
}

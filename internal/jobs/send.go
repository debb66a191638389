package jobs

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/http"

	"github.com/billsync/billsync/internal/api"
)

// probeLinkID is a payment link that does not exist: validating a coupon against it changes nothing and
// tells whether the key may write (a read-only key gets 403 on every POST).
const probeLinkID = "00000000-0000-0000-0000-000000000000"

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

package jobs

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/billsync/billsync/internal/api"
)

// Args is a kind's typed row: what one row of its file asks, read (jobKind.parse) and checked against the
// warehouse (jobKind.check) once. Its fields are tagged with the request's field names, each written as
// text: the journal keeps a row as those texts (the plan's hash, and so its id, is over them), and every
// later step (the send, the reconciliation, the repeat check) gets the row back typed.
type Args interface {
	// refs names the warehouse records the row refers to, read for every row of a file at once (world.go).
	refs(k *keys)
	// unique names what must be unique within a file, with the column to point at.
	unique() []dupKey
	// repeatKey is the change a row makes, by content: a row of a later plan with the same key (same kind and
	// account) repeats it and is held (repeats.go). It compares what reaches the service, never the file, so
	// row order, added rows and re-saved workbooks change nothing. A read-only kind's is "": it is never held.
	repeatKey() string
}

// jobKind is everything that differs between kinds, over the kind's typed row A (river's way: an args type
// and a worker of it). Each kind is one file (kind_*.go) implementing it and one line in registry
// (registry.go); the journal, repeats, approvals, reconciliation's settle interval and clock checks are the
// same for every kind and know none of them. A kind lacking a method does not compile; a spec lacking its name
// or reconciliation fails at load (register), one lacking data TestEveryKindSpecIsComplete.
type jobKind[A Args] interface {
	// spec is what the kind declares: its name, columns and results, how its sends are treated, how an unknown
	// outcome is settled by a read, and which synced records show its change.
	spec() spec[A]
	// parse reads a row on its own; false with no problem recorded means the row is left out.
	parse(r *rowReader) (A, bool)
	// check validates a against the warehouse, may complete it (a customer named by e-mail gets its id), and
	// describes the action: its target, the change for people, and the warehouse values at planning.
	check(a A, w *world, r *rowReader) (A, described)
	// send makes the kind's one request; its answer, as text, is journaled (traits.results).
	send(ctx context.Context, c *api.Client, a A) (map[string]string, error)
}

// described is an action as people read it, from planning.
type described struct {
	target, change string
	current        map[string]string // the warehouse values at planning
}

// spec is what a kind declares about rows of type A.
type spec[A Args] struct {
	name Kind
	traits
	// amount is what a row adds to the printed summaries' total (traits.measure); nil = the kind sums none.
	amount func(a A) float64
	// reconcile reads the service to settle an action whose outcome is unknown (see verdict); a kind whose
	// send may simply go again says why with resendSafe.
	reconcile func(rc *reconciler, ctx context.Context, a A, act *Action) (verdict, map[string]string, error)
	// traces says which of the service's own records, as synced into the warehouse, show the change a row
	// makes, or why none can (traces.go).
	traces traceOf[A]
	// fresh, when set, reads the service right before a row is sent for its records of the row's change created
	// since a time: what the warehouse may not have yet.
	fresh func(ctx context.Context, rc *reconciler, a A, since time.Time) ([]trace, error)
}

// traceOf is a kind's traceRule over its typed row.
type traceOf[A Args] struct {
	query string                               // section of queries/warehouse.sql; "" when none can show it
	key   func(a A) string                     // what the query looks a row up by
	match func(a A, t traceRow) (string, bool) // whether the record shows a's change, and how to name it
	none  string                               // why no synced record can show the change (query "")
}

// traits are a kind's declarations that are data rather than behaviour.
type traits struct {
	columns []column
	oneOf   [][]string // at least one column of each group must be present
	results []string   // result columns, in order
	// units are the number fields of the kind's requests, warehouse values and results: they pick the cells'
	// number format and the words refusing a number that is not whole.
	units map[string]unit
	// group is the warehouse value (Action.Current) the printed summaries group rows by; "" = one group.
	group string
	// unit is what spec.amount counts.
	unit unit

	readOnly bool // changes nothing on the service: no confirmation in production, no write probe, never held
	// settles: the reconciliation concludes absence from a read (and then sends again), so the settle
	// interval holds; kinds that set absolute values or change nothing do not wait.
	settles bool
	// conflictMeansExists: a 409 answer to a send is about this very write (something like it is there): it is
	// reconciled, never sent again.
	conflictMeansExists bool
	// journalsBalance: a success carries the customer's new balance, journaled for the credit report.
	journalsBalance bool
	// allSkipped says why a file whose every row parse left out plans nothing (%d: the rows); "" when parse
	// leaves none out.
	allSkipped string
}

// resendSafe is the reconciliation of a kind whose send may simply go again: it reads nothing.
func resendSafe[A Args](why string) func(*reconciler, context.Context, A, *Action) (verdict, map[string]string, error) {
	return func(*reconciler, context.Context, A, *Action) (verdict, map[string]string, error) {
		return absent, map[string]string{"reconciled": why}, nil
	}
}

// kind is the engine's handle on a registered kind: typed[A], the one implementation, reads the journal's
// text maps into the kind's A and calls it. The engine is written once over this handle.
type kind interface {
	name() Kind
	traits() traits
	traces() traceRule
	parse(r *rowReader) (Args, bool)
	check(a Args, w *world, r *rowReader) (Args, request, described)
	repeatKey(q request) string
	amount(q request) (float64, bool)
	send(ctx context.Context, c *api.Client, q request) (map[string]string, error)
	reconcile(rc *reconciler, ctx context.Context, act *Action) (verdict, map[string]string, error)
	fresh() freshTracer // nil when the kind reads nothing before a send
}

// typed is a kind over its typed row A, as the engine holds it.
type typed[A Args] struct {
	k jobKind[A]
	s spec[A]
}

// register makes the engine's handle on a kind. A spec without a name or a reconciliation fails when the
// package loads (and so every test of it), never when a lost answer is first reconciled.
func register[A Args](k jobKind[A]) kind {
	s := k.spec()
	if s.name == "" || s.reconcile == nil {
		panic(fmt.Sprintf("jobs: kind %T declares no name or no reconciliation (resendSafe says why none reads)", k))
	}
	return typed[A]{k: k, s: s}
}

func (t typed[A]) name() Kind     { return t.s.name }
func (t typed[A]) traits() traits { return t.s.traits }

func (t typed[A]) traces() traceRule {
	tr := t.s.traces
	r := traceRule{kind: t.s.name, query: tr.query, none: tr.none}
	if t.s.readOnly {
		r.query = "" // a kind that changes nothing is never held
	}
	if tr.key != nil {
		r.key = func(q request) string {
			a, err := t.decode(q)
			if err != nil {
				return ""
			}
			return tr.key(a)
		}
	}
	if tr.match != nil {
		r.match = func(q request, row traceRow) (string, bool) {
			a, err := t.decode(q)
			if err != nil {
				return "", false
			}
			return tr.match(a, row)
		}
	}
	return r
}

func (t typed[A]) parse(r *rowReader) (Args, bool) { return t.k.parse(r) }

func (t typed[A]) check(a Args, w *world, r *rowReader) (Args, request, described) {
	checked, d := t.k.check(a.(A), w, r)
	return checked, encode(checked), d
}

// repeatKey of a journaled request; a request that no longer reads as A is its own key, repeating nothing
// else.
func (t typed[A]) repeatKey(q request) string {
	a, err := t.decode(q)
	if err != nil {
		b, _ := json.Marshal(q)
		return "unreadable " + string(b)
	}
	return a.repeatKey()
}

func (t typed[A]) amount(q request) (float64, bool) {
	if t.s.amount == nil {
		return 0, false
	}
	a, err := t.decode(q)
	if err != nil {
		return 0, false
	}
	return t.s.amount(a), true
}

func (t typed[A]) send(ctx context.Context, c *api.Client, q request) (map[string]string, error) {
	a, err := t.decode(q)
	if err != nil {
		return nil, err
	}
	return t.k.send(ctx, c, a)
}

func (t typed[A]) reconcile(rc *reconciler, ctx context.Context, act *Action) (verdict, map[string]string, error) {
	a, err := t.decode(act.Request)
	if err != nil {
		return undetermined, nil, err
	}
	return t.s.reconcile(rc, ctx, a, act)
}

func (t typed[A]) fresh() freshTracer {
	if t.s.fresh == nil {
		return nil
	}
	return func(ctx context.Context, rc *reconciler, q request, since time.Time) ([]trace, error) {
		a, err := t.decode(q)
		if err != nil {
			return nil, err
		}
		return t.s.fresh(ctx, rc, a, since)
	}
}

// decode reads a journaled request back as the kind's row.
func (t typed[A]) decode(q request) (A, error) {
	var a A
	b, err := json.Marshal(q)
	if err == nil {
		err = json.Unmarshal(b, &a)
	}
	if err != nil {
		return a, fmt.Errorf("%s request %s: %w", t.s.name, b, err)
	}
	return a, nil
}

// encode is a row as the journal keeps it: its fields' texts by their request names.
func encode(a Args) request {
	b, err := json.Marshal(a)
	if err != nil {
		panic(fmt.Sprintf("jobs: a row of type %T does not encode: %v", a, err)) // its field types are ours
	}
	var q request
	if err := json.Unmarshal(b, &q); err != nil {
		panic(fmt.Sprintf("jobs: a row of type %T has a field that is not text: %v", a, err))
	}
	return q
}

// dupKey is one value that must not repeat within a file.
type dupKey struct{ col, key string }

// column is one input column.
type column struct {
	name     string
	required bool
	help     string
}

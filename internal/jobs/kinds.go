package jobs

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/billsync/billsync/internal/api"
)

// Kind names a job kind: what one row of a job file asks the service to do.
type Kind string

// jobKind is everything that differs between kinds. Each kind is one file (kind_*.go) implementing it and
// one line in registry; the journal, repeats, approvals, reconciliation's settle interval and clock checks
// are the same for every kind and know none of them. A kind lacking a method does not compile, so none can
// fail only when its step is reached (a reconciliation after a lost answer, in the worst case).
type jobKind interface {
	// name is the kind's name on the command line, in the journal and in the files.
	name() Kind
	// traits are what the kind declares as data: its columns and results, how its sends are treated.
	traits() traits

	// parse checks a row on its own; nil with no problem recorded means the row is left out.
	parse(r *rowReader, o *PlanOptions) request
	// keys names the warehouse records the request refers to, read for every row at once (world.go).
	keys(q request, k *keys)
	// check validates q against the warehouse, may complete it, and describes the action: its target, the
	// change for people, and the warehouse values at planning.
	check(q request, w *world, r *rowReader) (target, change string, current map[string]string)
	// dupKeys name what must be unique within a file, with the column to point at.
	dupKeys(q request) []dupKey
	// repeatKey is the change a row makes, by content: a row of a later plan with the same key (same kind and
	// account) repeats it and is held (repeats.go). It compares what reaches the service, never the file, so
	// row order, added rows and re-saved workbooks change nothing. A read-only kind is never held and is not
	// asked for one.
	repeatKey(q request) string
	// traces says which of the service's own records, as synced into the warehouse, show the change a row
	// makes, or why none can (traces.go): a matching record in the repeat window holds the row as a repeat
	// whatever billsync's journal remembers (a lost journal, a change made by hand in the dashboard).
	traces() traceRule

	// send makes the kind's one request; its answer, as text, is journaled (traits.results).
	send(ctx context.Context, c *api.Client, q request) (map[string]string, error)
	// reconcile reads the service to settle an action whose outcome is unknown (see verdict); a kind whose
	// send may simply go again returns resendSafe's verdict.
	reconcile(rc *reconciler, ctx context.Context, a *Action) (verdict, map[string]string, error)
}

// traits are a kind's declarations that are data rather than behaviour.
type traits struct {
	columns []column
	oneOf   [][]string // at least one column of each group must be present
	results []string   // result columns, in order
	// units are the number fields of the kind's requests, warehouse values and results: they pick the cells'
	// number format and the words refusing a number that is not whole.
	units map[string]unit
	// measure is how the kind's rows add up in the printed summaries.
	measure measure

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

// registry lists every kind, in documentation order (the order of Kinds and of the messages naming them).
var registry = []jobKind{emailFix{}, creditTopup{}, invoiceCreate{}, paymentEdit{}, license{LicenseActivate},
	license{LicenseDeactivate}, checkoutLink{}, couponCheck{}}

// Kinds lists every kind in documentation order.
func Kinds() []Kind {
	out := make([]Kind, len(registry))
	for i, k := range registry {
		out[i] = k.name()
	}
	return out
}

func kindOf(k Kind) (jobKind, error) {
	for _, s := range registry {
		if s.name() == k {
			return s, nil
		}
	}
	names := make([]string, len(registry))
	for i, s := range registry {
		names[i] = string(s.name())
	}
	return nil, fmt.Errorf("unknown job kind %q: want one of %s", k, strings.Join(names, ", "))
}

// request is what one action sends, as text keyed by API field name; stored as JSON in the plan.
type request map[string]string

// dupKey is one value that must not repeat within a file.
type dupKey struct{ col, key string }

// column is one input column.
type column struct {
	name     string
	required bool
	help     string
}

func stamp(t time.Time) string {
	if t.IsZero() {
		return "never"
	}
	return t.Format("2006-01-02 15:04 MST") // in the zone it carries: the configured one (buildPlan)
}

func orNull(s string) string {
	if s == "" {
		return "null"
	}
	return s
}

// cleanNumber turns a DECIMAL's text ("1500.0000") into "1500"; "" becomes "0".
func cleanNumber(s string) string {
	if s == "" {
		return "0"
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return s
	}
	return strconv.FormatFloat(f, 'f', -1, 64)
}

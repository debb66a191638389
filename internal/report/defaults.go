package report

import (
	"github.com/billsync/billsync/internal/config"
)

// withDefaults is r with each unset setting given its declared default (config.WithDefaults, the
// one place for every type): the one place Options, a locale or a CSV dialect left empty is
// resolved. Where to write is never defaulted: a caller that forgot it would write into whatever
// directory it runs in.
func withDefaults(r config.Report) config.Report {
	out := r.ReportsOut
	r = config.WithDefaults(r)
	r.ReportsOut = out
	return r
}

package report

import (
	"reflect"

	"github.com/billsync/billsync/internal/config"
)

// defaults are the settings' declared defaults (config.Report's tags), which withDefaults gives
// an empty setting. Where to write is never defaulted: a caller that forgot it would write into
// whatever directory it runs in.
var defaults = func() config.Report {
	d := config.Defaults[config.Report]()
	d.ReportsOut = ""
	return d
}()

// withDefaults is r with each empty string setting its declared default: the one place
// Options, a locale or a CSV dialect left empty is resolved. Only strings: a number's or a
// duration's zero may be a setting of its own (0 = off).
func withDefaults(r config.Report) config.Report {
	v, d := reflect.ValueOf(&r).Elem(), reflect.ValueOf(defaults)
	for i := range v.NumField() {
		if f := v.Field(i); f.Kind() == reflect.String && f.String() == "" {
			f.Set(d.Field(i))
		}
	}
	return r
}

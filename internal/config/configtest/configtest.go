// Package configtest gives the commands' tests what is invalid for each setting, so a test that
// walks every option of a command's configuration (by reflection, config.Options) covers a new
// setting without being told: its type (and for text, its check tag) says what to try.
package configtest

import (
	"fmt"

	"github.com/billsync/billsync/internal/config"
)

// invalidText is a value each check kind refuses.
var invalidText = map[string]string{
	"url":      "127.0.0.1:8080", // no scheme
	"accounts": "prod",           // no base URL
	"size":     "lots",
	"zone":     "Mars/Olympus",
	"file":     "/nonexistent/billsync-file",
	"keyfile":  "/nonexistent/billsync-key",
	"addr":     "metrics",
	"email":    "finance at example",
	"emails":   "ops@example.com,nobody",
	"currency": "RUPIAH",
	"cron":     "every day",
	"smtp":     "http://mail.example.com",
	"reports":  "no-such-report",
	"locale":   "fr",
	"dialect":  "excel",
}

// Invalid is what o refuses: text its type cannot read, a negative number or duration, a 0
// where it declares no meaning for one (its zero tag), a text its check kind refuses. A text
// option without a check takes any text and has none. An error for a check kind this package
// does not know: a new kind needs its invalid example here.
func Invalid(o config.Option) ([]string, error) {
	switch o.Kind() {
	case "bool":
		return []string{"maybe"}, nil
	case "int", "int64", "float64":
		out := []string{"abc", "-1"}
		if o.Zero == "" {
			out = append(out, "0")
		}
		return out, nil
	case "duration":
		out := []string{"abc", "5", "-5m"}
		if o.Zero == "" {
			out = append(out, "0s")
		}
		return out, nil
	case "string":
		if words := o.Values(); words != nil {
			return []string{"not-" + words[0]}, nil
		}
		if o.Check == "" {
			return nil, nil
		}
		if v, ok := invalidText[o.Check]; ok {
			return []string{v}, nil
		}
		return nil, fmt.Errorf("%s: no invalid example of check kind %q in configtest", o.Env, o.Check)
	}
	return nil, fmt.Errorf("%s: no invalid values of a %s in configtest", o.Env, o.Kind())
}

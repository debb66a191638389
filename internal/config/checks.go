package config

import (
	"errors"
	"fmt"
	"net"
	"net/mail"
	"net/url"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// A string option's check tag says what text it takes. Check tests the kinds with a func itself;
// the kinds without are tested by the package that reads the setting (it knows the words), which
// names the variable in its error as Check does; any other value of the tag is a mistake in the
// declaration (TestDeclarations). Each kind says one text it refuses, for the tests that walk
// every setting of a command (Refused).
var checks = map[string]struct {
	check   func(string) error
	refused string
}{
	"url":      {checkURL, "127.0.0.1:8080"}, // no scheme
	"accounts": {func(s string) error { _, err := ParseAccounts(s); return err }, "prod"},
	"size":     {checkSize, "lots"},
	"file":     {checkFile, "/nonexistent/billsync-file"},
	"addr":     {checkAddr, "metrics"},
	"email":    {CheckAddress, "finance at example"},
	"emails":   {func(s string) error { _, err := CheckAddresses(s); return err }, "ops@example.com,nobody"},
	"currency": {checkCurrency, "RUPIAH"},
	"zone":     {nil, "Mars/Olympus"},              // a Zone, read (and refused) when the setting is
	"keyfile":  {nil, "/nonexistent/billsync-key"}, // the syncer, reading the key (its error names the variable, never the key)
	"cron":     {nil, "every day"},                 // internal/schedule, by the syncer at start
	"smtp":     {nil, "http://mail.example.com"},   // internal/delivery (ParseSMTP)
	"reports":  {nil, "no-such-report"},            // internal/report: "all" or report names
	"locale":   {nil, "fr"},                        // internal/report (CheckSettings)
	"dialect":  {nil, "excel"},                     // internal/report (CheckSettings)
}

// Refused are values the option refuses, for a test that walks every setting of a command: text
// its type cannot read, a negative number or duration, a 0 where it declares no meaning for one
// (its zero tag), a text its check kind refuses. A text option without a check takes any text and
// has none.
func (o Option) Refused() []string {
	switch o.Kind() {
	case "bool":
		return []string{"maybe"}
	case "int", "int64", "float64":
		out := []string{"abc", "-1"}
		if o.Zero == "" {
			out = append(out, "0")
		}
		return out
	case "duration":
		out := []string{"abc", "5", "-5m"}
		if o.Zero == "" {
			out = append(out, "0s")
		}
		return out
	}
	if words := o.Values(); words != nil {
		return []string{"not-" + words[0]}
	}
	if k, ok := checks[o.Check]; ok {
		return []string{k.refused}
	}
	return nil
}

// oneOf is the tag prefix of a closed list of words: check:"oneof auto json text".
const oneOf = "oneof "

// CheckKinds are the check tags an option may carry (besides "oneof ..."), for a test.
func CheckKinds() []string {
	var out []string
	for k := range checks {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// Values are the words a "oneof" option takes; nil for any other.
func (o Option) Values() []string {
	if w, ok := strings.CutPrefix(o.Check, oneOf); ok {
		return strings.Fields(w)
	}
	return nil
}

// Kind is the Go kind of the option's value: string, bool, int, float64, duration.
func (o Option) Kind() string {
	switch o.value.Type() {
	case reflect.TypeOf(time.Duration(0)):
		return "duration"
	case reflect.TypeOf(Zone{}):
		return "string" // a zone's name, read as it is set
	}
	return o.value.Kind().String()
}

// Name is how an error names the option: its variable and, if it has one, its flag.
func (o Option) Name() string {
	if o.Flag == "" {
		return o.Env
	}
	return o.Env + " (-" + o.Flag + ")"
}

// Check says what is wrong with the values of target's options (a pointer to what Load filled
// and the flags may have changed), every mistake at once, each naming its variable and flag: a
// negative number or duration, a 0 where the option declares no meaning for it (its zero tag),
// a text its check tag refuses. Nothing is replaced: a value that means nothing stops the
// command, never runs it as the default.
func Check(target any) error {
	var errs []error
	for _, o := range Options(target) {
		if err := o.check(); err != nil {
			errs = append(errs, fmt.Errorf("%s %s: %w", o.Name(), o.shown(), err))
		}
	}
	return errors.Join(errs...)
}

// shown is the option's value as an error quotes it.
func (o Option) shown() string {
	if z, ok := o.value.Interface().(Zone); ok {
		return strconv.Quote(z.String())
	}
	if o.value.Kind() == reflect.String {
		if o.Env == "BILLSYNC_API_KEY" {
			return "(the key)"
		}
		// a URL's user and password are never repeated (a key or password pasted into it)
		return strconv.Quote(userInfoRE.ReplaceAllString(o.value.String(), "://…@"))
	}
	return fmt.Sprint(o.value.Interface())
}

func (o Option) check() error {
	v := o.value
	switch v.Kind() {
	case reflect.Int, reflect.Int64, reflect.Float64:
		neg, zero := false, false
		if v.Kind() == reflect.Float64 {
			neg, zero = v.Float() < 0, v.Float() == 0
		} else {
			neg, zero = v.Int() < 0, v.Int() == 0
		}
		switch {
		case neg && o.Zero != "":
			return fmt.Errorf("cannot be negative (0 = %s); default %s", o.Zero, o.Default)
		case neg:
			return fmt.Errorf("cannot be negative; default %s", o.Default)
		case zero && o.Zero == "":
			return fmt.Errorf("0 has no meaning here: want a value above 0; default %s", o.Default)
		}
	case reflect.String:
		s := v.String()
		if s == "" {
			return nil
		}
		if words := o.Values(); words != nil {
			if !slices.Contains(words, s) {
				return fmt.Errorf("want %s", strings.Join(words, ", "))
			}
			return nil
		}
		if f := checks[o.Check].check; f != nil {
			return f(s)
		}
	}
	return nil
}

var userInfoRE = regexp.MustCompile(`://[^/@\s]*@`)

// checkURL accepts the base URL of a service: http or https, a host, nothing after the path.
func checkURL(s string) error {
	u, err := url.Parse(s)
	if err != nil || u.Scheme == "" || u.Host == "" {
		hint := "https://" + s
		switch {
		case strings.Contains(s, "://"):
			hint = "https://api.example.com"
		case strings.HasPrefix(s, "127.") || strings.HasPrefix(s, "localhost"):
			hint = "http://" + s // a local simulator
		}
		return fmt.Errorf("want a scheme and a host, e.g. %s", hint)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("scheme %q: want https:// (or http:// for a local simulator)", u.Scheme)
	}
	if u.User != nil {
		return errors.New("a user or password in the URL: the key goes in BILLSYNC_API_KEY or BILLSYNC_API_KEY_FILE")
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return errors.New("want scheme, host and path only")
	}
	return nil
}

// AccountURL is one entry of BILLSYNC_ACCOUNTS.
type AccountURL struct{ Name, BaseURL string }

// ParseAccounts reads BILLSYNC_ACCOUNTS: name=base-url,... with unique names.
func ParseAccounts(s string) ([]AccountURL, error) {
	var out []AccountURL
	var errs []error
	seen := map[string]bool{}
	for _, part := range strings.Split(s, ",") {
		name, base, ok := strings.Cut(strings.TrimSpace(part), "=")
		switch {
		case !ok || name == "" || base == "":
			errs = append(errs, fmt.Errorf("entry %q: want name=base-url", part))
			continue
		case seen[name]:
			errs = append(errs, fmt.Errorf("account %q named twice", name))
		}
		if err := checkURL(base); err != nil {
			errs = append(errs, fmt.Errorf("account %s: base URL %q: %w", name, base, err))
		}
		seen[name] = true
		out = append(out, AccountURL{Name: name, BaseURL: base})
	}
	return out, errors.Join(errs...)
}

// memoryLimitRE is the size syntax DuckDB's memory_limit takes, checked before a sync so a typo
// stops the syncer at start rather than fail the first sync.
var memoryLimitRE = regexp.MustCompile(`(?i)^\s*\d+(\.\d+)?\s*(B|KB|MB|GB|TB|KIB|MIB|GIB|TIB)\s*$`)

func checkSize(s string) error {
	if !memoryLimitRE.MatchString(s) {
		return errors.New("want a size such as 512MB or 1GB")
	}
	return nil
}

// LoadZone is the time zone named name: an IANA name (Asia/Jakarta, UTC). The process's local
// zone ("Local", "") is refused: a container's and a laptop's differ, and billsync's days must
// not. The one place billsync loads a zone.
func LoadZone(name string) (*time.Location, error) {
	loc, err := time.LoadLocation(name)
	if err != nil || name == "" || name == "Local" {
		return nil, fmt.Errorf("time zone %q: want an IANA name such as %s", name, DefaultTZ)
	}
	return loc, nil
}

func checkFile(s string) error {
	f, err := os.Open(s)
	if err != nil {
		return fmt.Errorf("cannot read the file: %w", errors.Unwrap(err))
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.IsDir() {
		return errors.New("is a directory: want a file")
	}
	return nil
}

func checkAddr(s string) error {
	_, port, err := net.SplitHostPort(s)
	if err != nil {
		return errors.New("want host:port, e.g. 127.0.0.1:9090 or :9090")
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		return fmt.Errorf("port %q: want a number 0-65535", port)
	}
	return nil
}

var currencyRE = regexp.MustCompile(`^[A-Za-z]{3}$`)

func checkCurrency(s string) error {
	if !currencyRE.MatchString(s) {
		return errors.New("want a three-letter ISO 4217 code such as IDR")
	}
	return nil
}

// CheckAddress accepts one e-mail address, bare (finance@example.com) or with a name
// ("Finance <finance@example.com>").
func CheckAddress(a string) error {
	p, err := mail.ParseAddress(a)
	if err != nil {
		return fmt.Errorf("address %q: %v", a, strings.TrimPrefix(err.Error(), "mail: "))
	}
	_, domain, _ := strings.Cut(p.Address, "@")
	if !strings.Contains(domain, ".") && domain != "localhost" {
		return fmt.Errorf("address %q: the domain %q has no dot", a, domain)
	}
	return nil
}

// CheckAddresses accepts a comma-separated list of addresses (BILLSYNC_ALERTS_TO); "" is none.
func CheckAddresses(list string) ([]string, error) {
	var out []string
	var errs []error
	for _, a := range strings.Split(list, ",") {
		if a = strings.TrimSpace(a); a == "" {
			continue
		}
		if err := CheckAddress(a); err != nil {
			errs = append(errs, err)
		}
		out = append(out, a)
	}
	return out, errors.Join(errs...)
}

// Problem is err about the option of target (a pointer to a group or a command's settings)
// whose variable is env, named and quoted as Check names an option: for the package that checks
// an option's domain kind.
func Problem(target any, env string, err error) error {
	for _, o := range Options(target) {
		if o.Env == env {
			return fmt.Errorf("%s %s: %w", o.Name(), o.shown(), err)
		}
	}
	panic("config: no option " + env)
}

// Zone is a time zone setting (BILLSYNC_TZ): its IANA name, loaded once when the setting is read
// (from the environment, a flag, or Go code with ZoneOf), so every package takes the
// *time.Location and none loads it again. The zero Zone is unset: WithDefaults gives it the
// declared default.
type Zone struct {
	name string
	loc  *time.Location
}

var zones sync.Map // name: *time.Location, so a zone read twice is the same value

// ZoneOf is the zone called name, or an error saying what is wrong with name.
func ZoneOf(name string) (Zone, error) {
	if l, ok := zones.Load(name); ok {
		return Zone{name, l.(*time.Location)}, nil
	}
	loc, err := LoadZone(name)
	if err != nil {
		return Zone{}, err
	}
	l, _ := zones.LoadOrStore(name, loc)
	return Zone{name, l.(*time.Location)}, nil
}

// MustZone is ZoneOf for a name known good (tests, a declared default).
func MustZone(name string) Zone {
	z, err := ZoneOf(name)
	if err != nil {
		panic(err)
	}
	return z
}

// Location is the zone; nil for the zero Zone.
func (z Zone) Location() *time.Location { return z.loc }

// String is the zone's name as it was set ("" for the zero Zone).
func (z Zone) String() string { return z.name }

// IsZero says whether the zone is unset.
func (z Zone) IsZero() bool { return z.loc == nil }

// Set reads a zone's name: a flag's value (flag.Value).
func (z *Zone) Set(name string) error {
	v, err := ZoneOf(name)
	if err != nil {
		return err
	}
	*z = v
	return nil
}

// EnvDecode reads a zone's name from the environment (go-envconfig's Decoder).
func (z *Zone) EnvDecode(name string) error { return z.Set(name) }

// MarshalText is the zone's name, as logs (slog's JSON and text) and JSON show it.
func (z Zone) MarshalText() ([]byte, error) { return []byte(z.name), nil }

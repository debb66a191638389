// Package config declares every billsync setting once, as tags on one struct field: its
// environment variable and default (read with go-envconfig), its flag and the flag's help.
// Load reads the environment; Bind derives the flags from the same fields, with the values
// Load read as their defaults, so a flag overrides its variable.
package config

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/sethvargo/go-envconfig"
)

// Option is one declared setting, as the tags of its field say.
type Option struct {
	Env     string // environment variable
	Default string // default when the variable is not set
	Flag    string // flag name; "" = environment only
	Help    string
	// Zero is what 0 means for a number or a duration ("off", "none", "never"); "" = 0 means
	// nothing there and is refused, as is a negative value (Check). A zero left in a value
	// built by Go code is then "unset" and gets the declared default (WithDefaults).
	Zero string
	// Check is the kind of text a string option takes (checks.go): "" = any text.
	Check string

	field string // Go path of the field, "Sync: PageSize", as go-envconfig names it in errors
	value reflect.Value
}

// Options lists the options declared in target (a pointer to a struct, or a struct), embedded
// and nested groups included, in declaration order.
func Options(target any) []Option {
	v := reflect.ValueOf(target)
	if v.Kind() == reflect.Pointer {
		v = v.Elem()
	}
	var out []Option
	walk(v, "", &out)
	return out
}

func walk(v reflect.Value, path string, out *[]Option) {
	t := v.Type()
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		tag, ok := f.Tag.Lookup("env")
		if !ok {
			if f.Type.Kind() == reflect.Struct {
				walk(v.Field(i), path+f.Name+": ", out)
			}
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		o := Option{Env: strings.TrimSpace(name), Help: f.Tag.Get("help"), field: path + f.Name, value: v.Field(i)}
		for _, opt := range strings.Split(opts, ",") {
			if d, ok := strings.CutPrefix(strings.TrimSpace(opt), "default="); ok {
				o.Default = d
			}
		}
		o.Flag = f.Tag.Get("flag")
		o.Zero = f.Tag.Get("zero")
		o.Check = f.Tag.Get("check")
		*out = append(*out, o)
	}
}

// defaultOf is the declared default of field name of group, for Go code that needs it.
func defaultOf(group any, name string) string {
	for _, o := range Options(group) {
		if o.field == name {
			return o.Default
		}
	}
	panic("config: no option " + name)
}

// Alias is an old name of a variable, still read (with a warning) where a command accepts it.
type Alias struct{ Old, New string }

// Load fills target's options from the environment (lookup), defaults for the unset ones. A
// variable set to the empty text is unset, whatever its type: its declared default applies (a
// number is never left at 0 by an empty line in a compose file). A variable set only under an
// alias's old name counts for the new one. Every value that does not parse as its option's type
// is an error naming the variable and flag, all of them at once; the warnings say which old
// names were read or ignored, for the command to log. Load does not judge values that parse
// (a 0 that means nothing): Check does, once the flags are read too.
func Load(ctx context.Context, target any, lookup envconfig.Lookuper, aliases ...Alias) (warnings []string, err error) {
	l := envconfig.LookuperFunc(func(key string) (string, bool) {
		v, ok := lookup.Lookup(key)
		for _, a := range aliases {
			if a.New != key {
				continue
			}
			old, oldSet := lookup.Lookup(a.Old)
			oldSet = oldSet && strings.TrimSpace(old) != ""
			switch {
			case oldSet && ok && strings.TrimSpace(v) != "":
				warnings = append(warnings, fmt.Sprintf("%s is deprecated and ignored: %s is set", a.Old, a.New))
			case oldSet:
				warnings = append(warnings, fmt.Sprintf("%s is deprecated: set %s instead", a.Old, a.New))
				return old, true
			}
		}
		if strings.TrimSpace(v) == "" {
			return "", false
		}
		return v, ok
	})
	var errs []error
	for _, o := range Options(target) {
		if v, ok := l.Lookup(o.Env); ok {
			if err := o.parse(v); err != nil {
				errs = append(errs, err)
			}
		}
	}
	if err := errors.Join(errs...); err != nil {
		return slices.Compact(warnings), err
	}
	warnings = nil // the same again
	if err := envconfig.ProcessWith(ctx, &envconfig.Config{Target: target, Lookuper: l}); err != nil {
		return nil, envError(target, err)
	}
	return warnings, nil
}

// parse says whether text v reads as the option's type, in the words of a person fixing it.
func (o Option) parse(v string) error {
	var want string
	switch o.Kind() {
	case "duration":
		if _, err := time.ParseDuration(v); err != nil {
			want = "want a duration such as 90s, 5m or 26h"
		}
	case "bool":
		if _, err := strconv.ParseBool(v); err != nil {
			want = "want true or false"
		}
	case "int", "int64":
		if _, err := strconv.ParseInt(v, 10, 64); err != nil {
			want = "want a whole number"
		}
	case "float64":
		if _, err := strconv.ParseFloat(v, 64); err != nil {
			want = "want a number"
		}
	}
	if _, ok := o.value.Interface().(Zone); ok {
		if _, err := ZoneOf(v); err != nil {
			want = err.Error()
		}
	}
	if want == "" {
		return nil
	}
	if o.Default != "" {
		want += "; default " + o.Default
	}
	shown := strconv.Quote(v)
	if o.Env == "BILLSYNC_API_KEY" {
		shown = "(the key)"
	}
	return fmt.Errorf("%s %s: %s", o.Name(), shown, want)
}

// envError names the variable a user set, where go-envconfig names the Go field.
func envError(target any, err error) error {
	msg := err.Error()
	opts := Options(target)
	// the longest path first: "Sync: PageSize" before a shorter one it begins with
	sort.SliceStable(opts, func(i, j int) bool { return len(opts[i].field) > len(opts[j].field) })
	for _, o := range opts {
		if rest, ok := strings.CutPrefix(msg, o.field+":"); ok {
			return fmt.Errorf("environment %s:%s", o.Env, rest)
		}
	}
	return fmt.Errorf("environment: %w", err)
}

// Bind defines on fs a flag for each option of target (a pointer to a struct Load filled) that
// has one, or only for those whose flag is among names. A flag's default is the value the field
// holds, so -h shows what a run would use, and its help ends with the variable's name.
func Bind(fs *flag.FlagSet, target any, names ...string) {
	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
	}
	for _, o := range Options(target) {
		if o.Flag == "" || len(names) > 0 && !want[o.Flag] {
			continue
		}
		delete(want, o.Flag)
		help := fmt.Sprintf("%s (%s)", o.Help, o.Env)
		bind(fs, o.value, o.Flag, help)
	}
	if len(want) > 0 {
		panic(fmt.Sprintf("config: no option has flag(s) %v", keys(want)))
	}
}

// FlagAlias defines -alias on fs as a second name of the flag -name, for a command whose users
// know a shorter name (report -out for -reports-out).
func FlagAlias(fs *flag.FlagSet, name, alias string) {
	f := fs.Lookup(name)
	if f == nil {
		panic("config: no flag -" + name)
	}
	fs.Var(f.Value, alias, "same as -"+name)
}

func bind(fs *flag.FlagSet, v reflect.Value, name, help string) {
	switch p := v.Addr().Interface().(type) {
	case flag.Value:
		fs.Var(p, name, help)
	case *string:
		fs.StringVar(p, name, *p, help)
	case *bool:
		fs.BoolVar(p, name, *p, help)
	case *int:
		fs.IntVar(p, name, *p, help)
	case *int64:
		fs.Int64Var(p, name, *p, help)
	case *float64:
		fs.Float64Var(p, name, *p, help)
	case *time.Duration:
		fs.DurationVar(p, name, *p, help)
	default:
		panic(fmt.Sprintf("config: flag -%s: no flag for a %s", name, v.Type()))
	}
}

func keys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Defaults is group T (a struct of options) with every option at its declared default, for a
// caller that reads no environment: a test, a benchmark.
func Defaults[T any]() T {
	var v T
	if err := envconfig.ProcessWith(context.Background(), &envconfig.Config{Target: &v, Lookuper: envconfig.MapLookuper(nil)}); err != nil {
		panic(fmt.Sprintf("config: the defaults of %T: %v", v, err))
	}
	return v
}

// WithDefaults is v (a group of options, or a struct of groups) with each option that is unset
// given its declared default: the one place a value built by Go code without the environment (a
// test, a benchmark, a package's zero options) gets its defaults, for every type. Unset is an
// empty text, the zero Zone, and a 0 of a number or duration whose declaration gives 0 no meaning
// (no zero tag). A 0 the option declares (0 = off) and a boolean are settings of their own and
// stay as they are.
func WithDefaults[T any](v T) T {
	d := Defaults[T]()
	dst, src := Options(&v), Options(&d)
	for i, o := range dst {
		if o.unset() {
			o.value.Set(src[i].value)
		}
	}
	return v
}

// unset says whether the option holds the zero value that stands for "not set" (WithDefaults).
func (o Option) unset() bool {
	if z, ok := o.value.Interface().(Zone); ok {
		return z.IsZero()
	}
	switch o.value.Kind() {
	case reflect.String:
		return o.value.String() == ""
	case reflect.Int, reflect.Int64:
		return o.value.Int() == 0 && o.Zero == ""
	case reflect.Float64:
		return o.value.Float() == 0 && o.Zero == ""
	}
	return false
}

// Package config declares every billsync setting once, as tags on one struct field: its
// environment variable and default (read with go-envconfig), its flag and the flag's help.
// Load reads the environment; Bind derives the flags from the same fields, with the values
// Load read as their defaults, so a flag overrides its variable.
package config

import (
	"context"
	"flag"
	"fmt"
	"reflect"
	"sort"
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
// variable set only under an alias's old name counts for the new one. The warnings say which
// old names were read or ignored, for the command to log.
func Load(ctx context.Context, target any, lookup envconfig.Lookuper, aliases ...Alias) (warnings []string, err error) {
	l := lookup
	if len(aliases) > 0 {
		l = envconfig.LookuperFunc(func(key string) (string, bool) {
			v, ok := lookup.Lookup(key)
			for _, a := range aliases {
				if a.New != key {
					continue
				}
				old, oldSet := lookup.Lookup(a.Old)
				switch {
				case oldSet && ok:
					warnings = append(warnings, fmt.Sprintf("%s is deprecated and ignored: %s is set", a.Old, a.New))
				case oldSet:
					warnings = append(warnings, fmt.Sprintf("%s is deprecated: set %s instead", a.Old, a.New))
					return old, true
				}
			}
			return v, ok
		})
	}
	if err := envconfig.ProcessWith(ctx, &envconfig.Config{Target: target, Lookuper: l}); err != nil {
		return nil, envError(target, err)
	}
	return warnings, nil
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

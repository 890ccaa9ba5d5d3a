package config

import (
	"errors"
	"fmt"
	"os"
	"reflect"
	"strings"
	"time"

	"github.com/caarlos0/env/v11"
)

// unreadable turns what the parser of the environment reports, which names
// Go fields ("HeartbeatInterval" of type "time.Duration"), into the
// variables a person set and what each wants, as Validate words its
// problems. An error it cannot place is kept as it is.
func unreadable(err error, into any, opts env.Options) []error {
	var agg env.AggregateError
	if !errors.As(err, &agg) {
		return []error{err}
	}
	keys := map[string]string{}
	envKeys(reflect.TypeOf(into).Elem(), opts.Prefix, keys)
	out := make([]error, 0, len(agg.Errors))
	for _, e := range agg.Errors {
		var pe env.ParseError
		key, ok := "", false
		if errors.As(e, &pe) {
			key, ok = keys[pe.Name]
		}
		if !ok {
			out = append(out, e)
			continue
		}
		if want := wanted(pe.Type); want != "" {
			got, _ := lookup(opts, key)
			out = append(out, fmt.Errorf("%s must be %s (got %q)", key, want, got))
		} else { // a type of omega's own says what it wants
			out = append(out, fmt.Errorf("%s: %w", key, pe.Err))
		}
	}
	return out
}

// envKeys maps each field of t with an env tag, in nested structs too, to
// its variable.
func envKeys(t reflect.Type, prefix string, keys map[string]string) {
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("env"), ",")
		ft := f.Type
		if ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		switch {
		case name != "" && name != "-":
			keys[f.Name] = prefix + name
		case ft.Kind() == reflect.Struct:
			envKeys(ft, prefix+f.Tag.Get("envPrefix"), keys)
		}
	}
}

// wanted says what a value of type t is written as; "" for a type that
// parses itself.
func wanted(t reflect.Type) string {
	if t == reflect.TypeFor[time.Duration]() {
		return "a duration such as 30s, 5m or 1h30m"
	}
	switch t.Kind() {
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a whole number"
	case reflect.Float32, reflect.Float64:
		return "a number"
	}
	return ""
}

// lookup reads a variable from where the options parse from.
func lookup(opts env.Options, key string) (string, bool) {
	if opts.Environment != nil {
		v, ok := opts.Environment[key]
		return v, ok
	}
	return os.LookupEnv(key)
}

// sameVariable reports whether two problems name the same variable first.
func sameVariable(a, b error) bool {
	name := func(e error) string {
		first, _, _ := strings.Cut(e.Error(), " ")
		return strings.TrimSuffix(first, ":")
	}
	return name(a) == name(b)
}

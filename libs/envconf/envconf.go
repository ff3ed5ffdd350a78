// Package envconf reads typed settings from environment variables. A service
// lists every setting with its default in one function, and a misspelt value
// fails start-up with the variable's name instead of being ignored.
package envconf

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Reader reads variables through getenv and collects every bad value.
type Reader struct {
	getenv func(string) string
	errs   []error
}

// New returns a Reader over getenv (os.Getenv in main, a map in tests).
func New(getenv func(string) string) *Reader { return &Reader{getenv: getenv} }

// String returns the variable, or def when unset or empty.
func (r *Reader) String(name, def string) string {
	if v := r.getenv(name); v != "" {
		return v
	}
	return def
}

// List returns the comma-separated variable, or def.
func (r *Reader) List(name string, def []string) []string {
	v := r.getenv(name)
	if v == "" {
		return def
	}
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// Int returns the variable as an integer, or def.
func (r *Reader) Int(name string, def int) int {
	v := r.getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		r.errs = append(r.errs, fmt.Errorf("%s=%q is not an integer", name, v))
		return def
	}
	return n
}

// Duration returns the variable as a Go duration ("250ms", "24h"), or def.
func (r *Reader) Duration(name string, def time.Duration) time.Duration {
	v := r.getenv(name)
	if v == "" {
		return def
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		r.errs = append(r.errs, fmt.Errorf("%s=%q is not a duration", name, v))
		return def
	}
	return d
}

// Bool returns the variable as true/false/1/0, or def.
func (r *Reader) Bool(name string, def bool) bool {
	v := r.getenv(name)
	if v == "" {
		return def
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		r.errs = append(r.errs, fmt.Errorf("%s=%q is not a boolean", name, v))
		return def
	}
	return b
}

// Secret returns the variable as a Secret, or "" when unset.
func (r *Reader) Secret(name string) Secret { return Secret(r.getenv(name)) }

// Err returns every bad value read so far.
func (r *Reader) Err() error { return errors.Join(r.errs...) }

// Secret is a setting that never prints: logging a config struct shows
// "[redacted]" (or "" when unset) in its place.
type Secret string

// Reveal returns the value, for the one place that uses it.
func (s Secret) Reveal() string { return string(s) }

// String implements fmt.Stringer.
func (s Secret) String() string {
	if s == "" {
		return ""
	}
	return "[redacted]"
}

// GoString implements fmt.GoStringer, so %#v does not leak it either.
func (s Secret) GoString() string { return `"` + s.String() + `"` }

// MarshalText implements encoding.TextMarshaler for JSON and slog output.
func (s Secret) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// Package refusal is the refused act every pure domain of the project
// returns: a stable code of the domain's own code type, and a detail that
// is safe to show the caller. The state the act was decided on is
// unchanged.
//
// A domain names its instance once,
//
//	type RefusalError = refusal.Error[RefusalCode]
//
// so that its refusals are a type of their own (errors.As for one domain
// never matches another's), and its use-case package maps the codes to
// problems, as services/cases/internal/tribunalflow does.
package refusal

import (
	"errors"
	"fmt"
)

// Error is a refused act with its code.
type Error[C ~string] struct {
	Code   C
	Detail string
}

// Error returns "<code>: <detail>", or the code alone without a detail.
func (e *Error[C]) Error() string {
	if e.Detail == "" {
		return string(e.Code)
	}
	return string(e.Code) + ": " + e.Detail
}

// Is makes errors.Is match any refusal of the same domain with the same
// code, whatever its detail.
func (e *Error[C]) Is(target error) bool {
	var t *Error[C]
	return errors.As(target, &t) && t.Code == e.Code
}

// New returns the refusal with code and a detail formatted as fmt.Sprintf
// does.
func New[C ~string](code C, format string, args ...any) *Error[C] {
	return &Error[C]{Code: code, Detail: fmt.Sprintf(format, args...)}
}

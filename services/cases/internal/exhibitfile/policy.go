package exhibitfile

import (
	"errors"
	"fmt"
	"slices"
)

// MediaType is a media type this package can check structurally. A type is
// accepted only if the package knows how to tell a well-formed file of it
// from a disguised one, so the allowlist is a subset of these.
type MediaType string

// The media types the package checks.
const (
	PDF       MediaType = "application/pdf"
	PNG       MediaType = "image/png"
	JPEG      MediaType = "image/jpeg"
	TextPlain MediaType = "text/plain"
	CSV       MediaType = "text/csv"
	JSON      MediaType = "application/json"
)

// known are the types with a checker, in the order the docs list them.
var known = []MediaType{PDF, PNG, JPEG, TextPlain, CSV, JSON}

// isText reports whether t is one of the UTF-8 text types.
func (t MediaType) isText() bool { return t == TextPlain || t == CSV || t == JSON }

// label names the type in a refusal's detail.
func (t MediaType) label() string {
	switch t {
	case PDF:
		return "PDF"
	case PNG:
		return "PNG"
	case JPEG:
		return "JPEG"
	case CSV:
		return "CSV"
	case JSON:
		return "JSON"
	}
	return "text"
}

// Policy is what an upload must satisfy. The limits come from the case's
// rules; the caller that also enforces a per-case total passes the smaller
// of the per-file limit and what is left of the case's allowance.
type Policy struct {
	// MaxFileBytes is the largest file accepted; Take reads at most one byte
	// more before it refuses.
	MaxFileBytes int64
	// Allowed is the allowlist: the media types accepted, each a known one.
	Allowed []MediaType
}

// DefaultAllowed is the default allowlist: every type the package checks.
// Archives are never on it, and cannot be: no archive type has a checker.
func DefaultAllowed() []MediaType { return slices.Clone(known) }

// Validate reports a policy Take cannot apply. It is a configuration error,
// not a refusal of the upload.
func (p Policy) Validate() error {
	if p.MaxFileBytes <= 0 {
		return fmt.Errorf("exhibitfile: MaxFileBytes must be positive, got %d", p.MaxFileBytes)
	}
	if len(p.Allowed) == 0 {
		return errors.New("exhibitfile: the allowlist is empty")
	}
	for _, t := range p.Allowed {
		if !slices.Contains(known, t) {
			return fmt.Errorf("exhibitfile: %q has no structural check and cannot be allowed", t)
		}
	}
	return nil
}

func (p Policy) allows(t MediaType) bool { return slices.Contains(p.Allowed, t) }

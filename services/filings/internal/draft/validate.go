package draft

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// ValidationError names the first part of a preparation request that breaks
// the contract. Prepare checks in a fixed order and stops at the first
// failure, so one bad request always yields the same error.
type ValidationError struct {
	// Field is the JSON path of the offending member, e.g.
	// "participants[1].agentId" or "procedure.evidenceRounds".
	Field string
	// Reason says what is wrong in words a caller can act on.
	Reason string
	// Code is the problem code; empty means CodeInvalidDraft.
	Code ValidationCode
}

// ValidationCode is the stable problem code of a preparation refusal.
type ValidationCode string

// The validation codes. Most rules share invalid_draft; a few refusals a
// caller must tell apart without parsing the detail have their own.
const (
	CodeInvalidDraft ValidationCode = "invalid_draft"
	// CodeUnsafeCharacters: a control, format (bidi, zero-width) or
	// line/paragraph separator character in text that people read.
	CodeUnsafeCharacters ValidationCode = "unsafe_characters"
	// CodeUnsupportedSchemaVersion: an echoed plan names another schemaVersion.
	CodeUnsupportedSchemaVersion ValidationCode = "unsupported_schema_version"
	// CodeRecordConfirmationRequired: an echoed plan says
	// recordConfirmationRequired false; it is always true.
	CodeRecordConfirmationRequired ValidationCode = "record_confirmation_required"
)

// Error returns "<field> <reason>", fit for a problem detail.
func (e *ValidationError) Error() string { return e.Field + " " + e.Reason }

// ProblemCode returns the problem code of the refusal.
func (e *ValidationError) ProblemCode() ValidationCode {
	if e.Code == "" {
		return CodeInvalidDraft
	}
	return e.Code
}

func invalid(field, reason string) *ValidationError {
	return &ValidationError{Field: field, Reason: reason}
}

// unsafeRune reports the characters refused in text people read and
// agree to: controls (Cc), format characters (Cf: the bidi embeddings,
// overrides, isolates and marks, zero-width spaces and joiners, the BOM),
// and the line and paragraph separators (Zl, Zp). Each can make a statement
// display differently from its bytes, or hide part of it.
func unsafeRune(r rune) bool {
	return unicode.In(r, unicode.Cc, unicode.Cf, unicode.Zl, unicode.Zp)
}

func unsafeCharacter(field string, r rune, what string) *ValidationError {
	return &ValidationError{Field: field, Code: CodeUnsafeCharacters,
		Reason: fmt.Sprintf("must not contain %s (found U+%04X): they change how text reads without being seen", what, r)}
}

// tokenPattern is the identifier alphabet the spec uses for event ids.
var tokenPattern = regexp.MustCompile(`^[A-Za-z0-9._:-]+$`)

var hex64Pattern = regexp.MustCompile(`^[0-9a-f]{64}$`)

// token checks an identifier: 1 to max characters of A-Z a-z 0-9 . _ : -.
func token(field, s string, max int) error {
	if s == "" {
		return invalid(field, "is required")
	}
	if len(s) > max || !tokenPattern.MatchString(s) {
		return invalid(field, "must be 1 to "+strconv.Itoa(max)+" characters of A-Z a-z 0-9 . _ : -")
	}
	return nil
}

// visible checks a reference: 1 to max visible ASCII characters (no spaces).
func visible(field, s string, max int) error {
	if s == "" {
		return invalid(field, "is required")
	}
	if len(s) > max {
		return invalid(field, "must be at most "+strconv.Itoa(max)+" characters")
	}
	for i := 0; i < len(s); i++ {
		if s[i] < 0x21 || s[i] > 0x7e {
			return invalid(field, "must be visible ASCII characters without spaces")
		}
	}
	return nil
}

// text checks free text: valid UTF-8, 1 to max characters, no control
// characters (newlines allowed when multiline), no leading or trailing
// white space.
func text(field, s string, max int, multiline bool) error {
	if s == "" {
		return invalid(field, "is required")
	}
	if !utf8.ValidString(s) {
		return invalid(field, "must be valid UTF-8")
	}
	if utf8.RuneCountInString(s) > max {
		return invalid(field, "must be at most "+strconv.Itoa(max)+" characters")
	}
	for _, r := range s {
		if unicode.IsControl(r) && !(multiline && r == '\n') {
			return unsafeCharacter(field, r, "control characters")
		}
	}
	if strings.TrimSpace(s) != s {
		return invalid(field, "must not begin or end with white space")
	}
	return nil
}

// name checks an identity or name that enters a confirmation statement or
// names who accepts: text on one line, and none of the unsafe characters.
func name(field, s string, max int) error {
	if err := text(field, s, max, false); err != nil {
		return err
	}
	for _, r := range s {
		if unsafeRune(r) {
			return unsafeCharacter(field, r, "control, format or separator characters")
		}
	}
	return nil
}

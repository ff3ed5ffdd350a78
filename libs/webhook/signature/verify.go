package signature

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/pcourt/pcourt/libs/jwk"
)

// Reason names the verification step that refused a delivery.
type Reason string

// The reasons, in the order Verify checks them (see the package doc).
const (
	ReasonHeaderMissing    Reason = "header_missing"
	ReasonHeaderFormat     Reason = "header_format"
	ReasonSignatureVersion Reason = "signature_version"
	ReasonBodyFormat       Reason = "body_format"
	ReasonSchemaVersion    Reason = "schema_version"
	ReasonEventIDMismatch  Reason = "event_id_mismatch"
	// ReasonRecipientMismatch is a delivery signed for another endpoint
	// than the receiver's own: replayed from another partner's records.
	ReasonRecipientMismatch Reason = "recipient_mismatch"
	ReasonTimestampFormat   Reason = "timestamp_format"
	ReasonTimestampWindow   Reason = "timestamp_window"
	ReasonDigestMismatch    Reason = "digest_mismatch"
	ReasonUnknownKey        Reason = "unknown_key"
	ReasonBadSignature      Reason = "bad_signature"
)

// Reasons returns every reason in verification order.
func Reasons() []Reason {
	return []Reason{
		ReasonHeaderMissing, ReasonHeaderFormat, ReasonSignatureVersion,
		ReasonBodyFormat, ReasonSchemaVersion, ReasonEventIDMismatch,
		ReasonRecipientMismatch, ReasonTimestampFormat, ReasonTimestampWindow, ReasonDigestMismatch,
		ReasonUnknownKey, ReasonBadSignature,
	}
}

// Error is a refused delivery. Reason is the first step that failed; Header
// names the header concerned, when there is one; Err is the cause (for
// unknown_key, the error of the key lookup).
type Error struct {
	Reason Reason
	Header string
	Detail string
	Err    error
}

// Error returns the reason and detail.
func (e *Error) Error() string {
	msg := "webhook signature: " + string(e.Reason)
	if e.Header != "" {
		msg += " (" + e.Header + ")"
	}
	if e.Detail != "" {
		msg += ": " + e.Detail
	}
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// ReasonOf returns the reason of a refusal returned by Verify, or "" when err
// is nil or not a refusal.
func ReasonOf(err error) Reason {
	var e *Error
	if errors.As(err, &e) {
		return e.Reason
	}
	return ""
}

// ErrUnknownKey is what a key lookup returns (wrapped or not) when it knows
// no key of that id. Verify reports any lookup failure as unknown_key and
// keeps the lookup's error as the cause, so a caller can tell a key that does
// not exist from a key source that could not be reached. It is
// jwk.ErrUnknownKey, which a KeySet's Lookup wraps.
var ErrUnknownKey = jwk.ErrUnknownKey

// KeyLookup returns the Ed25519 public key of a key id.
type KeyLookup func(keyID string) (ed25519.PublicKey, error)

// Verified is what a successful verification establishes.
type Verified struct {
	EventID    string
	KeyID      string
	Timestamp  time.Time
	EndpointID string
	// Test is true for a test event: no case fact stands behind it.
	Test bool
}

func refuse(r Reason, header, detail string) *Error {
	return &Error{Reason: r, Header: header, Detail: detail}
}

// Verify checks a delivery: its headers, the exact body bytes, that it was
// signed for endpointID (the receiver's own endpoint id, as registered), the
// key of its key id, and its timestamp against now. tolerance is how far
// the timestamp may be from now either way; zero or less means
// DefaultTolerance. A refusal is an *Error whose Reason is the first failing
// step (see the package doc).
func Verify(h http.Header, body []byte, endpointID string, keys KeyLookup, now time.Time, tolerance time.Duration) (Verified, error) {
	if tolerance <= 0 {
		tolerance = DefaultTolerance
	}
	lines := fieldLines(h)
	var v [len(SignedHeaderNames)]string
	for i, name := range SignedHeaderNames {
		if len(lines[i]) == 0 {
			return Verified{}, refuse(ReasonHeaderMissing, name, "header is absent")
		}
	}
	for i, name := range SignedHeaderNames {
		vals := lines[i]
		if len(vals) != 1 {
			return Verified{}, refuse(ReasonHeaderFormat, name, fmt.Sprintf("header has %d field lines", len(vals)))
		}
		v[i] = vals[0]
	}
	digestHeader, eventID, timestamp, keyID, schemaVersion, signatureVersion, signatureHeader, sentTo, test :=
		v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8]

	wantDigest, ok := parseDigestHeader(digestHeader)
	if !ok {
		return Verified{}, refuse(ReasonHeaderFormat, HeaderContentDigest, "want sha-256=:<base64 of 32 bytes>:")
	}
	if !ValidID(eventID) {
		return Verified{}, refuse(ReasonHeaderFormat, HeaderEventID, "want 1 to 160 of A-Z a-z 0-9 . _ : -")
	}
	if !ValidID(keyID) {
		return Verified{}, refuse(ReasonHeaderFormat, HeaderKeyID, "want 1 to 160 of A-Z a-z 0-9 . _ : -")
	}
	sig, ok := parseSignatureHeader(signatureHeader)
	if !ok {
		return Verified{}, refuse(ReasonHeaderFormat, HeaderSignature, "want ed25519=:<base64 of 64 bytes>:")
	}
	if !ValidID(sentTo) {
		return Verified{}, refuse(ReasonHeaderFormat, HeaderEndpointID, "want 1 to 160 of A-Z a-z 0-9 . _ : -")
	}
	if test != "true" && test != "false" {
		return Verified{}, refuse(ReasonHeaderFormat, HeaderTest, "want true or false")
	}

	if signatureVersion != SignatureVersion {
		return Verified{}, refuse(ReasonSignatureVersion, HeaderSignatureVersion, "want "+SignatureVersion)
	}

	ident, err := readBodyIdentity(body)
	if err != nil {
		return Verified{}, &Error{Reason: ReasonBodyFormat, Err: err}
	}
	if schemaVersion != SchemaVersion {
		return Verified{}, refuse(ReasonSchemaVersion, HeaderSchemaVersion, "want "+SchemaVersion)
	}
	if !ident.hasSchemaVersion || ident.schemaVersion != schemaVersion {
		return Verified{}, refuse(ReasonSchemaVersion, HeaderSchemaVersion, "body schemaVersion differs from the header")
	}
	if !ident.hasEventID || ident.eventID != eventID {
		return Verified{}, refuse(ReasonEventIDMismatch, HeaderEventID, "body eventId differs from the header")
	}
	if sentTo != endpointID {
		return Verified{}, refuse(ReasonRecipientMismatch, HeaderEndpointID,
			fmt.Sprintf("signed for endpoint %s, this receiver is endpoint %q", sentTo, endpointID))
	}

	at, err := ParseTimestamp(timestamp)
	if err != nil {
		return Verified{}, &Error{Reason: ReasonTimestampFormat, Header: HeaderEventTimestamp, Err: err}
	}
	if skew := now.Sub(at); skew > tolerance || skew < -tolerance {
		return Verified{}, refuse(ReasonTimestampWindow, HeaderEventTimestamp,
			fmt.Sprintf("timestamp is %s from the receiver's clock, more than %s", skew.Round(time.Millisecond), tolerance))
	}

	if sum := sha256.Sum256(body); !bytes.Equal(sum[:], wantDigest) {
		return Verified{}, refuse(ReasonDigestMismatch, HeaderContentDigest, "digest of the body is "+ContentDigest(body))
	}

	pub, err := keys(keyID)
	if err != nil {
		return Verified{}, &Error{Reason: ReasonUnknownKey, Header: HeaderKeyID, Detail: keyID, Err: err}
	}
	if len(pub) != ed25519.PublicKeySize {
		return Verified{}, &Error{Reason: ReasonUnknownKey, Header: HeaderKeyID, Detail: keyID,
			Err: fmt.Errorf("%w: key of %d bytes", ErrUnknownKey, len(pub))}
	}
	if !ed25519.Verify(pub, CanonicalInput(eventID, timestamp, keyID, sentTo, test, digestHeader), sig) {
		return Verified{}, refuse(ReasonBadSignature, HeaderSignature, "signature does not verify with key "+keyID)
	}
	return Verified{EventID: eventID, KeyID: keyID, Timestamp: at, EndpointID: sentTo, Test: test == "true"}, nil
}

// fieldLines returns the values of each of SignedHeaderNames, matching
// names case-insensitively: net/http canonicalizes names, but a header
// built by hand (or by another HTTP stack) may not be.
func fieldLines(h http.Header) [len(SignedHeaderNames)][]string {
	var out [len(SignedHeaderNames)][]string
	for k, vals := range h {
		for i, name := range SignedHeaderNames {
			if strings.EqualFold(k, name) {
				out[i] = append(out[i], vals...)
			}
		}
	}
	return out
}

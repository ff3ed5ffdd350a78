package signature

import (
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"
)

// Header names of a delivery, lower case as they appear in the canonical
// input. HTTP header names are case-insensitive; http.Header.Get and Values
// accept these names as they are.
const (
	HeaderContentDigest    = "content-digest"
	HeaderEventID          = "x-pc-event-id"
	HeaderEventTimestamp   = "x-pc-event-timestamp"
	HeaderKeyID            = "x-pc-key-id"
	HeaderSchemaVersion    = "x-pc-schema-version"
	HeaderSignatureVersion = "x-pc-signature-version"
	HeaderSignature        = "x-pc-signature"
	// HeaderEndpointID names the endpoint the delivery was signed for: a
	// receiver accepts only deliveries signed for its own endpoint id, so a
	// delivery one partner received cannot be replayed to another's receiver.
	HeaderEndpointID = "x-pc-endpoint-id"
	// HeaderTest is "true" on a test event (POST /endpoints/{id}/test) and
	// "false" on a case fact. It is signed, so a receiver can trust it.
	HeaderTest = "x-pc-test"
)

// HeaderNames lists the seven headers of the spec in the order the spec
// gives them. Verify requires them and the two binding headers
// (SignedHeaderNames).
var HeaderNames = [7]string{
	HeaderContentDigest,
	HeaderEventID,
	HeaderEventTimestamp,
	HeaderKeyID,
	HeaderSchemaVersion,
	HeaderSignatureVersion,
	HeaderSignature,
}

// SignedHeaderNames lists the nine required headers in the order Verify
// checks their presence and format: the seven of the spec, then the
// endpoint id and the test flag, which bind the signature to its recipient
// and say whether the event is a test.
var SignedHeaderNames = [9]string{
	HeaderContentDigest,
	HeaderEventID,
	HeaderEventTimestamp,
	HeaderKeyID,
	HeaderSchemaVersion,
	HeaderSignatureVersion,
	HeaderSignature,
	HeaderEndpointID,
	HeaderTest,
}

const (
	// SchemaVersion is the schema of the callback body and the value of
	// x-pc-schema-version.
	SchemaVersion = "case-event-v2"
	// SignatureVersion is the value of x-pc-signature-version.
	SignatureVersion = "pc-webhook-ed25519-v1"
	// DefaultTolerance is how far an event timestamp may be from the
	// receiver's clock, either way.
	DefaultTolerance = 5 * time.Minute
	// MaxIDLength is the longest event id or key id.
	MaxIDLength = 160
	// TimestampLayout is the Go layout of x-pc-event-timestamp and of the
	// body's occurredAt and deadlineAt.
	TimestampLayout = "2006-01-02T15:04:05.000Z"
)

const (
	digestPrefix    = "sha-256=:"
	signaturePrefix = "ed25519=:"
)

var (
	idPattern        = regexp.MustCompile(`^[A-Za-z0-9._:-]{1,160}$`)
	timestampPattern = regexp.MustCompile(`^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z$`)
)

// ValidID reports whether s is a valid event id, key id or endpoint id: 1
// to 160 characters of A-Z a-z 0-9 . _ : -.
func ValidID(s string) bool { return idPattern.MatchString(s) }

// CanonicalInput returns the bytes that are signed: seven lines joined by
// "\n" with no trailing newline. digestHeader is the whole content-digest
// value (sha-256=:…:), endpointID the endpoint the delivery is sent to and
// test the x-pc-test value ("true" or "false"). The schema line is always
// SchemaVersion; the signature version and the signature are not part of
// the input. The content-digest line stays last, as the spec says.
func CanonicalInput(eventID, timestamp, keyID, endpointID, test, digestHeader string) []byte {
	var b strings.Builder
	b.Grow(len(eventID) + len(timestamp) + len(keyID) + len(endpointID) + len(digestHeader) + 160)
	b.WriteString(HeaderEventID + ": " + eventID + "\n")
	b.WriteString(HeaderEventTimestamp + ": " + timestamp + "\n")
	b.WriteString(HeaderKeyID + ": " + keyID + "\n")
	b.WriteString(HeaderSchemaVersion + ": " + SchemaVersion + "\n")
	b.WriteString(HeaderEndpointID + ": " + endpointID + "\n")
	b.WriteString(HeaderTest + ": " + test + "\n")
	b.WriteString(HeaderContentDigest + ": " + digestHeader)
	return []byte(b.String())
}

// TestFlag returns the x-pc-test value of a delivery: "true" for a test
// event, "false" for a case fact.
func TestFlag(test bool) string {
	if test {
		return "true"
	}
	return "false"
}

// ContentDigest returns the content-digest value of body:
// sha-256=:<standard base64 of the SHA-256 of the exact bytes>:.
func ContentDigest(body []byte) string {
	sum := sha256.Sum256(body)
	return digestPrefix + base64.StdEncoding.EncodeToString(sum[:]) + ":"
}

// FormatTimestamp returns t as the canonical timestamp: UTC, exactly three
// fractional digits (truncated, not rounded), and Z.
func FormatTimestamp(t time.Time) string { return t.UTC().Format(TimestampLayout) }

// ErrTimestampFormat is returned by ParseTimestamp for a value that is not
// canonical.
var ErrTimestampFormat = errors.New("timestamp is not a canonical UTC instant with 3 fractional digits and Z")

// ParseTimestamp parses a canonical timestamp strictly: the value must have
// the form YYYY-MM-DDTHH:MM:SS.mmmZ, name a real instant, and equal the value
// FormatTimestamp gives for that instant.
func ParseTimestamp(s string) (time.Time, error) {
	if !timestampPattern.MatchString(s) {
		return time.Time{}, fmt.Errorf("%w: %q", ErrTimestampFormat, s)
	}
	t, err := time.Parse(TimestampLayout, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("%w: %q: %v", ErrTimestampFormat, s, err)
	}
	if FormatTimestamp(t) != s {
		return time.Time{}, fmt.Errorf("%w: %q re-serializes as %q", ErrTimestampFormat, s, FormatTimestamp(t))
	}
	return t, nil
}

// decodeCanonicalBase64 decodes standard, padded base64 of exactly n bytes
// and refuses any other spelling of those bytes (the text must equal the
// encoding of what it decodes to).
func decodeCanonicalBase64(s string, n int) ([]byte, bool) {
	if len(s) != base64.StdEncoding.EncodedLen(n) {
		return nil, false
	}
	b, err := base64.StdEncoding.Strict().DecodeString(s)
	if err != nil || len(b) != n || base64.StdEncoding.EncodeToString(b) != s {
		return nil, false
	}
	return b, true
}

// parseDigestHeader returns the 32 digest bytes of a content-digest value in
// the exact form sha-256=:<44 characters of base64>:.
func parseDigestHeader(v string) ([]byte, bool) {
	inner, ok := strings.CutPrefix(v, digestPrefix)
	if !ok {
		return nil, false
	}
	inner, ok = strings.CutSuffix(inner, ":")
	if !ok {
		return nil, false
	}
	return decodeCanonicalBase64(inner, sha256.Size)
}

// parseSignatureHeader returns the 64 signature bytes of an x-pc-signature
// value in the exact form ed25519=:<88 characters of base64>:.
func parseSignatureHeader(v string) ([]byte, bool) {
	inner, ok := strings.CutPrefix(v, signaturePrefix)
	if !ok {
		return nil, false
	}
	inner, ok = strings.CutSuffix(inner, ":")
	if !ok {
		return nil, false
	}
	return decodeCanonicalBase64(inner, 64)
}

// formatSignatureHeader returns the x-pc-signature value of sig.
func formatSignatureHeader(sig []byte) string {
	return signaturePrefix + base64.StdEncoding.EncodeToString(sig) + ":"
}

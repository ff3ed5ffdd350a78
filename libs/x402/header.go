package x402

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
)

// MaxHeaderLen bounds the encoded length of an x402 header value, in bytes.
// A PAYMENT-SIGNATURE for the exact scheme is about 1.3 KiB, but a client
// echoes every extension the server advertised (discovery metadata with a
// JSON schema can run to several KiB), so the bound leaves room for that
// while keeping the decoder's work small and fixed.
const MaxHeaderLen = 32 << 10

// Errors that DecodeHeader wraps in a *HeaderError, one per way a header
// value can be malformed.
var (
	// ErrHeaderTooLarge: the value is longer than MaxHeaderLen.
	ErrHeaderTooLarge = errors.New("header value too large")
	// ErrHeaderNotBase64: the value is not standard, padded base64.
	ErrHeaderNotBase64 = errors.New("header value is not standard padded base64")
	// ErrHeaderNotJSON: the decoded bytes are not exactly one JSON object of
	// the expected shape (syntax error, unknown field, wrong type, trailing
	// data).
	ErrHeaderNotJSON = errors.New("header value is not a JSON object of the expected shape")
)

// HeaderError reports a header value sent by the peer that cannot be
// decoded. The HTTP layer answers it with 400 and reason invalid_payload;
// any other error from DecodeHeader is a programming mistake on our side.
type HeaderError struct {
	// Err wraps ErrHeaderTooLarge, ErrHeaderNotBase64 or ErrHeaderNotJSON
	// with detail.
	Err error
}

// Error describes the malformed header.
func (e *HeaderError) Error() string { return "decoding x402 header: " + e.Err.Error() }

// Unwrap gives access to the sentinel.
func (e *HeaderError) Unwrap() error { return e.Err }

// EncodeHeader returns the header value for v: the standard, padded base64
// of its compact JSON, as the HTTP transport specifies. It refuses values
// longer than MaxHeaderLen, because a peer applying the same bound would
// refuse them too.
func EncodeHeader(v any) (string, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return "", fmt.Errorf("encoding x402 header: %w", err)
	}
	s := base64.StdEncoding.EncodeToString(raw)
	if len(s) > MaxHeaderLen {
		return "", fmt.Errorf("encoding x402 header: %d bytes: %w", len(s), ErrHeaderTooLarge)
	}
	return s, nil
}

// DecodeHeader decodes a header value produced by EncodeHeader (or by any
// standard x402 peer) into v, which must be a non-nil pointer to one of the
// wire types. Decoding is strict because the value comes from an untrusted
// peer: only standard padded base64 with canonical padding bits, exactly one
// JSON object, no unknown fields, nothing after it. Every refusal of the
// input is a *HeaderError.
//
// One leniency remains from encoding/json: object keys match field names
// case-insensitively and a repeated key keeps its last value. Neither lets a
// payer slip anything past verification, because the signature is checked
// against the decoded struct, and that same struct is what gets settled.
func DecodeHeader(s string, v any) error {
	if len(s) > MaxHeaderLen {
		return &HeaderError{Err: fmt.Errorf("%d bytes, limit %d: %w", len(s), MaxHeaderLen, ErrHeaderTooLarge)}
	}
	// The standard decoder silently skips \r and \n; a header value has no
	// business containing them, so the alphabet is checked first.
	for i := 0; i < len(s); i++ {
		if !isBase64Char(s[i]) {
			return &HeaderError{Err: fmt.Errorf("byte %d: %w", i, ErrHeaderNotBase64)}
		}
	}
	raw, err := base64.StdEncoding.Strict().DecodeString(s)
	if err != nil {
		return &HeaderError{Err: fmt.Errorf("%w: %w", ErrHeaderNotBase64, err)}
	}
	// Every x402 header document is an object; checking the first byte also
	// refuses a bare null, which encoding/json would accept and ignore.
	if trimmed := bytes.TrimLeft(raw, " \t\r\n"); len(trimmed) == 0 || trimmed[0] != '{' {
		return &HeaderError{Err: fmt.Errorf("not an object: %w", ErrHeaderNotJSON)}
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var invalid *json.InvalidUnmarshalError
		if errors.As(err, &invalid) {
			return fmt.Errorf("decoding x402 header: %w", err)
		}
		return &HeaderError{Err: fmt.Errorf("%w: %w", ErrHeaderNotJSON, err)}
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return &HeaderError{Err: fmt.Errorf("trailing data after the JSON object: %w", ErrHeaderNotJSON)}
	}
	return nil
}

func isBase64Char(c byte) bool {
	return 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '+' || c == '/' || c == '='
}

// SetChallengeHeaders sets the headers of a 402 answer to a paid
// resource: PAYMENT-REQUIRED carries pr, PAYMENT-RESPONSE the settlement
// that refused a payment (when settling refused it), and nothing caches
// it. The body is pr as JSON, which the caller writes.
func SetChallengeHeaders(h http.Header, pr PaymentRequired, settlement *SettleResponse) error {
	encoded, err := EncodeHeader(pr)
	if err != nil {
		return err
	}
	if settlement != nil {
		if s, err := EncodeHeader(*settlement); err == nil {
			h.Set(HeaderPaymentResponse, s)
		}
	}
	h.Set(HeaderPaymentRequired, encoded)
	h.Set("Cache-Control", "no-store")
	return nil
}

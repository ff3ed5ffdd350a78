package x402

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strings"
)

// AuthorizationID names a payment by what makes an EIP-3009 authorization
// unique on chain: the network and token of our offer it matched, the payer
// and the nonce. Every resource server of the project keys its settlement
// journal by it, so one signed authorization is one payment wherever it is
// presented. The parts are lower-cased because addresses and hex nonces
// differ only in case between spellings of the same value.
func AuthorizationID(offer PaymentRequirements, p PaymentPayload) string {
	a := p.Payload.Authorization
	sum := sha256.Sum256([]byte(strings.ToLower(offer.Network + "|" + offer.Asset + "|" + a.From + "|" + a.Nonce)))
	return hex.EncodeToString(sum[:])
}

// ErrRepeatedHeader reports a request that carries PAYMENT-SIGNATURE more
// than once. Which copy a server reads is an accident of its framework, so
// a payer (or a proxy in between) could get one payment verified and
// another settled; such a request is refused whole.
var ErrRepeatedHeader = errors.New("PAYMENT-SIGNATURE sent more than once")

// PaymentSignature reads the PAYMENT-SIGNATURE of a request: present is
// false when there is none. A repeated header, a value that does not decode
// and a payload of another protocol version are *HeaderError, which the
// HTTP layer answers with 400 invalid_payload.
func PaymentSignature(h http.Header) (p PaymentPayload, present bool, err error) {
	values := h.Values(HeaderPaymentSignature)
	switch len(values) {
	case 0:
		return PaymentPayload{}, false, nil
	case 1:
	default:
		return PaymentPayload{}, true, &HeaderError{Err: fmt.Errorf("%d values: %w", len(values), ErrRepeatedHeader)}
	}
	if values[0] == "" {
		return PaymentPayload{}, false, nil
	}
	if err := DecodeHeader(values[0], &p); err != nil {
		return PaymentPayload{}, true, err
	}
	if p.X402Version != Version {
		return PaymentPayload{}, true, &HeaderError{Err: fmt.Errorf("x402Version %d, want %d: %w", p.X402Version, Version, ErrHeaderNotJSON)}
	}
	return p, true, nil
}

package x402

import (
	"errors"
	"fmt"
)

// ErrNoMatchingOffer reports a payment whose accepted requirements are not
// one of the offers the server made.
var ErrNoMatchingOffer = errors.New("accepted requirements match none of our offers")

// MatchOffer finds which of our offers the client accepted and returns our
// copy of it, never the client's: the client's copy is untrusted input, and
// whatever it carries beyond the compared fields (the EIP-712 domain in
// extra, maxTimeoutSeconds) must come from us when the payment is verified.
//
// An offer matches when scheme, network and amount are equal as strings
// and asset and payTo are equal ignoring letter case (EIP-55 checksums only
// change case). The reference server compares the whole object instead;
// comparing the fields that decide what is paid keeps a client that
// re-serializes extra or the timeout from being refused for nothing.
func MatchOffer(offers []PaymentRequirements, accepted PaymentRequirements) (PaymentRequirements, error) {
	for _, o := range offers {
		if o.Scheme == accepted.Scheme &&
			o.Network == accepted.Network &&
			o.Amount == accepted.Amount &&
			sameAddress(o.Asset, accepted.Asset) &&
			sameAddress(o.PayTo, accepted.PayTo) {
			return o, nil
		}
	}
	return PaymentRequirements{}, fmt.Errorf("matching %q %q amount %q of %q to %q: %w",
		accepted.Scheme, accepted.Network, accepted.Amount, accepted.Asset, accepted.PayTo, ErrNoMatchingOffer)
}

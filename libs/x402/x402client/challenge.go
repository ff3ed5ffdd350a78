package x402client

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"strings"

	"github.com/ethereum/go-ethereum/common"

	"github.com/pcourt/pcourt/libs/x402"
)

// ExtensionPaymentIdentifier is the key of the payment-identifier extension
// (specs/extensions/payment_identifier.md in the x402 repository).
const ExtensionPaymentIdentifier = "payment-identifier"

// decodeChallenge reads the PaymentRequired of a 402 answer: from the
// PAYMENT-REQUIRED header, which the HTTP transport makes the carrier, or
// from the body only when the header is absent. Both are decoded as
// strictly as x402.DecodeHeader decodes a header.
func decodeChallenge(h http.Header, body []byte) (*x402.PaymentRequired, error) {
	var pr x402.PaymentRequired
	if v := h.Get(x402.HeaderPaymentRequired); v != "" {
		if err := x402.DecodeHeader(v, &pr); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrMalformedChallenge, err)
		}
	} else if err := decodeStrictJSON(body, &pr); err != nil {
		return nil, fmt.Errorf("%w: no %s header, and the body is no PaymentRequired: %w", ErrMalformedChallenge, x402.HeaderPaymentRequired, err)
	}
	if pr.X402Version != x402.Version {
		return nil, fmt.Errorf("%w: x402Version %d, this client speaks %d", ErrMalformedChallenge, pr.X402Version, x402.Version)
	}
	if len(pr.Accepts) == 0 {
		return nil, fmt.Errorf("%w: no offers in accepts", ErrMalformedChallenge)
	}
	return &pr, nil
}

func decodeStrictJSON(b []byte, v any) error {
	if t := bytes.TrimLeft(b, " \t\r\n"); len(t) == 0 || t[0] != '{' {
		return errors.New("not a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return errors.New("trailing data after the JSON object")
	}
	return nil
}

// chooseOffer returns the first offer, networks in preference order and
// offers in the server's order within a network, that this client can and
// may pay.
func (c *Client) chooseOffer(accepts []x402.PaymentRequirements) (x402.PaymentRequirements, error) {
	var tooHigh *x402.PaymentRequirements
	for _, network := range c.networks {
		usdc, _ := x402.USDC(network) // New admits only networks with one
		for i, o := range accepts {
			if !payable(o, network, usdc.Address) {
				continue
			}
			amount, _ := parseAmount(o.Amount)
			if amount.Cmp(c.max) > 0 {
				if tooHigh == nil {
					tooHigh = &accepts[i]
				}
				continue
			}
			return o, nil
		}
	}
	if tooHigh != nil {
		return x402.PaymentRequirements{}, fmt.Errorf("%w: %s asks %s atomic units of %s, the maximum is %s",
			ErrAmountTooHigh, tooHigh.Network, tooHigh.Amount, tooHigh.Asset, c.max)
	}
	offered := make([]string, 0, len(accepts))
	for _, o := range accepts {
		offered = append(offered, fmt.Sprintf("%s %s %s", o.Scheme, o.Network, o.Asset))
	}
	return x402.PaymentRequirements{}, fmt.Errorf("%w: offered [%s], this client pays exact in USDC on [%s]",
		ErrNoAcceptableOffer, strings.Join(offered, "; "), strings.Join(c.networks, ", "))
}

// payable reports whether o is an offer this client can sign for on
// network: the exact scheme with the EIP-3009 method, the network's USDC,
// a positive amount and everything NewExactPayment needs.
func payable(o x402.PaymentRequirements, network string, usdc common.Address) bool {
	if o.Scheme != x402.SchemeExact || o.Network != network || !strings.EqualFold(o.Asset, usdc.Hex()) {
		return false
	}
	if m := o.Extra.AssetTransferMethod; m != "" && m != x402.AssetTransferMethodEIP3009 {
		return false
	}
	if _, ok := parseAmount(o.Amount); !ok || o.MaxTimeoutSeconds <= 0 {
		return false
	}
	if len(o.PayTo) != 42 || !strings.HasPrefix(o.PayTo, "0x") || !common.IsHexAddress(o.PayTo) {
		return false
	}
	_, err := x402.DomainFor(o)
	return err == nil
}

// maxUint256 bounds an amount: EIP-3009 values are uint256.
var maxUint256 = new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 256), big.NewInt(1))

// parseAmount parses a positive canonical decimal uint256: digits only, no
// leading zero, the one spelling x402 amounts are compared in.
func parseAmount(s string) (*big.Int, bool) {
	if s == "" || len(s) > 78 || s[0] == '0' {
		return nil, false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return nil, false
		}
	}
	n, ok := new(big.Int).SetString(s, 10)
	if !ok || n.Cmp(maxUint256) > 0 {
		return nil, false
	}
	return n, true
}

// echoExtensions returns the extensions of the payment: every extension
// the server advertised, echoed as the specification (5.1.2) asks, and, if
// the payment-identifier extension is among them with a well-formed info,
// that extension with a fresh id added to its info. It also returns that
// id, empty when none was added.
//
// The reference client does the same (x402Client.createPaymentPayload
// copies paymentRequired.extensions; appendPaymentIdentifierToExtensions
// sets info.id only when info.required is a boolean).
func echoExtensions(advertised x402.Extensions, random io.Reader) (x402.Extensions, string, error) {
	if len(advertised) == 0 {
		return nil, "", nil
	}
	out := make(x402.Extensions, len(advertised))
	for k, v := range advertised {
		out[k] = v
	}
	raw, ok := advertised[ExtensionPaymentIdentifier]
	if !ok {
		return out, "", nil
	}
	var ext map[string]json.RawMessage
	if err := json.Unmarshal(raw, &ext); err != nil || ext == nil {
		return out, "", nil
	}
	var info map[string]json.RawMessage
	if err := json.Unmarshal(ext["info"], &info); err != nil || info == nil {
		return out, "", nil
	}
	// required must be a boolean; null would decode into a bool silently.
	if r := string(bytes.TrimSpace(info["required"])); r != "true" && r != "false" {
		return out, "", nil
	}
	id, err := newPaymentID(random)
	if err != nil {
		return nil, "", err
	}
	info["id"], _ = json.Marshal(id)
	if ext["info"], err = json.Marshal(info); err != nil {
		return nil, "", fmt.Errorf("adding payment identifier: %w", err)
	}
	if out[ExtensionPaymentIdentifier], err = json.Marshal(ext); err != nil {
		return nil, "", fmt.Errorf("adding payment identifier: %w", err)
	}
	return out, id, nil
}

// newPaymentID returns an id of the shape the reference client generates:
// "pay_" and a version 4 UUID as 32 hex digits without hyphens, 36
// characters of the extension's [A-Za-z0-9_-]{16,128}.
func newPaymentID(random io.Reader) (string, error) {
	var u [16]byte
	if _, err := io.ReadFull(random, u[:]); err != nil {
		return "", fmt.Errorf("generating payment identifier: %w", err)
	}
	u[6] = u[6]&0x0f | 0x40 // version 4
	u[8] = u[8]&0x3f | 0x80 // RFC 4122 variant
	return "pay_" + hex.EncodeToString(u[:]), nil
}

// paymentIdentifier returns info.id of the payment-identifier extension of
// a payment, or "".
func paymentIdentifier(exts x402.Extensions) string {
	var ext struct {
		Info struct {
			ID string `json:"id"`
		} `json:"info"`
	}
	if raw, ok := exts[ExtensionPaymentIdentifier]; ok && json.Unmarshal(raw, &ext) == nil {
		return ext.Info.ID
	}
	return ""
}

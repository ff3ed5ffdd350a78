package x402

import (
	"encoding/json"
)

// Version is the x402 protocol version this package speaks; every message
// carries it as x402Version.
const Version = 2

// SchemeExact names the "exact" payment scheme: a transfer of precisely the
// advertised amount.
const SchemeExact = "exact"

// AssetTransferMethodEIP3009 is the only asset transfer method of the exact
// EVM scheme this package implements. The scheme document lets an offer name
// it in extra.assetTransferMethod and treats its absence as the same thing.
const AssetTransferMethodEIP3009 = "eip3009"

// The HTTP headers of the version 2 HTTP transport (specs/transports-v2/http.md).
// Each carries the standard, padded base64 of a compact JSON document.
const (
	// HeaderPaymentRequired carries a PaymentRequired from server to client
	// with a 402 response.
	HeaderPaymentRequired = "PAYMENT-REQUIRED"
	// HeaderPaymentSignature carries a PaymentPayload from client to server
	// on the paid retry.
	HeaderPaymentSignature = "PAYMENT-SIGNATURE"
	// HeaderPaymentResponse carries a SettleResponse from server to client.
	HeaderPaymentResponse = "PAYMENT-RESPONSE"
)

// Extensions is the protocol's open extension map: extension identifier to
// an extension-defined value (by convention {info, schema}). Values are kept
// as raw JSON because their shapes belong to the extensions, not to the core
// protocol, and a client must echo what the server advertised untouched.
type Extensions map[string]json.RawMessage

// MarshalJSON writes a nil map as {} rather than null: where the
// specification requires the field, an absent map still means "no
// extensions", and null would not be an object.
func (e Extensions) MarshalJSON() ([]byte, error) {
	if e == nil {
		return []byte("{}"), nil
	}
	return json.Marshal(map[string]json.RawMessage(e))
}

// ResourceInfo describes the protected resource (specification 5.1.2).
// Only url is required by the specification.
type ResourceInfo struct {
	URL         string `json:"url"`
	Description string `json:"description,omitempty"`
	MimeType    string `json:"mimeType,omitempty"`
}

// Extra is the scheme-specific part of PaymentRequirements for the exact EVM
// scheme: the EIP-712 domain name and version of the token contract, which
// the payer needs to sign and the verifier needs to recover. The
// specification types extra as a free-form object; it is a struct here
// because the exact EVM scheme defines exactly these keys.
type Extra struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	// AssetTransferMethod is "eip3009" or empty (which means the same);
	// scheme_exact_evm.md defines it, and a payer that echoes an offer
	// carrying it must not be refused as malformed.
	AssetTransferMethod string `json:"assetTransferMethod,omitempty"`
}

// PaymentRequirements is one way to pay that a resource server accepts
// (specification 5.1.2): an element of PaymentRequired.accepts, and the
// accepted field of a PaymentPayload.
type PaymentRequirements struct {
	Scheme string `json:"scheme"`
	// Network is a CAIP-2 chain id such as "eip155:8453".
	Network string `json:"network"`
	// Amount is in the asset's atomic units, as a decimal string.
	Amount string `json:"amount"`
	// Asset is the token contract address.
	Asset string `json:"asset"`
	// PayTo is the recipient address.
	PayTo             string `json:"payTo"`
	MaxTimeoutSeconds int    `json:"maxTimeoutSeconds"`
	Extra             Extra  `json:"extra"`
}

// PaymentRequired is the challenge of a 402 response (specification 5.1),
// sent in the PAYMENT-REQUIRED header and as the response body.
type PaymentRequired struct {
	X402Version int                   `json:"x402Version"`
	Error       string                `json:"error,omitempty"`
	Resource    ResourceInfo          `json:"resource"`
	Accepts     []PaymentRequirements `json:"accepts"`
	Extensions  Extensions            `json:"extensions"`
}

// MarshalJSON writes nil accepts as [] so that the document always has the
// shape the specification requires, even for a programming mistake.
func (p PaymentRequired) MarshalJSON() ([]byte, error) {
	type plain PaymentRequired
	out := plain(p)
	if out.Accepts == nil {
		out.Accepts = []PaymentRequirements{}
	}
	return json.Marshal(out)
}

// Authorization holds the EIP-3009 TransferWithAuthorization parameters
// exactly as they travel (specification 5.2.2): addresses as 0x-hex, amounts
// and times as decimal strings, the nonce as 0x-hex of 32 bytes. They stay
// strings on the wire type so that a payload re-encodes byte for byte; they
// are parsed and checked where they are used.
type Authorization struct {
	From        string `json:"from"`
	To          string `json:"to"`
	Value       string `json:"value"`
	ValidAfter  string `json:"validAfter"`
	ValidBefore string `json:"validBefore"`
	Nonce       string `json:"nonce"`
}

// ExactEVMPayload is the scheme-specific payload of the exact scheme on EVM
// with the EIP-3009 transfer method (scheme_exact_evm.md, phase 1): the
// 65-byte signature as 0x-hex, and the signed authorization.
type ExactEVMPayload struct {
	Signature     string        `json:"signature"`
	Authorization Authorization `json:"authorization"`
}

// PaymentPayload is what the client sends back in the PAYMENT-SIGNATURE
// header (specification 5.2): the offer it accepted, copied from the
// challenge, and the signed payment for it.
type PaymentPayload struct {
	X402Version int                 `json:"x402Version"`
	Resource    *ResourceInfo       `json:"resource,omitempty"`
	Accepted    PaymentRequirements `json:"accepted"`
	Payload     ExactEVMPayload     `json:"payload"`
	Extensions  Extensions          `json:"extensions,omitempty"`
}

// SettleResponse reports a settlement (specification 5.3): the body of the
// facilitator's /settle answer and the content of the PAYMENT-RESPONSE
// header.
type SettleResponse struct {
	Success     bool   `json:"success"`
	ErrorReason string `json:"errorReason,omitempty"`
	// ErrorMessage is not in the specification's table; the reference
	// implementations send it beside errorReason, so it is accepted here to
	// decode their answers strictly.
	ErrorMessage string `json:"errorMessage,omitempty"`
	Payer        string `json:"payer,omitempty"`
	// Transaction is the transaction hash, empty when settlement failed.
	Transaction string     `json:"transaction"`
	Network     string     `json:"network"`
	Amount      string     `json:"amount,omitempty"`
	Extensions  Extensions `json:"extensions,omitempty"`
}

// VerifyResponse is the facilitator's /verify answer (specification 5.4).
type VerifyResponse struct {
	IsValid       bool   `json:"isValid"`
	InvalidReason string `json:"invalidReason,omitempty"`
	// InvalidMessage is not in the specification's table; the reference
	// implementations send it beside invalidReason, so it is accepted here to
	// decode their answers strictly.
	InvalidMessage string     `json:"invalidMessage,omitempty"`
	Payer          string     `json:"payer,omitempty"`
	Extensions     Extensions `json:"extensions,omitempty"`
}

// VerifyRequest is the body of POST /verify (specification 7.1).
type VerifyRequest struct {
	X402Version         int                 `json:"x402Version"`
	PaymentPayload      PaymentPayload      `json:"paymentPayload"`
	PaymentRequirements PaymentRequirements `json:"paymentRequirements"`
}

// SettleRequest is the body of POST /settle; the specification (7.2) gives
// it the same structure as VerifyRequest.
type SettleRequest VerifyRequest

// SupportedKind is one scheme and network a facilitator handles
// (specification 7.3.1).
type SupportedKind struct {
	X402Version int    `json:"x402Version"`
	Scheme      string `json:"scheme"`
	Network     string `json:"network"`
	// Extra is scheme-specific and free-form here (for instance a fee payer
	// on other networks), unlike PaymentRequirements.Extra.
	Extra map[string]json.RawMessage `json:"extra,omitempty"`
}

// SupportedResponse is the facilitator's GET /supported answer
// (specification 7.3). Extensions is a list of extension identifiers here,
// not the map of PaymentRequired, because the specification says so.
type SupportedResponse struct {
	Kinds      []SupportedKind `json:"kinds"`
	Extensions []string        `json:"extensions"`
	// Signers maps CAIP-2 patterns such as "eip155:*" to the facilitator's
	// signer addresses.
	Signers map[string][]string `json:"signers"`
}

// MarshalJSON writes nil collections as [] and {}: all three fields are
// required by the specification, and null would break clients that iterate
// over them.
func (s SupportedResponse) MarshalJSON() ([]byte, error) {
	type plain SupportedResponse
	out := plain(s)
	if out.Kinds == nil {
		out.Kinds = []SupportedKind{}
	}
	if out.Extensions == nil {
		out.Extensions = []string{}
	}
	if out.Signers == nil {
		out.Signers = map[string][]string{}
	}
	return json.Marshal(out)
}

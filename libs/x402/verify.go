package x402

import (
	"errors"
	"fmt"
	"math/big"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
)

// Reasons are the machine-readable error codes of the specification
// (x402-specification-v2.md, section 9), sent as VerifyResponse.invalidReason
// and SettleResponse.errorReason. The strings are the specification's; the
// reference implementation uses other spellings for some of them (for
// instance invalid_exact_evm_signature), and clients treat them as opaque.
const (
	// ReasonInsufficientFunds: the payer's balance does not cover the amount.
	ReasonInsufficientFunds = "insufficient_funds"
	// ReasonValidAfter: the authorization is not valid yet.
	ReasonValidAfter = "invalid_exact_evm_payload_authorization_valid_after"
	// ReasonValidBefore: the authorization has expired or expires too soon
	// to be settled.
	ReasonValidBefore = "invalid_exact_evm_payload_authorization_valid_before"
	// ReasonValueMismatch: the authorized value is not exactly the amount.
	ReasonValueMismatch = "invalid_exact_evm_payload_authorization_value_mismatch"
	// ReasonInvalidSignature: the signature is malformed or not the payer's.
	ReasonInvalidSignature = "invalid_exact_evm_payload_signature"
	// ReasonRecipientMismatch: the authorization pays someone other than payTo.
	ReasonRecipientMismatch = "invalid_exact_evm_payload_recipient_mismatch"
	// ReasonInvalidNetwork: the network is not supported or does not match.
	ReasonInvalidNetwork = "invalid_network"
	// ReasonInvalidPayload: the payment payload is malformed.
	ReasonInvalidPayload = "invalid_payload"
	// ReasonInvalidPaymentRequirements: the requirements are malformed, or
	// are not the ones the payload accepted.
	ReasonInvalidPaymentRequirements = "invalid_payment_requirements"
	// ReasonInvalidScheme: the payload names a scheme other than the
	// requirements'.
	ReasonInvalidScheme = "invalid_scheme"
	// ReasonUnsupportedScheme: the requirements name a scheme this
	// verifier does not implement.
	ReasonUnsupportedScheme = "unsupported_scheme"
	// ReasonInvalidX402Version: the protocol version is not 2.
	ReasonInvalidX402Version = "invalid_x402_version"
	// ReasonInvalidTransactionState: settlement failed or was rejected.
	ReasonInvalidTransactionState = "invalid_transaction_state"
	// ReasonUnexpectedVerifyError: verification failed for a reason that is
	// not the payer's.
	ReasonUnexpectedVerifyError = "unexpected_verify_error"
	// ReasonUnexpectedSettleError: settlement failed for a reason that is
	// not the payer's.
	ReasonUnexpectedSettleError = "unexpected_settle_error"
)

// ErrPaymentRefused is wrapped by every refusal of VerifyExact; the reason
// it returns beside says which rule refused.
var ErrPaymentRefused = errors.New("payment refused")

// validBeforeMarginSeconds is how long an authorization must still be valid
// when it is verified: the reference facilitator demands 6 seconds, about
// three Base blocks, so that the settlement transaction lands before the
// contract's own validBefore check refuses it.
const validBeforeMarginSeconds = 6

// VerifyExact checks payment p against requirements req at time now, as a
// facilitator does before settling an exact EVM payment (EIP-3009 method).
// It is a pure function: balance, nonce reuse and simulation are the
// settling side's business.
//
// A valid payment returns the payer and an empty reason. A refusal returns
// one of the Reason constants and an error wrapping ErrPaymentRefused with
// the detail; payer is also set once the authorization has parsed, because
// the specification's VerifyResponse reports it on refusals too.
//
// Cheap structural checks run before the signature, in the order of the
// reference facilitator, so the reason names the first rule broken.
func VerifyExact(req PaymentRequirements, p PaymentPayload, now time.Time) (payer common.Address, reason string, err error) {
	return verifyExact(req, p, now, recoverDigest)
}

// verifyExact is VerifyExact with the signature recovery it uses: plain
// recoverDigest, or a Verifier's memory of recovered signers.
func verifyExact(req PaymentRequirements, p PaymentPayload, now time.Time, recoverSigner func(digest [32]byte, sig []byte) (common.Address, error)) (payer common.Address, reason string, err error) {
	refuse := func(reason string, format string, args ...any) (common.Address, string, error) {
		return payer, reason, fmt.Errorf("%w: %s: %s", ErrPaymentRefused, reason, fmt.Sprintf(format, args...))
	}

	if p.X402Version != Version {
		return refuse(ReasonInvalidX402Version, "x402Version %d, want %d", p.X402Version, Version)
	}
	if req.Scheme != SchemeExact {
		return refuse(ReasonUnsupportedScheme, "requirements scheme %q", req.Scheme)
	}
	if p.Accepted.Scheme != req.Scheme {
		return refuse(ReasonInvalidScheme, "payload scheme %q, requirements %q", p.Accepted.Scheme, req.Scheme)
	}
	if _, err := EVMChainID(req.Network); err != nil {
		return refuse(ReasonInvalidNetwork, "requirements: %v", err)
	}
	if p.Accepted.Network != req.Network {
		return refuse(ReasonInvalidNetwork, "payload network %q, requirements %q", p.Accepted.Network, req.Network)
	}
	if m := req.Extra.AssetTransferMethod; m != "" && m != AssetTransferMethodEIP3009 {
		return refuse(ReasonInvalidPaymentRequirements, "asset transfer method %q is not supported: only eip3009 is", m)
	}
	domain, err := DomainFor(req)
	if err != nil {
		return refuse(ReasonInvalidPaymentRequirements, "%v", err)
	}
	payTo, ok := parseAddress(req.PayTo)
	if !ok {
		return refuse(ReasonInvalidPaymentRequirements, "payTo %q is not an address", req.PayTo)
	}
	amount, err := parseUint256(req.Amount)
	if err != nil {
		return refuse(ReasonInvalidPaymentRequirements, "amount: %v", err)
	}

	auth, err := parseAuthorization(p.Payload.Authorization)
	if err != nil {
		return refuse(ReasonInvalidPayload, "%v", err)
	}
	payer = auth.from

	if auth.to != payTo {
		return refuse(ReasonRecipientMismatch, "authorization pays %s, payTo is %s", auth.to.Hex(), payTo.Hex())
	}
	if auth.value.Cmp(amount) != 0 {
		return refuse(ReasonValueMismatch, "authorization value %s, amount %s", auth.value, amount)
	}
	unix := big.NewInt(now.Unix())
	if deadline := new(big.Int).Add(unix, big.NewInt(validBeforeMarginSeconds)); auth.validBefore.Cmp(deadline) < 0 {
		return refuse(ReasonValidBefore, "validBefore %s is earlier than %s (now + %ds)", auth.validBefore, deadline, validBeforeMarginSeconds)
	}
	if auth.validAfter.Cmp(unix) > 0 {
		return refuse(ReasonValidAfter, "validAfter %s is later than now %s", auth.validAfter, unix)
	}
	// Scheme, network, amount and payTo of the accepted offer are covered
	// above through the authorization; the asset is not, and a payload made
	// for another token must not be verified against ours.
	if !sameAddress(p.Accepted.Asset, req.Asset) {
		return refuse(ReasonInvalidPaymentRequirements, "payload accepted asset %q, requirements %q", p.Accepted.Asset, req.Asset)
	}

	sig, err := hexutil.Decode(p.Payload.Signature)
	if err != nil {
		return refuse(ReasonInvalidSignature, "signature is not 0x-hex: %v", err)
	}
	signer, err := recoverSigner(auth.digest(domain), sig)
	if err != nil {
		return refuse(ReasonInvalidSignature, "%v", err)
	}
	if signer != auth.from {
		return refuse(ReasonInvalidSignature, "signed by %s, not by from %s", signer.Hex(), auth.from.Hex())
	}
	return payer, "", nil
}

// sameAddress compares two hex addresses ignoring letter case, since
// EIP-55 checksumming changes only the case.
func sameAddress(a, b string) bool {
	return strings.EqualFold(a, b)
}

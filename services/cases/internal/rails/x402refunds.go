package rails

import (
	"context"
	"crypto/ecdsa"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/pcourt/pcourt/libs/x402"
	"github.com/pcourt/pcourt/libs/x402/facilitator"
)

var (
	// ErrRefused is wrapped by every *Refusal: the transfer was refused and
	// nothing moved.
	ErrRefused = errors.New("refund refused")
	// ErrUnavailable reports that no answer about the transfer came back:
	// the facilitator was unreachable, overloaded, misconfigured for us, or
	// lost its answer after the request was sent. The transfer may have
	// settled; sending the same transfer again settles it or answers the
	// settlement, so the caller retries and never records it as failed with
	// nothing moved.
	ErrUnavailable = errors.New("refund rail unavailable")
	// ErrNonceUsed reports that the execution's nonce was spent by another
	// authorization of the operator: a different transfer under the same
	// execution id (its terms changed, or the validity rule did), or the
	// same one on a facilitator that does not answer repeats with the
	// stored settlement. Nothing moved now, and no retry under this
	// execution will ever move anything.
	ErrNonceUsed = errors.New("refund nonce already used by another authorization")
)

// The reasons of refusals made here, before anything is sent. Refusals by
// the facilitator carry its own reason (x402.ReasonInsufficientFunds when
// the operator cannot cover the amount, x402.ReasonValidBefore when the
// execution's authorization has expired unsettled, and so on).
const (
	// ReasonInvalidTransfer: the transfer has no execution id or no
	// creation instant.
	ReasonInvalidTransfer = "invalid_transfer"
	// ReasonInvalidDestination: To is not a 0x-hex address, is the zero
	// address, or is the operator itself.
	ReasonInvalidDestination = "invalid_destination"
	// ReasonInvalidAmount: the amount is zero or not representable.
	ReasonInvalidAmount = "invalid_amount"
	// ReasonUnsupportedCurrency: the award's currency is not USD.
	ReasonUnsupportedCurrency = "unsupported_currency"
	// ReasonUnsupportedNetwork: the rail is not configured for the network.
	ReasonUnsupportedNetwork = "unsupported_network"
	// ReasonUnsupportedAsset: the asset is not the network's USDC.
	ReasonUnsupportedAsset = "unsupported_asset"
)

// Refusal is a transfer refused, here or by the facilitator: nothing moved.
// Reason is one of the Reason constants or the facilitator's reason.
type Refusal struct {
	Reason string
	Detail string
}

func (r *Refusal) Error() string {
	if r.Detail == "" {
		return "refund refused: " + r.Reason
	}
	return "refund refused: " + r.Reason + ": " + r.Detail
}

// Unwrap makes every refusal errors.Is ErrRefused.
func (r *Refusal) Unwrap() error { return ErrRefused }

func refuse(reason, format string, args ...any) *Refusal {
	return &Refusal{Reason: reason, Detail: fmt.Sprintf(format, args...)}
}

// The authorization's validity window, as offsets from the creation of the
// execution. They are constants, not configuration: an attempt must sign
// the same authorization whatever the configuration of the replica making
// it, or it would carry the execution's nonce under other terms.
const (
	// ValidAfterSkew backdates validAfter, as the reference client does,
	// so a facilitator whose clock runs behind ours takes the transfer.
	ValidAfterSkew = 10 * time.Minute
	// Validity is how long after its creation an execution's refund can
	// settle. Retries of a failed execution (the operator unfunded, the
	// facilitator down) work within it. Past it the authorization is
	// refused unsettled (x402.ReasonValidBefore), and since its nonce was
	// never used it can never settle: only then may the refund be made by
	// a new execution without risk of paying twice. Asking again still
	// answers the settlement of one that did settle.
	Validity = 30 * 24 * time.Hour
)

// maxTimeoutSeconds is the payment window the requirements state; it is
// part of the request, not of the signature, and constant so every
// attempt sends the same bytes.
const maxTimeoutSeconds = 60

// Config configures X402Refunds.
type Config struct {
	// Networks are the CAIP-2 networks the rail refunds on, each with a
	// USDC deployment package x402 knows, and where the operator holds
	// funds.
	Networks []string
}

// Validate reports the first unusable setting.
func (c Config) Validate() error {
	if len(c.Networks) == 0 {
		return errors.New("x402r refunds: at least one network required")
	}
	for _, n := range c.Networks {
		if _, ok := x402.USDC(n); !ok {
			return fmt.Errorf("x402r refunds: network %q has no known USDC", n)
		}
	}
	return nil
}

// Settler settles a signed payment; *facilitator.Client is one. Its
// errors must wrap facilitator.ErrUnavailable, ErrOutcomeUnknown or
// ErrRejected, and a refusal must come back as an answer with Success
// false, as facilitator.Client documents.
type Settler interface {
	Settle(ctx context.Context, req x402.SettleRequest) (x402.SettleResponse, error)
}

// X402Refunds pays refunds from the operator's account through a
// facilitator. It holds no state: everything an attempt sends is derived
// from the Transfer, so any replica makes the same attempt. It is safe for
// concurrent use.
type X402Refunds struct {
	assets      map[string]x402.Asset // by network
	facilitator Settler
	key         *ecdsa.PrivateKey
	operator    common.Address
}

// NewX402Refunds returns the rail paying from the account of operatorKey
// through f.
func NewX402Refunds(cfg Config, f Settler, operatorKey *ecdsa.PrivateKey) (*X402Refunds, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if f == nil || operatorKey == nil {
		return nil, errors.New("x402r refunds: a facilitator and an operator key are required")
	}
	assets := make(map[string]x402.Asset, len(cfg.Networks))
	for _, n := range cfg.Networks {
		a, _ := x402.USDC(n) // Validate checked it exists
		assets[n] = a
	}
	return &X402Refunds{assets: assets, facilitator: f, key: operatorKey, operator: crypto.PubkeyToAddress(operatorKey.PublicKey)}, nil
}

// Operator returns the operator's address, 0x-hex with the EIP-55
// checksum: the account refunds are paid from, which must hold USDC on
// every configured network.
func (r *X402Refunds) Operator() string { return r.operator.Hex() }

// Transfer is one refund an execution orders.
type Transfer struct {
	// ExecutionID identifies the execution. It is the refund's identity:
	// every attempt of one execution is the same transfer (Nonce).
	ExecutionID string
	// Network is the CAIP-2 network of the original payment.
	Network string
	// Asset is the token contract of the original payment, 0x-hex: the
	// USDC of Network (x402.USDC).
	Asset string
	// To is the payer of the original payment, 0x-hex.
	To string
	// Amount is in the asset's atomic units (AtomicUSDC converts cents).
	Amount uint64
	// CreatedAt is when the execution was created; the authorization's
	// validity window is fixed from it.
	CreatedAt time.Time
}

// Receipt is a settled refund.
type Receipt struct {
	// Transaction is the facilitator's transaction hash.
	Transaction string
	Network     string
	Asset       string
	// From is the operator, To the payer refunded, both 0x-hex.
	From string
	To   string
	// Amount is in atomic units.
	Amount uint64
	// ConfirmedAt is when this attempt's answer confirmed the settlement.
	// The facilitator's answer carries no settlement time, and a repeat
	// is answered later than the settlement, so the caller keeps the
	// receipt of the first attempt it records.
	ConfirmedAt time.Time
}

// nonceDomain separates the refund nonces from every other use of
// keccak256 over an execution id: a nonce of this rail can only be a
// refund of that execution.
const nonceDomain = "pcourt/x402r-refund/v1\x00"

// Nonce returns the EIP-3009 nonce of an execution's refund:
// keccak256(nonceDomain ‖ executionID), as 0x-hex of 32 bytes.
func Nonce(executionID string) string {
	return hexutil.Encode(crypto.Keccak256([]byte(nonceDomain + executionID)))
}

// Refund pays t, or answers the settlement of an earlier attempt of the
// same execution. Its errors are a *Refusal, ErrUnavailable or
// ErrNonceUsed (see the package comment).
func (r *X402Refunds) Refund(ctx context.Context, t Transfer) (Receipt, error) {
	req, err := r.request(t)
	if err != nil {
		return Receipt{}, err
	}
	resp, err := r.facilitator.Settle(ctx, req)
	if err != nil {
		// Unreachable, 5xx, a lost answer, or a request the facilitator
		// rejects (its token, its URL): in every case there is no answer
		// about the transfer, and the same request is how to get one.
		return Receipt{}, fmt.Errorf("refund of execution %s: %w: %w", t.ExecutionID, ErrUnavailable, err)
	}
	if !resp.Success {
		return Receipt{}, r.refusal(t, resp)
	}
	if err := r.checkAnswer(t, resp); err != nil {
		return Receipt{}, fmt.Errorf("refund of execution %s: %w: %w", t.ExecutionID, ErrUnavailable, err)
	}
	return Receipt{
		Transaction: resp.Transaction,
		Network:     t.Network,
		Asset:       req.PaymentRequirements.Asset,
		From:        r.operator.Hex(),
		To:          req.PaymentRequirements.PayTo,
		Amount:      t.Amount,
		ConfirmedAt: time.Now().UTC(),
	}, nil
}

// request checks t and builds the signed settlement request, the same
// bytes for every attempt of one transfer.
func (r *X402Refunds) request(t Transfer) (x402.SettleRequest, error) {
	if t.ExecutionID == "" || t.CreatedAt.IsZero() {
		return x402.SettleRequest{}, refuse(ReasonInvalidTransfer, "execution id and creation instant are required")
	}
	asset, ok := r.assets[t.Network]
	if !ok {
		return x402.SettleRequest{}, refuse(ReasonUnsupportedNetwork, "network %q is not one this rail refunds on", t.Network)
	}
	if !strings.EqualFold(t.Asset, asset.Address.Hex()) {
		return x402.SettleRequest{}, refuse(ReasonUnsupportedAsset, "asset %q is not the USDC of %s (%s)", t.Asset, t.Network, asset.Address.Hex())
	}
	if len(t.To) != 42 || !strings.HasPrefix(t.To, "0x") || !common.IsHexAddress(t.To) {
		return x402.SettleRequest{}, refuse(ReasonInvalidDestination, "%q is not a 0x-hex address", t.To)
	}
	to := common.HexToAddress(t.To)
	switch to {
	case common.Address{}:
		return x402.SettleRequest{}, refuse(ReasonInvalidDestination, "the zero address")
	case r.operator:
		return x402.SettleRequest{}, refuse(ReasonInvalidDestination, "the operator itself")
	}
	if t.Amount == 0 {
		return x402.SettleRequest{}, refuse(ReasonInvalidAmount, "zero")
	}
	amount := strconv.FormatUint(t.Amount, 10)
	offer, err := asset.Offer(amount, to, maxTimeoutSeconds)
	if err != nil {
		return x402.SettleRequest{}, fmt.Errorf("refund of execution %s: %w", t.ExecutionID, err)
	}
	domain, err := x402.DomainFor(offer)
	if err != nil {
		return x402.SettleRequest{}, fmt.Errorf("refund of execution %s: %w", t.ExecutionID, err)
	}
	created := t.CreatedAt.Unix()
	auth := x402.Authorization{
		From:        r.operator.Hex(),
		To:          to.Hex(),
		Value:       amount,
		ValidAfter:  strconv.FormatInt(created-int64(ValidAfterSkew/time.Second), 10),
		ValidBefore: strconv.FormatInt(created+int64(Validity/time.Second), 10),
		Nonce:       Nonce(t.ExecutionID),
	}
	sig, err := x402.SignAuthorization(r.key, domain, auth)
	if err != nil {
		return x402.SettleRequest{}, fmt.Errorf("refund of execution %s: %w", t.ExecutionID, err)
	}
	payment := x402.PaymentPayload{
		X402Version: x402.Version,
		Accepted:    offer,
		Payload:     x402.ExactEVMPayload{Signature: hexutil.Encode(sig), Authorization: auth},
	}
	return x402.SettleRequest{X402Version: x402.Version, PaymentPayload: payment, PaymentRequirements: offer}, nil
}

// reasonNonceAlreadyUsed is the facilitators' refusal of an authorization
// whose nonce another one used (the reference facilitators' string, which
// the local facilitator sends too).
const reasonNonceAlreadyUsed = "invalid_exact_evm_nonce_already_used"

func (r *X402Refunds) refusal(t Transfer, resp x402.SettleResponse) error {
	switch resp.ErrorReason {
	case reasonNonceAlreadyUsed:
		return fmt.Errorf("refund of execution %s: %w: %s", t.ExecutionID, ErrNonceUsed, resp.ErrorMessage)
	case x402.ReasonValidAfter:
		// Not valid yet: the facilitator's clock is more than
		// ValidAfterSkew behind ours. It will be valid later.
		return fmt.Errorf("refund of execution %s: %w: %s: %s", t.ExecutionID, ErrUnavailable, resp.ErrorReason, resp.ErrorMessage)
	}
	reason := resp.ErrorReason
	if reason == "" {
		reason = x402.ReasonUnexpectedSettleError
	}
	return &Refusal{Reason: reason, Detail: resp.ErrorMessage}
}

// checkAnswer holds a facilitator's success to the transfer it was asked
// for: a success for anything else is no answer about this one.
func (r *X402Refunds) checkAnswer(t Transfer, resp x402.SettleResponse) error {
	switch {
	case resp.Transaction == "":
		return errors.New("facilitator answered success without a transaction")
	case resp.Network != "" && resp.Network != t.Network:
		return fmt.Errorf("facilitator answered a settlement on %s, not %s", resp.Network, t.Network)
	case resp.Payer != "" && !strings.EqualFold(resp.Payer, r.operator.Hex()):
		return fmt.Errorf("facilitator answered a settlement paid by %s, not the operator %s", resp.Payer, r.operator.Hex())
	case resp.Amount != "" && resp.Amount != strconv.FormatUint(t.Amount, 10):
		return fmt.Errorf("facilitator answered a settlement of %s, not %d", resp.Amount, t.Amount)
	}
	return nil
}

// AtomicUnitsPerCent is how many atomic units of USDC (6 decimals) make
// one US cent: 1 USD = 1,000,000 units, so 1 cent = 10,000.
const AtomicUnitsPerCent = 10_000

// AtomicUSDC converts an award's amount in minor units of currency to
// atomic units of USDC. Only USD converts: USDC is a dollar token, and the
// rail never converts between currencies. A non-positive amount is
// refused too.
func AtomicUSDC(currency string, amountMinor int64) (uint64, error) {
	if currency != "USD" {
		return 0, refuse(ReasonUnsupportedCurrency, "%q: the x402r rail pays USDC, for USD awards only", currency)
	}
	if amountMinor <= 0 {
		return 0, refuse(ReasonInvalidAmount, "%d cents", amountMinor)
	}
	if uint64(amountMinor) > ^uint64(0)/AtomicUnitsPerCent {
		return 0, refuse(ReasonInvalidAmount, "%d cents overflows the atomic units", amountMinor)
	}
	return uint64(amountMinor) * AtomicUnitsPerCent, nil
}

// facilitator.Client is the Settler the service uses.
var _ Settler = (*facilitator.Client)(nil)

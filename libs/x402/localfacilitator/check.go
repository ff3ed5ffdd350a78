package localfacilitator

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/pcourt/pcourt/libs/x402"
)

// ReasonNonceAlreadyUsed is the refusal of an authorization whose EIP-3009
// nonce another authorization of the same payer has already used. Section 9
// of the specification names no code for it; this is the string of the
// reference facilitators (go/mechanisms/evm/exact/facilitator/errors.go,
// typescript/packages/mechanisms/evm/src/exact/facilitator/errors.ts).
//
// Every other reason this facilitator sends is one of the specification's,
// from package x402: those of x402.VerifyExact, x402.ReasonInvalidNetwork
// for a network it does not settle, x402.ReasonInvalidPaymentRequirements
// for another asset, x402.ReasonInsufficientFunds for a balance that does
// not cover the value (or a value above MaxAmount), and
// x402.ReasonInvalidTransactionState for a credit above MaxAmount.
const ReasonNonceAlreadyUsed = "invalid_exact_evm_nonce_already_used"

// refusal is a payment refused with one of the specification's reasons.
type refusal struct {
	reason  string
	message string
	payer   string // 0x-hex, empty when the authorization did not parse
}

func refuse(reason, payer, format string, args ...any) *refusal {
	return &refusal{reason: reason, payer: payer, message: fmt.Sprintf(format, args...)}
}

// payment is a payment that passed every check that needs no ledger, as
// the settlement it would become.
type payment struct {
	acct account
	s    Settlement
}

// contractRequirements returns req with the EIP-712 domain of the token
// contract in place of the one the requirements claim: on chain, the
// contract recovers under its own domain whatever the offer said, so a
// payer who signed under a wrong name or version holds an invalid
// signature.
func contractRequirements(req x402.PaymentRequirements, asset x402.Asset) x402.PaymentRequirements {
	req.Extra.Name = asset.Name
	req.Extra.Version = asset.Version
	return req
}

// check runs every rule that does not need the ledger: protocol version,
// a supported network and its token, then x402.VerifyExact (requirements,
// recipient, amount, time window, EIP-712 signature) under the contract's
// own domain, and the ledger's amount bound. The signature of an
// authorization checked moments ago (its /verify before its /settle) is not
// recovered again: s.verifier remembers its signer.
func (s *Server) check(req x402.VerifyRequest) (payment, *refusal) {
	if req.X402Version != x402.Version {
		return payment{}, refuse(x402.ReasonInvalidX402Version, "", "x402Version %d, want %d", req.X402Version, x402.Version)
	}
	reqs := req.PaymentRequirements
	asset, ok := s.assets[reqs.Network]
	if !ok {
		return payment{}, refuse(x402.ReasonInvalidNetwork, "", "network %q is not supported by this facilitator", reqs.Network)
	}
	if !strings.EqualFold(reqs.Asset, asset.Address.Hex()) {
		return payment{}, refuse(x402.ReasonInvalidPaymentRequirements, "", "asset %q is not the token settled on %s (%s)", reqs.Asset, reqs.Network, asset.Address.Hex())
	}
	p := req.PaymentPayload
	payer, reason, err := s.verifier.VerifyExact(contractRequirements(reqs, asset), p, s.cfg.Now())
	if err != nil {
		var from string
		if payer != (common.Address{}) {
			from = payer.Hex()
		}
		return payment{}, &refusal{reason: reason, payer: from, message: err.Error()}
	}
	auth := p.Payload.Authorization
	// VerifyExact has checked the value equals the amount and is a
	// canonical decimal uint256.
	amount, err := strconv.ParseUint(auth.Value, 10, 64)
	if err != nil || amount > MaxAmount {
		return payment{}, refuse(x402.ReasonInsufficientFunds, payer.Hex(),
			"value %s exceeds what any balance of this ledger can hold (%d)", auth.Value, MaxAmount)
	}
	domain, err := x402.DomainFor(contractRequirements(reqs, asset))
	if err != nil {
		return payment{}, refuse(x402.ReasonUnexpectedVerifyError, payer.Hex(), "%v", err)
	}
	tx, err := transactionID(domain, p.Payload)
	if err != nil {
		return payment{}, refuse(x402.ReasonUnexpectedVerifyError, payer.Hex(), "%v", err)
	}
	nonce, err := hexutil.Decode(auth.Nonce)
	if err != nil {
		return payment{}, refuse(x402.ReasonUnexpectedVerifyError, payer.Hex(), "nonce: %v", err)
	}
	return payment{
		acct: account{network: reqs.Network, asset: asset.Address},
		s: Settlement{
			Transaction: tx,
			Network:     reqs.Network,
			Asset:       asset.Address,
			From:        payer,
			To:          common.HexToAddress(auth.To),
			Amount:      amount,
			Nonce:       hexutil.Encode(nonce),
		},
	}, nil
}

// transactionID names the settlement of an authorization: keccak256 of its
// EIP-712 digest and its signature (v normalized to 27 or 28). It is
// deterministic, so the same signed authorization always gets the same id,
// and it covers the signature, as a transaction hash would.
func transactionID(domain x402.Domain, p x402.ExactEVMPayload) (string, error) {
	digest, err := x402.AuthorizationDigest(domain, p.Authorization)
	if err != nil {
		return "", fmt.Errorf("transaction id: %w", err)
	}
	sig, err := hexutil.Decode(p.Signature)
	if err != nil || len(sig) != crypto.SignatureLength {
		return "", fmt.Errorf("transaction id: signature is not 0x-hex of %d bytes", crypto.SignatureLength)
	}
	if v := sig[crypto.RecoveryIDOffset]; v < 27 {
		sig[crypto.RecoveryIDOffset] = v + 27
	}
	return hexutil.Encode(crypto.Keccak256(digest[:], sig)), nil
}

// replayKey returns the account and transaction id that a settlement of
// req would be stored under, without verifying anything; ok is false when
// req cannot name one.
func (s *Server) replayKey(req x402.VerifyRequest) (acct account, tx string, ok bool) {
	reqs := req.PaymentRequirements
	asset, found := s.assets[reqs.Network]
	if !found || !strings.EqualFold(reqs.Asset, asset.Address.Hex()) {
		return account{}, "", false
	}
	domain, err := x402.DomainFor(contractRequirements(reqs, asset))
	if err != nil {
		return account{}, "", false
	}
	tx, err = transactionID(domain, req.PaymentPayload.Payload)
	if err != nil {
		return account{}, "", false
	}
	return account{network: reqs.Network, asset: asset.Address}, tx, true
}

// answers reports whether a stored settlement is the outcome of req: the
// same signed authorization (the transaction id covers digest and
// signature) paying the amount and recipient req asks for.
func answers(st Settlement, req x402.VerifyRequest) bool {
	reqs := req.PaymentRequirements
	return req.X402Version == x402.Version &&
		reqs.Scheme == x402.SchemeExact &&
		reqs.Amount == strconv.FormatUint(st.Amount, 10) &&
		strings.EqualFold(reqs.PayTo, st.To.Hex())
}

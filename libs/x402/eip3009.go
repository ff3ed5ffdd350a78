package x402

import (
	"crypto/ecdsa"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/big"
	"strconv"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/crypto"
)

var (
	// ErrMalformedAuthorization reports authorization fields that do not
	// parse: addresses, integers or the nonce.
	ErrMalformedAuthorization = errors.New("malformed EIP-3009 authorization")
	// ErrInvalidSignature reports a signature that is malformed or does not
	// recover to the payer.
	ErrInvalidSignature = errors.New("invalid EIP-712 signature")
	// ErrInvalidDomain reports an EIP-712 domain that cannot be hashed as
	// the token contract's: empty name or version, zero chain id or
	// contract.
	ErrInvalidDomain = errors.New("invalid EIP-712 domain")
	// ErrInvalidRequirements reports PaymentRequirements that cannot be paid
	// with the exact EVM scheme as stated.
	ErrInvalidRequirements = errors.New("invalid payment requirements")
)

// Domain is the EIP-712 domain of an EIP-3009 token contract. All four
// fields are part of the domain separator; the reference clients sign with
// exactly these and no salt.
type Domain struct {
	Name              string
	Version           string
	ChainID           uint64
	VerifyingContract common.Address
}

func (d Domain) validate() error {
	switch {
	case d.Name == "":
		return fmt.Errorf("empty name: %w", ErrInvalidDomain)
	case d.Version == "":
		return fmt.Errorf("empty version: %w", ErrInvalidDomain)
	case d.ChainID == 0:
		return fmt.Errorf("zero chain id: %w", ErrInvalidDomain)
	case d.VerifyingContract == (common.Address{}):
		return fmt.Errorf("zero verifying contract: %w", ErrInvalidDomain)
	}
	return nil
}

// DomainFor derives the EIP-712 domain a payer signs under for req: chain id
// from the CAIP-2 network, verifying contract from the asset, name and
// version from extra, exactly as the reference client does.
func DomainFor(req PaymentRequirements) (Domain, error) {
	chainID, err := EVMChainID(req.Network)
	if err != nil {
		return Domain{}, fmt.Errorf("domain for %s: %w: %w", req.Network, ErrInvalidRequirements, err)
	}
	contract, ok := parseAddress(req.Asset)
	if !ok {
		return Domain{}, fmt.Errorf("domain for %s: asset %q is not an address: %w", req.Network, req.Asset, ErrInvalidRequirements)
	}
	d := Domain{Name: req.Extra.Name, Version: req.Extra.Version, ChainID: chainID, VerifyingContract: contract}
	if err := d.validate(); err != nil {
		return Domain{}, fmt.Errorf("domain for %s: %w: %w", req.Network, ErrInvalidRequirements, err)
	}
	return d, nil
}

// authorization is Authorization parsed into the values that are signed.
type authorization struct {
	from, to                       common.Address
	value, validAfter, validBefore *big.Int
	nonce                          [32]byte
}

func parseAuthorization(a Authorization) (authorization, error) {
	var p authorization
	var ok bool
	if p.from, ok = parseAddress(a.From); !ok {
		return authorization{}, fmt.Errorf("from %q is not an address: %w", a.From, ErrMalformedAuthorization)
	}
	if p.to, ok = parseAddress(a.To); !ok {
		return authorization{}, fmt.Errorf("to %q is not an address: %w", a.To, ErrMalformedAuthorization)
	}
	var err error
	if p.value, err = parseUint256(a.Value); err != nil {
		return authorization{}, fmt.Errorf("value: %w: %w", ErrMalformedAuthorization, err)
	}
	if p.validAfter, err = parseUint256(a.ValidAfter); err != nil {
		return authorization{}, fmt.Errorf("validAfter: %w: %w", ErrMalformedAuthorization, err)
	}
	if p.validBefore, err = parseUint256(a.ValidBefore); err != nil {
		return authorization{}, fmt.Errorf("validBefore: %w: %w", ErrMalformedAuthorization, err)
	}
	nonce, err := hexutil.Decode(a.Nonce)
	if err != nil || len(nonce) != len(p.nonce) {
		return authorization{}, fmt.Errorf("nonce %q is not 0x-hex of 32 bytes: %w", a.Nonce, ErrMalformedAuthorization)
	}
	copy(p.nonce[:], nonce)
	return p, nil
}

// The EIP-712 type hashes of the four-field domain and of EIP-3009's
// transferWithAuthorization (specification 6.1.1): keccak256 of each type's
// encodeType string. The two types are fixed, so their encoding is written
// out below rather than interpreted from a type table for every payment
// (go-ethereum's TypedData did that, and it was most of the cost of a
// digest); the tests hold this encoding equal to go-ethereum's.
var (
	domainTypeHash   = crypto.Keccak256Hash([]byte("EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)"))
	transferTypeHash = crypto.Keccak256Hash([]byte("TransferWithAuthorization(address from,address to,uint256 value,uint256 validAfter,uint256 validBefore,bytes32 nonce)"))
)

// AuthorizationDigest returns the EIP-712 digest of auth under domain: the
// 32 bytes a payer signs and the token contract recovers from.
func AuthorizationDigest(domain Domain, auth Authorization) ([32]byte, error) {
	if err := domain.validate(); err != nil {
		return [32]byte{}, fmt.Errorf("authorization digest: %w", err)
	}
	p, err := parseAuthorization(auth)
	if err != nil {
		return [32]byte{}, fmt.Errorf("authorization digest: %w", err)
	}
	return p.digest(domain), nil
}

// digest is keccak256("\x19\x01" ‖ domainSeparator ‖ hashStruct(message)),
// where each hash is keccak256 of the type hash followed by the members as
// 32-byte words: strings by their keccak256, integers big-endian, addresses
// left-padded, bytes32 as they are.
func (p authorization) digest(d Domain) [32]byte {
	var chainID [32]byte
	binary.BigEndian.PutUint64(chainID[24:], d.ChainID)
	separator := crypto.Keccak256(domainTypeHash[:],
		crypto.Keccak256([]byte(d.Name)), crypto.Keccak256([]byte(d.Version)),
		chainID[:], word(d.VerifyingContract[:]))
	message := crypto.Keccak256(transferTypeHash[:],
		word(p.from[:]), word(p.to[:]),
		p.value.FillBytes(make([]byte, 32)), p.validAfter.FillBytes(make([]byte, 32)), p.validBefore.FillBytes(make([]byte, 32)),
		p.nonce[:])
	return crypto.Keccak256Hash([]byte{0x19, 0x01}, separator, message)
}

// word left-pads b to one 32-byte word.
func word(b []byte) []byte { return common.LeftPadBytes(b, 32) }

// RecoverSigner returns the address whose key produced sig over auth under
// domain. sig is the 65-byte r || s || v; v may be 27/28 (what wallets and
// viem produce) or 0/1. Like the USDC contract, it refuses a high s, so a
// signature accepted here is one the chain would accept.
func RecoverSigner(domain Domain, auth Authorization, sig []byte) (common.Address, error) {
	digest, err := AuthorizationDigest(domain, auth)
	if err != nil {
		return common.Address{}, fmt.Errorf("recovering signer: %w", err)
	}
	return recoverDigest(digest, sig)
}

func recoverDigest(digest [32]byte, sig []byte) (common.Address, error) {
	if len(sig) != crypto.SignatureLength {
		return common.Address{}, fmt.Errorf("recovering signer: %d bytes, want %d: %w", len(sig), crypto.SignatureLength, ErrInvalidSignature)
	}
	v := sig[crypto.RecoveryIDOffset]
	if v == 27 || v == 28 {
		v -= 27
	}
	r := new(big.Int).SetBytes(sig[:32])
	s := new(big.Int).SetBytes(sig[32:64])
	if !crypto.ValidateSignatureValues(v, r, s, true) {
		return common.Address{}, fmt.Errorf("recovering signer: r, s or v out of range: %w", ErrInvalidSignature)
	}
	normalized := make([]byte, crypto.SignatureLength)
	copy(normalized, sig)
	normalized[crypto.RecoveryIDOffset] = v
	pub, err := crypto.SigToPub(digest[:], normalized)
	if err != nil {
		return common.Address{}, fmt.Errorf("recovering signer: %w: %w", ErrInvalidSignature, err)
	}
	return crypto.PubkeyToAddress(*pub), nil
}

// SignAuthorization signs auth under domain with key, for our own paying
// client. The result is r || s || v with v in {27, 28}, the form the
// reference clients send and EIP-3009 contracts take.
func SignAuthorization(key *ecdsa.PrivateKey, domain Domain, auth Authorization) ([]byte, error) {
	digest, err := AuthorizationDigest(domain, auth)
	if err != nil {
		return nil, fmt.Errorf("signing authorization: %w", err)
	}
	sig, err := crypto.Sign(digest[:], key)
	if err != nil {
		return nil, fmt.Errorf("signing authorization: %w", err)
	}
	sig[crypto.RecoveryIDOffset] += 27
	return sig, nil
}

// validAfterSkewSeconds backdates validAfter of our own authorizations, as
// the reference client does, so that a verifier whose clock runs behind
// ours does not see a payment that is not valid yet.
const validAfterSkewSeconds = 600

// NewExactPayment builds and signs a PaymentPayload for req with key, for
// our own paying client: validAfter ten minutes before now, validBefore
// maxTimeoutSeconds after it, a 32-byte nonce read from random
// (crypto/rand.Reader outside tests). The caller adds the resource and the
// extensions echoed from the challenge.
func NewExactPayment(key *ecdsa.PrivateKey, req PaymentRequirements, now time.Time, random io.Reader) (PaymentPayload, error) {
	domain, err := DomainFor(req)
	if err != nil {
		return PaymentPayload{}, fmt.Errorf("building payment: %w", err)
	}
	payTo, ok := parseAddress(req.PayTo)
	if !ok {
		return PaymentPayload{}, fmt.Errorf("building payment: payTo %q is not an address: %w", req.PayTo, ErrInvalidRequirements)
	}
	if req.MaxTimeoutSeconds <= 0 {
		return PaymentPayload{}, fmt.Errorf("building payment: maxTimeoutSeconds %d: %w", req.MaxTimeoutSeconds, ErrInvalidRequirements)
	}
	var nonce [32]byte
	if _, err := io.ReadFull(random, nonce[:]); err != nil {
		return PaymentPayload{}, fmt.Errorf("building payment: reading nonce: %w", err)
	}
	unix := now.Unix()
	auth := Authorization{
		From:        crypto.PubkeyToAddress(key.PublicKey).Hex(),
		To:          payTo.Hex(),
		Value:       req.Amount,
		ValidAfter:  strconv.FormatInt(unix-validAfterSkewSeconds, 10),
		ValidBefore: strconv.FormatInt(unix+int64(req.MaxTimeoutSeconds), 10),
		Nonce:       hexutil.Encode(nonce[:]),
	}
	sig, err := SignAuthorization(key, domain, auth)
	if err != nil {
		return PaymentPayload{}, fmt.Errorf("building payment: %w", err)
	}
	return PaymentPayload{
		X402Version: Version,
		Accepted:    req,
		Payload:     ExactEVMPayload{Signature: hexutil.Encode(sig), Authorization: auth},
	}, nil
}

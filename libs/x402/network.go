package x402

import (
	"errors"
	"fmt"
	"math/big"
	"strconv"
	"strings"

	"github.com/ethereum/go-ethereum/common"
)

// NamespaceEIP155 is the CAIP-2 namespace of EVM chains, whose reference is
// the EIP-155 chain id.
const NamespaceEIP155 = "eip155"

// ErrInvalidNetwork reports a network id that is not CAIP-2, or not an EVM
// chain where one is required.
var ErrInvalidNetwork = errors.New("invalid network")

// Network is a parsed CAIP-2 chain id, "namespace:reference".
type Network struct {
	Namespace string
	Reference string
}

// String returns the CAIP-2 form.
func (n Network) String() string { return n.Namespace + ":" + n.Reference }

// ParseNetwork parses a CAIP-2 chain id. The grammar is CAIP-2's:
// namespace [-a-z0-9]{3,8}, reference [-_a-zA-Z0-9]{1,32}.
func ParseNetwork(s string) (Network, error) {
	ns, ref, ok := strings.Cut(s, ":")
	if !ok {
		return Network{}, fmt.Errorf("network %q: no colon: %w", s, ErrInvalidNetwork)
	}
	if len(ns) < 3 || len(ns) > 8 || !allBytes(ns, isNamespaceChar) {
		return Network{}, fmt.Errorf("network %q: bad namespace: %w", s, ErrInvalidNetwork)
	}
	if len(ref) < 1 || len(ref) > 32 || !allBytes(ref, isReferenceChar) {
		return Network{}, fmt.Errorf("network %q: bad reference: %w", s, ErrInvalidNetwork)
	}
	return Network{Namespace: ns, Reference: ref}, nil
}

// EVMChainID returns the EIP-155 chain id of an "eip155:<id>" network. The
// id must be canonical decimal (no sign, no leading zero, not zero) so that
// one chain has exactly one spelling: offers are matched by string.
func EVMChainID(network string) (uint64, error) {
	n, err := ParseNetwork(network)
	if err != nil {
		return 0, err
	}
	if n.Namespace != NamespaceEIP155 {
		return 0, fmt.Errorf("network %q: not an EVM chain: %w", network, ErrInvalidNetwork)
	}
	if !isCanonicalDecimal(n.Reference) || n.Reference == "0" {
		return 0, fmt.Errorf("network %q: chain id is not a positive canonical decimal: %w", network, ErrInvalidNetwork)
	}
	id, err := strconv.ParseUint(n.Reference, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("network %q: chain id: %w: %w", network, ErrInvalidNetwork, err)
	}
	return id, nil
}

// Asset is a token the exact scheme can be paid in on one network: where it
// lives and the EIP-712 domain its contract signs under.
type Asset struct {
	// Network is the CAIP-2 chain id.
	Network string
	// Address is the token contract, the EIP-712 verifyingContract.
	Address common.Address
	// Name and Version are the token's EIP-712 domain name and version,
	// advertised to payers in PaymentRequirements.extra. They differ between
	// deployments of the same token (Base says "USD Coin", Base Sepolia
	// "USDC"), and a wrong one makes every signature fail.
	Name    string
	Version string
	// Decimals of the token: 6 for USDC, so USD 0.010000 is amount 10000.
	Decimals int
	// Testnet is true for a test network, whose tokens are worth nothing.
	Testnet bool
}

// knownUSDC lists the USDC deployments this service can be paid with. The
// values match the defaults of the reference implementation
// (typescript/packages/mechanisms/evm/src/shared/defaultAssets.ts) and the
// specification's Base Sepolia examples.
var knownUSDC = []Asset{
	{
		Network:  "eip155:8453", // Base
		Address:  common.HexToAddress("0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"),
		Name:     "USD Coin",
		Version:  "2",
		Decimals: 6,
	},
	{
		Network:  "eip155:84532", // Base Sepolia
		Address:  common.HexToAddress("0x036CbD53842c5426634e7929541eC2318f3dCF7e"),
		Name:     "USDC",
		Version:  "2",
		Decimals: 6,
		Testnet:  true,
	},
}

// USDC returns the USDC deployment on network, and whether there is one this
// package knows.
func USDC(network string) (Asset, bool) {
	for _, a := range knownUSDC {
		if a.Network == network {
			return a, true
		}
	}
	return Asset{}, false
}

// KnownUSDC returns every USDC deployment this package knows, in a fresh
// slice the caller may keep.
func KnownUSDC() []Asset {
	return append([]Asset(nil), knownUSDC...)
}

// The environments of a credential (and of the resources it pays for):
// sandbox pays with test tokens only, live with real ones only.
const (
	EnvironmentSandbox = "sandbox"
	EnvironmentLive    = "live"
)

// ErrNetworkEnvironment reports a network that an environment may not offer
// or accept: a test network in live (its tokens are free to mint, so it
// would open live cases for nothing), or a main network in sandbox (real
// money for test work).
var ErrNetworkEnvironment = errors.New("network does not belong to the environment")

// NetworkAllowed reports whether environment may offer and accept USDC on
// network: a known main network for live, a known test network for sandbox.
func NetworkAllowed(environment, network string) bool {
	a, ok := USDC(network)
	if !ok {
		return false
	}
	switch environment {
	case EnvironmentLive:
		return !a.Testnet
	case EnvironmentSandbox:
		return a.Testnet
	}
	return false
}

// CheckNetworks validates the networks configured for an environment: at
// least one, each with a known USDC, each of the environment's kind. A
// configuration that mixes them must refuse to start.
func CheckNetworks(environment string, networks []string) error {
	if environment != EnvironmentSandbox && environment != EnvironmentLive {
		return fmt.Errorf("environment %q: must be sandbox or live", environment)
	}
	if len(networks) == 0 {
		return fmt.Errorf("%s: at least one network required", environment)
	}
	for _, n := range networks {
		if _, ok := USDC(n); !ok {
			return fmt.Errorf("%s: network %q has no known USDC", environment, n)
		}
		if !NetworkAllowed(environment, n) {
			return fmt.Errorf("%s: network %q: %w", environment, n, ErrNetworkEnvironment)
		}
	}
	return nil
}

// DefaultNetworks returns the networks an environment offers when none are
// configured: Base for live, Base Sepolia for sandbox.
func DefaultNetworks(environment string) []string {
	if environment == EnvironmentLive {
		return []string{"eip155:8453"}
	}
	return []string{"eip155:84532"}
}

// minMaxTimeoutSeconds is the smallest payment window worth advertising: a
// verifier refuses an authorization that expires within validBeforeMargin,
// and the reference client signs validBefore = now + maxTimeoutSeconds.
const minMaxTimeoutSeconds = 2 * validBeforeMarginSeconds

// Offer returns the exact-scheme PaymentRequirements for amount atomic units
// of a paid to payTo, with a payment window of maxTimeoutSeconds. amount is
// a canonical decimal string ("10000" for USD 0.010000 of USDC).
func (a Asset) Offer(amount string, payTo common.Address, maxTimeoutSeconds int) (PaymentRequirements, error) {
	if _, err := parseUint256(amount); err != nil {
		return PaymentRequirements{}, fmt.Errorf("offer amount: %w: %w", ErrInvalidRequirements, err)
	}
	if amount == "0" {
		return PaymentRequirements{}, fmt.Errorf("offer amount: zero: %w", ErrInvalidRequirements)
	}
	if payTo == (common.Address{}) {
		return PaymentRequirements{}, fmt.Errorf("offer payTo: zero address: %w", ErrInvalidRequirements)
	}
	if maxTimeoutSeconds < minMaxTimeoutSeconds {
		return PaymentRequirements{}, fmt.Errorf("offer maxTimeoutSeconds %d below %d: %w", maxTimeoutSeconds, minMaxTimeoutSeconds, ErrInvalidRequirements)
	}
	if _, err := EVMChainID(a.Network); err != nil {
		return PaymentRequirements{}, fmt.Errorf("offer: %w", err)
	}
	return PaymentRequirements{
		Scheme:            SchemeExact,
		Network:           a.Network,
		Amount:            amount,
		Asset:             a.Address.Hex(),
		PayTo:             payTo.Hex(),
		MaxTimeoutSeconds: maxTimeoutSeconds,
		Extra:             Extra{Name: a.Name, Version: a.Version},
	}, nil
}

// maxUint256 bounds the EIP-3009 integer fields.
var maxUint256 = new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 256), big.NewInt(1))

// parseUint256 parses a canonical decimal uint256: digits only, no leading
// zero. The wire carries these as strings; insisting on one spelling keeps
// string comparison of amounts equal to numeric comparison.
func parseUint256(s string) (*big.Int, error) {
	if !isCanonicalDecimal(s) || len(s) > 78 {
		return nil, fmt.Errorf("%q is not a canonical decimal uint256", s)
	}
	n, ok := new(big.Int).SetString(s, 10)
	if !ok || n.Cmp(maxUint256) > 0 {
		return nil, fmt.Errorf("%q is not a uint256", s)
	}
	return n, nil
}

func isCanonicalDecimal(s string) bool {
	if s == "" || (len(s) > 1 && s[0] == '0') {
		return false
	}
	return allBytes(s, func(c byte) bool { return '0' <= c && c <= '9' })
}

// parseAddress parses a 0x-prefixed 20-byte hex address in any letter case.
// common.IsHexAddress alone would also take it without the prefix.
func parseAddress(s string) (common.Address, bool) {
	if len(s) != 42 || !strings.HasPrefix(s, "0x") || !common.IsHexAddress(s) {
		return common.Address{}, false
	}
	return common.HexToAddress(s), true
}

func allBytes(s string, ok func(byte) bool) bool {
	for i := 0; i < len(s); i++ {
		if !ok(s[i]) {
			return false
		}
	}
	return true
}

func isNamespaceChar(c byte) bool {
	return 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-'
}

func isReferenceChar(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_'
}

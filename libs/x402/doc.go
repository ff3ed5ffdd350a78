// Package x402 is the protocol core of x402 version 2 as the readiness
// service speaks it: the wire types, the codec of the PAYMENT-REQUIRED,
// PAYMENT-SIGNATURE and PAYMENT-RESPONSE headers, and the "exact" scheme on
// EVM networks, where the payer signs an EIP-3009 TransferWithAuthorization
// as EIP-712 typed data for the token contract (USDC).
//
// The package is pure: no HTTP framework, no storage, no clock and no
// randomness of its own. Callers pass the time and the random source, so the
// same functions serve the resource server (matching a payment against its
// own offers), the local facilitator (verifying a signature before settling
// into its ledger) and our own paying client (signing an authorization).
//
// The wire format follows the x402 reference specification
// (github.com/x402-foundation/x402, formerly coinbase/x402):
// specs/x402-specification-v2.md, specs/transports-v2/http.md and
// specs/schemes/exact/scheme_exact_evm.md. Standard clients such as the
// reference @x402/fetch with @x402/evm must interoperate with what this
// package produces and accepts, so field names, JSON shapes and header
// encodings are taken from those documents verbatim.
package x402

// Package facilitator is the x402 facilitator side of the project: the
// local facilitator that dev and tests run instead of a chain, and the HTTP
// client the readiness service uses to talk to any facilitator, local or
// real.
//
// The local facilitator speaks the version 2 facilitator API of the x402
// specification (x402-specification-v2.md, section 7: POST /verify, POST
// /settle, GET /supported) for the exact scheme on EVM. It checks every
// payment cryptographically with package x402 (EIP-712 recovery, time
// window, amount, recipient), and then does what the token contract would
// do on chain: refuse a used EIP-3009 nonce and a balance that does not
// cover the value, and otherwise move the value from payer to recipient.
// Instead of a chain it keeps balances, used nonces and settlements in a
// Redis Ledger, where each settlement is one Lua step.
//
// Amounts are integers of the token's atomic units (micro-USDC). The ledger
// keeps every balance at or below MaxAmount (2^53-1) so that its Lua
// scripts compare numbers exactly; see Ledger.
package facilitator

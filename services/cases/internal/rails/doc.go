// Package rails moves the money an award's execution orders. X402Refunds is
// the x402r rail: it pays a refund back to the payer of an original x402
// payment, as a transfer the platform's refund operator signs and an x402
// facilitator settles.
//
// # The transfer
//
// A refund is an EIP-3009 TransferWithAuthorization from the operator to
// the payer, signed as EIP-712 typed data for the USDC contract of the
// payment's network, exactly what a paying client signs for the "exact"
// scheme (package x402). It is sent to the facilitator's POST /settle
// against PaymentRequirements whose payTo is the payer, so the
// facilitator's own checks (signature, recipient, value, window, balance,
// nonce) apply to the refund as to any payment. /verify is not asked
// first: it refuses an authorization whose nonce is spent even when this
// very authorization spent it, so it would turn a retry of a settled
// refund into a refusal; /settle runs every check of /verify anyway.
//
// # Settled once
//
// An execution may be attempted many times: by a retry with the same
// Idempotency-Key, by another replica that picked the same command, by the
// same replica after a crash between sending and recording. Each attempt
// must end in the same single transfer. That holds because every attempt
// sends the same bytes:
//
//   - the EIP-3009 nonce is keccak256 of a domain-separated string naming
//     the execution id (Nonce), so one execution has one nonce;
//   - validAfter and validBefore are fixed offsets from the instant the
//     execution was created, never from the clock at the attempt;
//   - the signature is deterministic: go-ethereum signs secp256k1 with
//     RFC 6979 nonces, so one key and one digest give one signature;
//   - the requirements are built from the transfer alone.
//
// The facilitator (and the chain behind a real one) uses a nonce once per
// authorizer: the local facilitator's ledger settles an authorization in
// one Lua step that first looks the nonce up, answers a repeat of the
// settled authorization with the stored settlement, and refuses any other
// authorization that carries a used nonce. So twenty concurrent attempts
// of one execution settle one transfer, and all twenty learn the same
// transaction; an attempt whose answer was lost learns it by asking again.
//
// What this rests on, and what breaks it: the transfer an execution names
// (network, payer, amount, creation instant) must never change, and the
// operator key must not change while executions are unsettled; a new key
// is a new authorizer, whose nonces are all unused. A different transfer
// under a used nonce is refused as ErrNonceUsed, never paid.
//
// # Failures
//
// Refund's errors fall in three classes the caller maps:
//
//   - *Refusal (errors.Is ErrRefused): nothing moved, and sending the same
//     transfer again will be refused the same way until its cause is fixed
//     (the operator funded, the destination corrected by a new execution).
//   - ErrUnavailable: no answer about this transfer; it may or may not have
//     settled. The caller keeps the execution unsettled and retries with
//     the same transfer, which settles it or answers the settlement.
//   - ErrNonceUsed: the execution's nonce was spent by another
//     authorization. Nothing moved now and nothing ever will under this
//     execution; money may have moved before. A person reconciles.
package rails

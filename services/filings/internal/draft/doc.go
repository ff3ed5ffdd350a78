// Package draft is the pure domain of case drafts: preparing a draft from a
// validated request, its digest, the confirmation statement each participant
// copies, the confirmation policy, the fee projection, and the transition
// that opens a case on the last required confirmation.
//
// The package does no I/O. [Prepare], [Confirm], [Draft.WithConsent] and
// [Draft.WithFeePaid] take a draft and the instant of the act and return the
// next draft or a typed refusal; the same inputs always give the same result.
// On a refusal the returned draft is the input, unchanged, so a store can
// apply the result inside one atomic step without a rollback path.
//
// The draft digest is the SHA-256 of the RFC 8785 (JCS) canonical JSON of
// the draft's immutable terms (libs/jcs implements JCS). Statuses and
// recorded confirmations are not part of it, so a digest a participant read
// stays valid while others confirm.
//
// Everything here is described, with the digest test vectors, the policy
// rules and the refusal codes, in docs/filings-drafts.md.
package draft

// Package signature is the pc-webhook-ed25519-v1 signature of case event
// callbacks (schema case-event-v2): the canonical input, Ed25519 signing and
// the receiver's verification, the JWKS of the verification keys, and the
// format of key ids. The webhooks sender, partner receivers written in Go and
// the conformance vectors in testdata/conformance.json all use this package,
// so that there is one definition of what a valid delivery is.
//
// # Headers
//
// Every delivery carries nine headers (names are case-insensitive): the
// seven of the spec, then the endpoint id and the test flag.
//
//	content-digest          sha-256=:<base64 of the SHA-256 of the exact body bytes>:
//	x-pc-event-id           1..160 of A-Z a-z 0-9 . _ : -, equal to the body eventId
//	x-pc-event-timestamp    UTC instant, exactly 3 fractional digits and Z
//	x-pc-key-id             1..160 of A-Z a-z 0-9 . _ : -, the JWK kid
//	x-pc-schema-version     case-event-v2, equal to the body schemaVersion
//	x-pc-signature-version  pc-webhook-ed25519-v1
//	x-pc-signature          ed25519=:<base64 of the 64-byte signature>:
//	x-pc-endpoint-id        1..160 of A-Z a-z 0-9 . _ : -, the endpoint it is signed for
//	x-pc-test               true for a test event, false for a case fact
//
// # Canonical input
//
// The signed bytes are seven lines joined by "\n", with no trailing newline
// (see CanonicalInput):
//
//	x-pc-event-id: <eventId>
//	x-pc-event-timestamp: <timestamp>
//	x-pc-key-id: <keyId>
//	x-pc-schema-version: case-event-v2
//	x-pc-endpoint-id: <endpointId>
//	x-pc-test: <true or false>
//	content-digest: sha-256=:<digest>:
//
// The signing keys are the environment's, shared by every partner: the
// endpoint id line is what makes a delivery good for one receiver only.
//
// # Verification order
//
// Verify checks a delivery in a fixed order and reports the first step that
// fails as the Reason of an *Error. The order is part of the contract: the
// conformance vectors name the reason a verifier in any language must give.
//
//  1. header_missing: one of the nine headers has no field line.
//  2. header_format: a header has more than one field line, or
//     x-pc-event-id, x-pc-key-id, content-digest, x-pc-signature,
//     x-pc-endpoint-id or x-pc-test is not in its exact format. Base64 must be canonical: decoding and encoding again
//     gives the same text.
//  3. signature_version: x-pc-signature-version is not pc-webhook-ed25519-v1.
//  4. body_format: the body is not one UTF-8 JSON object, repeats a member
//     name in any object, or has a schemaVersion or eventId that is not a
//     string.
//  5. schema_version: x-pc-schema-version is not case-event-v2, or the body
//     schemaVersion is absent or differs from it.
//  6. event_id_mismatch: the body eventId is absent or differs from
//     x-pc-event-id.
//  7. recipient_mismatch: x-pc-endpoint-id is not the receiver's own
//     endpoint id.
//  8. timestamp_format: x-pc-event-timestamp is not canonical (it must equal
//     the value re-serialized from its parsed instant).
//  9. timestamp_window: the timestamp is more than the tolerance (5 minutes)
//     before or after the verifier's clock. Exactly 5 minutes is accepted.
//  10. digest_mismatch: content-digest is not the digest of the body bytes.
//  11. unknown_key: the key id does not name a published verification key.
//  12. bad_signature: the Ed25519 signature does not verify over the
//     canonical input with that key.
//
// Reasons lists the reasons in this order.
package signature

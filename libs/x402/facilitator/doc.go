// Package facilitator is the HTTP client every service uses to talk to an
// x402 facilitator, local or real (x402-specification-v2.md, section 7:
// POST /verify, POST /settle, GET /supported).
//
// It holds only the client, so production binaries link nothing else of the
// facilitator side. The local facilitator that dev and tests run instead of
// a chain, with its Redis ledger and the public development keys, lives in
// package localfacilitator, which only tools and tests import.
package facilitator

// Package journal is the one x402 settlement journal of the project: every
// service that sells something for an x402 payment (the readiness report,
// the filing fee) records the payment here, under one global key per signed
// authorization, and moves it through the same steps:
//
//	claim → verify → prepare → settle → settled | refused
//	                                  ↘ pending → reconcile
//
// A payment is claimed ONCE, for one resource, before anything is verified
// or settled. Facilitators answer a repeated /settle of a settled
// authorization with success (that is what makes reconciliation possible),
// so the journal, not the facilitator, is what stops one payment from
// buying two things. The claim is keyed by x402.AuthorizationID (network,
// asset, payer, nonce) in a keyspace the journal owns,
//
//	pc:x402:{x402.NN}:authorization:<id>   hash  the payment record
//	pc:x402:{x402.NN}:unfinished:<owner>   zset  ids the owner must reconcile
//	pc:x402:{x402.NN}:outbox               stream settlement events
//
// shared by every service that takes payments, because they share one Redis
// and one payment must not be spendable once per service. The same payment
// presented again for the same resource and request replays what it bought;
// presented for any other resource it is ErrAlreadyUsed and changes nothing.
//
// Each step is one Lua script over keys that share the payment's shard tag
// (outbox.Sharding), so it runs unchanged on Redis Cluster, and a settlement
// is recorded in the same step as its outbox event.
package journal

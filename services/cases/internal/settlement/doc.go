// Package settlement is the pure domain of a case's settlement binding:
// both sides agree terms at any stage before the award, and the tribunal
// records them as a consent award, which ends the case.
//
// A joined side proposes terms (remedies in an award's shape, each within
// the claim as an award's are, and the terms in the sides' words); the
// terms are named by their digest, the SHA-256 of their RFC 8785 bytes
// (award.Terms). A new proposal replaces a pending one, and its side may
// withdraw it. The other side accepts exactly those terms by naming their
// digest, as a draft is confirmed: from then on the case is settled and
// nobody decides it. The reviewer (assigned for it if the case had no
// tribunal yet) records the agreed terms, again by their digest, and the
// record issues the consent award: an award like any other (its canonical
// bytes, hash, attestation and artifacts), with outcome settled_by_consent,
// the settlement's digest, text and the sides' consents, final on issue.
//
// [Decide] applies an act of a side or of the reviewer to the [State] with
// the [Facts] of the case at an instant, and returns the next state with
// the [Note]s to record as case events and, for the record, the consent
// award and its identity; or a typed refusal ([RefusalError], codes in
// check order in [RefusalCodes]) with the state unchanged. No I/O, no
// clock. docs/settlement.md describes it.
package settlement

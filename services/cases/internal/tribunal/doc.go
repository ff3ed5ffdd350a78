// Package tribunal is the pure domain of a case's decision: who decides
// (an AI adjudicator and a human reviewer from the tribunal pool, assigned
// without conflict), the adjudicator's pinned configuration and the sides'
// challenges to it, the adjudication runs and the proposals they file, the
// reviewer's opinion, objections, overrides, attestation and sign-off, the
// pre-award review of the dispositive part, an evaluation's acceptance,
// and the award that ends it.
//
// The AI decides nothing alone: a proposal becomes an award only through
// the reviewer's sign-off, after the reviewer's opinion (or override) and
// attestation and after both sides have seen the dispositive part.
//
// [Decide] applies an act of a tribunal member or a side, [Tick] what is
// due (assignment from a pool snapshot, a run once the record closes, the
// end of a pre-award review or an acceptance window). Both take the state,
// the [Facts] of the case they need and the instant, and return the next
// state with the [Note]s to record as case events, or a typed refusal with
// the state unchanged. No I/O, no clock. docs/tribunal.md describes it,
// with the refusal order.
package tribunal

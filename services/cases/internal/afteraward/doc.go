// Package afteraward is the pure domain of what follows a case's award:
// the sides' post-award requests (correction of clerical errors,
// interpretation, an additional award on a claim presented but not
// decided) and the reviewer's decision on them, which issues a new award
// naming the one it amends; appeals (appeal.go), heard by an appellate
// reviewer and decided in an award of their own; the award's finality, when its request window
// lapses with nothing pending or both sides waive their recourse; and the
// award's executions, one per remedy, over the settlement rails.
//
// The served award is the last one issued. An amended award stays
// verifiable and byte-identical: its artifacts are the case's documents
// and its identity moves to [State.Superseded].
//
// [Decide] applies an act of a side, the reviewer or the service (an
// execution's attempt); [Tick] what is due (finality). Both take the
// state, the [Facts] of the case and the instant, and return the next
// state with the [Note]s to record as case events, or a typed refusal
// with the state unchanged. No I/O, no clock. docs/after-award.md
// describes it, with the refusal order.
package afteraward

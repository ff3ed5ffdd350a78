// Package procedure is the pure domain of an opened case: its status, the
// stages its procedure plan lays out, the acts the sides may take in each,
// the deadlines the pinned rules version sets, and the case events each
// accepted act emits.
//
// The moves are data: [Table] lists every row as (states, act, sides,
// condition, next, events), and [Stages] and [EventSpecs] say what entering a
// stage and emitting an event mean. [Open], [Decide] and [Tick] are the only
// writers of a [Case]; they take a case and the instant of the act and return
// the next case with the events to record, or a typed refusal with the case
// handed back unchanged, so a store applies a result in one atomic step.
//
// The package does no I/O and reads no clock. Everything here is described,
// with the refusal order, in docs/cases-procedure.md.
package procedure

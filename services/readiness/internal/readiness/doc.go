// Package readiness computes the dispute-readiness report: a deterministic
// reading of the facts a caller reports about a prospective dispute against a
// versioned, hashed rule table.
//
// The package is pure. It takes a validated [Request], a [RuleTable] and the
// instant of evaluation, and returns a [Report]; the same three inputs always
// give the same report, byte for byte once encoded. It files no case, assesses
// no merits, gives no legal advice, verifies none of the reported facts and
// moves no funds, and every report says so in its disclaimers.
//
// The rules themselves are data ([DefaultRuleTable]); the evaluator only knows
// how to read them. The table is published, with one worked example per rule,
// in docs/readiness-rules.md, and its SHA-256 hash ([RuleTable.Hash]) is pinned
// by a test so that every change to the rules is deliberate.
package readiness

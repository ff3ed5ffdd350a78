package readiness_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/services/readiness/internal/readiness"
)

// pinnedHash is the hash of DefaultRuleTable. It changes only together with
// the rules: bump the table version, update docs/readiness-rules.md, review
// the golden diffs, then pin the new value here.
const pinnedHash = "cbe61ca655c3ee9bc3dd93b794ef1776d7266e58fc018f53156035ce6ae883fa"

func TestDefaultRuleTableHashIsPinned(t *testing.T) {
	table := readiness.DefaultRuleTable()

	require.Equal(t, "readiness-rules-2026-11-01", table.Version)
	require.Equal(t, pinnedHash, table.Hash())
	require.Equal(t, table.Hash(), readiness.DefaultRuleTable().Hash(), "the hash is stable across calls")
	require.Regexp(t, `^[0-9a-f]{64}$`, table.Hash())
}

func TestDefaultRuleTableIsValid(t *testing.T) {
	require.NoError(t, readiness.DefaultRuleTable().Validate())
}

func TestDefaultRuleTableReturnsIndependentCopies(t *testing.T) {
	a := readiness.DefaultRuleTable()
	a.Requirements[0].Satisfied = "changed"
	a.AllocationRails[0] = readiness.RailNone

	require.Equal(t, pinnedHash, readiness.DefaultRuleTable().Hash())
}

func TestHashCoversEveryPartOfTheTable(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*readiness.RuleTable)
	}{
		{"version", func(t *readiness.RuleTable) { t.Version = "readiness-rules-2026-12-01" }},
		{"fee percent", func(t *readiness.RuleTable) { t.Fees[1].Percent = readiness.PercentFromBasisPoints(301) }},
		{"requirement text", func(t *readiness.RuleTable) { t.Requirements[3].Unsatisfied += "." }},
		{"rule order", func(t *readiness.RuleTable) { t.Corpus[0], t.Corpus[1] = t.Corpus[1], t.Corpus[0] }},
		{"match threshold", func(t *readiness.RuleTable) {
			m := readiness.MoneyFromCents(1)
			t.LaneLimits[0].When.AmountAtMostUsd = &m
		}},
		{"timing horizon", func(t *readiness.RuleTable) { t.TimingHorizonHours = 48 }},
		{"statement", func(t *readiness.RuleTable) { t.Statement = strings.ToUpper(t.Statement) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			table := readiness.DefaultRuleTable()
			tt.mutate(&table)
			require.NotEqual(t, pinnedHash, table.Hash())
		})
	}
}

func TestValidateRefusesBrokenTables(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*readiness.RuleTable)
		want   string
	}{
		{"no version", func(t *readiness.RuleTable) { t.Version = "" }, "version is empty"},
		{"unknown requirement code", func(t *readiness.RuleTable) { t.Requirements[0].Code = "vibes" }, "requirements[0]: unknown code or check"},
		{"unknown check", func(t *readiness.RuleTable) { t.Requirements[0].Check = "vibes" }, "requirements[0]: unknown code or check"},
		{"unknown placeholder", func(t *readiness.RuleTable) { t.Requirements[1].Satisfied = "{nope}" }, "requirements[1]: unknown placeholder {nope}"},
		{"unbalanced brace", func(t *readiness.RuleTable) { t.Statement = "oops}" }, "statement: unbalanced }"},
		{"composition tier without fee", func(t *readiness.RuleTable) { t.Fees = t.Fees[:3] }, "compositions[0]: tier declaratory has no fee schedule"},
		{"lane rule matching on lane", func(t *readiness.RuleTable) { t.Lanes[0].When.Lanes = []readiness.Lane{readiness.LaneAgent} }, "lanes[0]: a lane rule cannot match on the lane"},
		{"no catch-all composition", func(t *readiness.RuleTable) { t.Compositions = t.Compositions[:4] }, "compositions: the last rule must match every request"},
		{"no catch-all timing", func(t *readiness.RuleTable) { t.Timing = t.Timing[:4] }, "timing: the last rule must match every request"},
		{"missing claim class", func(t *readiness.RuleTable) { t.ClaimClasses = t.ClaimClasses[1:] }, "claimClasses must list every fast-track claim class"},
		{"unknown rail", func(t *readiness.RuleTable) { t.AllocationRails = append(t.AllocationRails, "wire") }, "allocationRails: unknown value wire"},
		{"percent over 100", func(t *readiness.RuleTable) { t.Fees[0].Percent = readiness.PercentFromBasisPoints(10001) }, "fees[0]: percent must be 0 to 100 and amounts non-negative"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			table := readiness.DefaultRuleTable()
			tt.mutate(&table)

			err := table.Validate()

			require.True(t, errors.Is(err, readiness.ErrInvalidRuleTable), "got %v", err)
			require.ErrorContains(t, err, tt.want)

			_, err = readiness.NewRules(table)
			require.ErrorIs(t, err, readiness.ErrInvalidRuleTable, "no report is ever evaluated against a broken table")
		})
	}
}

func TestRulesCarryTheTablesHash(t *testing.T) {
	table := readiness.DefaultRuleTable()
	rules, err := readiness.NewRules(table)
	require.NoError(t, err)
	require.Equal(t, table.Hash(), rules.Hash())
	require.Equal(t, table.Version, rules.Version())
}

// TestRulesDocumentMatchesTheTable keeps docs/readiness-rules.md honest: it
// must name the current version and hash and every code the table can emit.
func TestRulesDocumentMatchesTheTable(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "..", "..", "docs", "readiness-rules.md"))
	require.NoError(t, err)
	text := string(doc)
	table := readiness.DefaultRuleTable()

	require.Contains(t, text, table.Version)
	require.Contains(t, text, table.Hash())

	mention := func(code string) {
		t.Helper()
		require.Contains(t, text, "`"+code+"`", "docs/readiness-rules.md does not describe %s", code)
	}
	for _, r := range table.Lanes {
		mention(r.Code)
	}
	for _, l := range table.LaneLimits {
		mention(l.Code)
	}
	for _, c := range table.Compositions {
		mention(string(c.Reason))
	}
	for _, f := range table.Fees {
		mention(string(f.Tier))
	}
	for _, r := range table.Requirements {
		mention(string(r.Code))
		mention(string(r.Check))
	}
	for _, c := range table.Corpus {
		mention(c.Code)
	}
	for _, r := range table.Timing {
		mention(r.Code)
	}
	for _, p := range readiness.Placeholders() {
		mention(p)
	}
}

package readiness_test

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/services/readiness/internal/readiness"
)

var update = flag.Bool("update", false, "rewrite testdata/golden from the current rules")

// goldenShapes are the request shapes whose reports are pinned. Together
// they fire every lane rule, lane limit, composition rule, fee tier, corpus
// rule and timing rule, and every requirement both satisfied and not;
// TestGoldenShapesCoverEveryRule keeps it so.
var goldenShapes = []struct {
	name string
	body string
}{
	{"agent_fast_double_charge_ready", `{
		"caseTrack": "ai_fast", "claimantType": "ai_agent", "respondentType": "ai_agent",
		"amountInDisputeUsd": 1800, "remedy": "corpus_allocation", "settlementRail": "x402r",
		"fastTrackClaimClass": "double_charge", "mutualConsentReported": true, "authorityToBindReported": true,
		"claimantEvidenceReady": true, "respondentEvidenceReady": true, "microClaimsTierConsentReported": false,
		"remedialJurisdictionOptInReported": false, "corpusAmountUsd": 2000,
		"escrowWindowEndsAt": "2026-11-12T09:00:00+02:00"}`},
	{"standard_money_obligation_ready", `{
		"caseTrack": "ai_standard", "claimantType": "human", "respondentType": "organization",
		"amountInDisputeUsd": 40000, "remedy": "money_obligation", "settlementRail": "none",
		"fastTrackClaimClass": null, "mutualConsentReported": true, "authorityToBindReported": true,
		"claimantEvidenceReady": true, "respondentEvidenceReady": true, "microClaimsTierConsentReported": false,
		"remedialJurisdictionOptInReported": true, "corpusAmountUsd": null}`},
	{"micro_claim_consented_ready", `{
		"caseTrack": "ai_fast", "claimantType": "human", "respondentType": "organization",
		"amountInDisputeUsd": 85.5, "remedy": "corpus_allocation", "settlementRail": "processor_connect",
		"fastTrackClaimClass": "non_delivery", "mutualConsentReported": true, "authorityToBindReported": true,
		"claimantEvidenceReady": true, "respondentEvidenceReady": true, "microClaimsTierConsentReported": true,
		"remedialJurisdictionOptInReported": false, "corpusAmountUsd": 85.5}`},
	{"micro_claim_without_tier_consent", `{
		"caseTrack": "ai_standard", "claimantType": "organization", "respondentType": "organization",
		"amountInDisputeUsd": 40, "remedy": "money_obligation", "settlementRail": "none",
		"fastTrackClaimClass": null, "mutualConsentReported": true, "authorityToBindReported": true,
		"claimantEvidenceReady": true, "respondentEvidenceReady": true, "microClaimsTierConsentReported": false,
		"remedialJurisdictionOptInReported": true, "corpusAmountUsd": null}`},
	{"panel_without_remedial_opt_in_window_closing", `{
		"caseTrack": "ai_assisted_human", "claimantType": "organization", "respondentType": "organization",
		"amountInDisputeUsd": 300000, "remedy": "money_obligation", "settlementRail": "processor_connect",
		"fastTrackClaimClass": null, "mutualConsentReported": true, "authorityToBindReported": true,
		"claimantEvidenceReady": true, "respondentEvidenceReady": true, "microClaimsTierConsentReported": false,
		"remedialJurisdictionOptInReported": false, "corpusAmountUsd": 500000,
		"escrowWindowEndsAt": "2026-11-03T09:00:00Z"}`},
	{"declaratory_acp_evaluation_ready", `{
		"caseTrack": "ai_standard", "claimantType": "ai_agent", "respondentType": "organization",
		"amountInDisputeUsd": 0, "remedy": "declaratory", "settlementRail": "acp",
		"fastTrackClaimClass": "acp_evaluation", "mutualConsentReported": true, "authorityToBindReported": true,
		"claimantEvidenceReady": true, "respondentEvidenceReady": true, "microClaimsTierConsentReported": false,
		"remedialJurisdictionOptInReported": true, "corpusAmountUsd": null}`},
	{"case_track_omitted_escrow_without_corpus", `{
		"claimantType": "human", "respondentType": "human",
		"amountInDisputeUsd": 3000, "remedy": "corpus_allocation", "settlementRail": "bilateral_escrow",
		"fastTrackClaimClass": null, "mutualConsentReported": true, "authorityToBindReported": true,
		"claimantEvidenceReady": true, "respondentEvidenceReady": true, "microClaimsTierConsentReported": false,
		"remedialJurisdictionOptInReported": false, "corpusAmountUsd": null}`},
	{"escrowed_refund_wrong_rail_short_corpus_window_elapsed", `{
		"caseTrack": "ai_fast", "claimantType": "human", "respondentType": "organization",
		"amountInDisputeUsd": 600, "remedy": "corpus_allocation", "settlementRail": "processor_connect",
		"fastTrackClaimClass": "escrowed_refund_request", "mutualConsentReported": true, "authorityToBindReported": true,
		"claimantEvidenceReady": true, "respondentEvidenceReady": true, "microClaimsTierConsentReported": false,
		"remedialJurisdictionOptInReported": false, "corpusAmountUsd": 450,
		"escrowWindowEndsAt": "2026-10-30T17:30:00Z"}`},
	{"fast_track_ordinary_claim", `{
		"caseTrack": "ai_fast", "claimantType": "human", "respondentType": "organization",
		"amountInDisputeUsd": 1000, "remedy": "money_obligation", "settlementRail": "none",
		"fastTrackClaimClass": null, "mutualConsentReported": true, "authorityToBindReported": true,
		"claimantEvidenceReady": true, "respondentEvidenceReady": true, "microClaimsTierConsentReported": false,
		"remedialJurisdictionOptInReported": true, "corpusAmountUsd": null}`},
	{"fast_track_over_ceiling_escrow_window_unreported", `{
		"caseTrack": "ai_fast", "claimantType": "organization", "respondentType": "organization",
		"amountInDisputeUsd": 15000, "remedy": "money_obligation", "settlementRail": "x402r",
		"fastTrackClaimClass": "payment_not_settled", "mutualConsentReported": true, "authorityToBindReported": true,
		"claimantEvidenceReady": true, "respondentEvidenceReady": true, "microClaimsTierConsentReported": false,
		"remedialJurisdictionOptInReported": true, "corpusAmountUsd": null}`},
	{"remedy_outside_claim_class", `{
		"caseTrack": "ai_standard", "claimantType": "organization", "respondentType": "ai_agent",
		"amountInDisputeUsd": 5000, "remedy": "money_obligation", "settlementRail": "acp",
		"fastTrackClaimClass": "acp_evaluation", "mutualConsentReported": true, "authorityToBindReported": true,
		"claimantEvidenceReady": true, "respondentEvidenceReady": true, "microClaimsTierConsentReported": false,
		"remedialJurisdictionOptInReported": true, "corpusAmountUsd": null}`},
	{"agent_lane_above_ceiling", `{
		"caseTrack": "ai_standard", "claimantType": "ai_agent", "respondentType": "ai_agent",
		"amountInDisputeUsd": 2000000, "remedy": "money_obligation", "settlementRail": "partner_executes",
		"fastTrackClaimClass": null, "mutualConsentReported": true, "authorityToBindReported": true,
		"claimantEvidenceReady": true, "respondentEvidenceReady": true, "microClaimsTierConsentReported": false,
		"remedialJurisdictionOptInReported": true, "corpusAmountUsd": 2000000,
		"escrowWindowEndsAt": "2027-01-15T00:00:00Z"}`},
	{"zero_amount_money_claim", `{
		"caseTrack": "ai_standard", "claimantType": "human", "respondentType": "organization",
		"amountInDisputeUsd": 0, "remedy": "money_obligation", "settlementRail": "none",
		"fastTrackClaimClass": null, "mutualConsentReported": true, "authorityToBindReported": true,
		"claimantEvidenceReady": true, "respondentEvidenceReady": true, "microClaimsTierConsentReported": true,
		"remedialJurisdictionOptInReported": true, "corpusAmountUsd": null}`},
	{"agent_lane_nothing_reported", `{
		"caseTrack": "ai_standard", "claimantType": "ai_agent", "respondentType": "ai_agent",
		"amountInDisputeUsd": 5000, "remedy": "corpus_allocation", "settlementRail": "none",
		"fastTrackClaimClass": null, "mutualConsentReported": false, "authorityToBindReported": false,
		"claimantEvidenceReady": false, "respondentEvidenceReady": false, "microClaimsTierConsentReported": false,
		"remedialJurisdictionOptInReported": false, "corpusAmountUsd": 5000}`},
	{"standard_lane_nothing_reported", `{
		"caseTrack": "ai_assisted_human", "claimantType": "human", "respondentType": "human",
		"amountInDisputeUsd": 12000, "remedy": "money_obligation", "settlementRail": "none",
		"fastTrackClaimClass": null, "mutualConsentReported": false, "authorityToBindReported": false,
		"claimantEvidenceReady": false, "respondentEvidenceReady": false, "microClaimsTierConsentReported": false,
		"remedialJurisdictionOptInReported": false, "corpusAmountUsd": null}`},
}

// golden is one file of testdata/golden: the request beside its report, so a
// reviewer reads both at once.
type golden struct {
	Request json.RawMessage  `json:"request"`
	Now     time.Time        `json:"now"`
	Report  readiness.Report `json:"report"`
}

func TestGoldenReports(t *testing.T) {
	rules := defaultRules(t)
	for _, shape := range goldenShapes {
		t.Run(shape.name, func(t *testing.T) {
			req := mustRequest(t, shape.body)
			report := readiness.Evaluate(rules, req, fixedNow)

			encoded, err := json.Marshal(report)
			require.NoError(t, err)
			requireReportInvariants(t, req, report, encoded)

			got, err := json.MarshalIndent(golden{Request: json.RawMessage(shape.body), Now: fixedNow, Report: report}, "", "  ")
			require.NoError(t, err)
			got = append(got, '\n')

			path := filepath.Join("testdata", "golden", shape.name+".json")
			if *update {
				require.NoError(t, os.WriteFile(path, got, 0o644))
			}
			want, err := os.ReadFile(path)
			require.NoError(t, err, "run go test -update to create the golden file")
			if diff := cmp.Diff(string(want), string(got)); diff != "" {
				t.Fatalf("report differs from %s (-want +got); if the change is deliberate, run go test -update and review the diff:\n%s", path, diff)
			}
		})
	}
}

func TestGoldenFilesHaveShapes(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "golden", "*.json"))
	require.NoError(t, err)
	var names []string
	for _, f := range files {
		names = append(names, filepath.Base(f[:len(f)-len(".json")]))
	}
	var shapes []string
	for _, s := range goldenShapes {
		shapes = append(shapes, s.name)
	}
	slices.Sort(shapes)
	require.Equal(t, shapes, names, "every golden file belongs to a shape and every shape has a file")
	require.GreaterOrEqual(t, len(shapes), 12)
}

func TestGoldenShapesCoverEveryRule(t *testing.T) {
	table := readiness.DefaultRuleTable()
	rules := defaultRules(t)
	fired := map[string]bool{}
	for _, shape := range goldenShapes {
		report, trace := readiness.EvaluateWithTrace(rules, mustRequest(t, shape.body), fixedNow)
		fired["lane:"+trace.LaneRule] = true
		fired["lane value:"+string(report.Lane)] = true
		if trace.LaneLimit != "" {
			fired["lane limit:"+trace.LaneLimit] = true
		}
		if report.Composition == nil {
			fired["composition:omitted"] = true
		} else {
			fired["composition:"+string(trace.Composition)] = true
			fired["composition value:"+string(report.Composition.Value)] = true
			fired["fee tier:"+string(report.FilingFee.Tier)] = true
		}
		fired["corpus:"+trace.CorpusRule] = true
		fired["timing:"+trace.TimingRule] = true
		for _, r := range report.Requirements {
			fired[fmt.Sprintf("requirement:%s:%s:%t", r.Code, report.Lane, r.Satisfied)] = true
		}
	}

	want := map[string]bool{"composition:omitted": true}
	for _, r := range table.Lanes {
		want["lane:"+r.Code] = true
		want["lane value:"+string(r.Lane)] = true
	}
	for _, l := range table.LaneLimits {
		want["lane limit:"+l.Code] = true
	}
	for _, c := range table.Compositions {
		want["composition:"+string(c.Reason)] = true
		want["composition value:"+string(c.Value)] = true
	}
	for _, f := range table.Fees {
		want["fee tier:"+string(f.Tier)] = true
	}
	for _, c := range table.Corpus {
		want["corpus:"+c.Code] = true
	}
	for _, r := range table.Timing {
		want["timing:"+r.Code] = true
	}
	for _, r := range table.Requirements {
		lanes := []readiness.Lane{readiness.LaneAgent, readiness.LaneStandard}
		if len(r.When) == 1 && len(r.When[0].Lanes) > 0 {
			lanes = r.When[0].Lanes // a lane variant only needs its own lane
		}
		// Requirements that do not depend on the lane need each outcome
		// once, in whichever lane.
		for _, ok := range []bool{true, false} {
			if len(lanes) == 1 {
				want[fmt.Sprintf("requirement:%s:%s:%t", r.Code, lanes[0], ok)] = true
				continue
			}
			key := fmt.Sprintf("requirement:%s:*:%t", r.Code, ok)
			want[key] = true
			if fired[fmt.Sprintf("requirement:%s:%s:%t", r.Code, readiness.LaneAgent, ok)] ||
				fired[fmt.Sprintf("requirement:%s:%s:%t", r.Code, readiness.LaneStandard, ok)] {
				fired[key] = true
			}
		}
	}

	var missing []string
	for k := range want {
		if !fired[k] {
			missing = append(missing, k)
		}
	}
	slices.Sort(missing)
	require.Empty(t, missing, "golden shapes leave these rules unexercised")
}

func TestEvaluateIsDeterministic(t *testing.T) {
	for _, shape := range goldenShapes {
		t.Run(shape.name, func(t *testing.T) {
			req := mustRequest(t, shape.body)
			first, err := json.Marshal(readiness.Evaluate(defaultRules(t), req, fixedNow))
			require.NoError(t, err)
			for range 20 {
				again, err := json.Marshal(readiness.Evaluate(defaultRules(t), mustRequest(t, shape.body), fixedNow))
				require.NoError(t, err)
				require.Equal(t, string(first), string(again))
			}
		})
	}
}

func TestEvaluateDependsOnNowOnlyThroughTheTimingWindow(t *testing.T) {
	rules := defaultRules(t)
	req := mustRequest(t, goldenShapes[0].body) // window ends 2026-11-12T07:00:00Z
	end := time.Date(2026, 11, 12, 7, 0, 0, 0, time.UTC)
	tests := []struct {
		name        string
		now         time.Time
		wantWarning bool
		wantRule    string
	}{
		{"more than 72 h before", end.Add(-72*time.Hour - time.Second), false, "escrow_window_open"},
		{"exactly 72 h before", end.Add(-72 * time.Hour), true, "escrow_window_closing"},
		{"one second before", end.Add(-time.Second), true, "escrow_window_closing"},
		{"at the end", end, true, "escrow_window_elapsed"},
		{"after the end", end.Add(time.Hour), true, "escrow_window_elapsed"},
		{"same instant in another zone", end.In(time.FixedZone("UTC+5", 5*3600)), true, "escrow_window_elapsed"},
	}
	base := readiness.Evaluate(rules, req, fixedNow)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			report, trace := readiness.EvaluateWithTrace(rules, req, tt.now)

			require.Equal(t, tt.wantRule, trace.TimingRule)
			require.Equal(t, tt.wantWarning, report.Timing.Warning != nil)
			report.Timing.Warning = base.Timing.Warning
			if diff := cmp.Diff(base, report, cmp.AllowUnexported(readiness.Money{}, readiness.Percent{})); diff != "" {
				t.Fatalf("only the timing warning may change with now (-base +got):\n%s", diff)
			}
		})
	}
}

func TestFilingFeeArithmetic(t *testing.T) {
	rules := defaultRules(t)
	tests := []struct {
		name   string
		track  string
		amount string
		remedy string
		tier   readiness.FeeTier
		want   string
	}{
		{"micro rounds half up", "ai_standard", "85.5", "money_obligation", readiness.TierMicro, "4.28"},
		{"micro floor", "ai_standard", "10", "money_obligation", readiness.TierMicro, "1.00"},
		{"micro ceiling", "ai_standard", "250", "money_obligation", readiness.TierMicro, "12.50"},
		{"single arbiter floor above the micro ceiling", "ai_standard", "250.01", "money_obligation", readiness.TierSingleArbiter, "50.00"},
		{"single arbiter percent", "ai_standard", "12345.67", "money_obligation", readiness.TierSingleArbiter, "370.37"},
		{"single arbiter at the panel threshold", "ai_standard", "250000", "money_obligation", readiness.TierSingleArbiter, "7500.00"},
		{"panel floor plus surcharge just above the threshold", "ai_standard", "250000.01", "money_obligation", readiness.TierPanel, "7500.00"},
		{"panel percent plus surcharge at the limit", "ai_assisted_human", "10000000", "money_obligation", readiness.TierPanel, "152500.00"},
		{"fast track stays single arbiter", "ai_fast", "9000", "money_obligation", readiness.TierSingleArbiter, "270.00"},
		{"declaratory is flat", "ai_standard", "9000000", "declaratory", readiness.TierDeclaratory, "150.00"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := mustRequest(t, fmt.Sprintf(`{"caseTrack": %q, "claimantType": "human", "respondentType": "organization",
				"amountInDisputeUsd": %s, "remedy": %q, "settlementRail": "none", "fastTrackClaimClass": null,
				"mutualConsentReported": true, "authorityToBindReported": true, "claimantEvidenceReady": true,
				"respondentEvidenceReady": true, "microClaimsTierConsentReported": true,
				"remedialJurisdictionOptInReported": true, "corpusAmountUsd": null}`, tt.track, tt.amount, tt.remedy))

			fee := readiness.Evaluate(rules, req, fixedNow).FilingFee

			require.NotNil(t, fee)
			require.Equal(t, tt.tier, fee.Tier)
			require.Equal(t, tt.want, fee.AmountUsd.String())
		})
	}
}

package agent_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/award"
	"github.com/pcourt/pcourt/tools/adjudicator/agent"
)

// citeAll is what the rubric cites: every record item, in record order.
func citeAll(pkg map[string]any) []award.Citation {
	var out []award.Citation
	for _, it := range recordItems(pkg) {
		out = append(out, award.Citation{ItemID: it["itemId"].(string), Digest: it["digest"].(string)})
	}
	return out
}

func pay(amount int64) award.Remedy {
	return award.Remedy{Kind: award.RemedyPayment, Payer: "respondent", Payee: "claimant", AmountMinor: amount, Currency: "USD", DueBy: "2026-12-07T00:00:00.000Z"}
}

func TestRubricDecidesRecordedPackages(t *testing.T) {
	// The run was requested late on 23 November (UTC): payments are due
	// 14 days after that date, at midnight.
	requestedAt := time.Date(2026, 11, 23, 9, 59, 58, 0, time.UTC)
	tests := []struct {
		pkg       string
		outcome   string
		remedies  []award.Remedy
		counted   string // the reasons' list of items counted
		explained string // what the reasons say about the decision
	}{
		{
			pkg: "default", outcome: award.OutcomeClaimUpheld, remedies: []award.Remedy{pay(42000)},
			counted:   "Items counted: claimant 2 (sub_c1, sub_c2); respondent 0 (none).",
			explained: "The respondent filed no answer and no submission",
		},
		{
			pkg: "partial", outcome: award.OutcomeClaimPartiallyUpheld, remedies: []award.Remedy{pay(21000)}, // 42001 / 2, rounded down
			counted:   "Items counted: claimant 2 (sub_c1, sub_c2); respondent 2 (answer, sub_r1).",
			explained: "half the claim, 21000 USD",
		},
		{
			pkg: "dismissed", outcome: award.OutcomeClaimDismissed, remedies: []award.Remedy{},
			counted:   "Items counted: claimant 1 (sub_c1); respondent 2 (answer, sub_r1).",
			explained: "dismisses the claim",
		},
		{
			pkg: "evaluation", outcome: "provisioned", remedies: []award.Remedy{},
			counted:   "Items counted: claimant 2 (sub_c1, sub_c2); respondent 1 (answer).",
			explained: `the first allowed outcome, "provisioned"`,
		},
		{
			pkg: "evaluation-tie", outcome: "not_provisioned", remedies: []award.Remedy{},
			counted:   "Items counted: claimant 1 (sub_c1); respondent 1 (answer).",
			explained: `the last allowed outcome, "not_provisioned"`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.pkg, func(t *testing.T) {
			api := newFakeAPI(t)
			pkg := loadPackage(t, tt.pkg, agent.RubricConfiguration())
			api.serve(t, pkg)
			a := newAgent(t, api, agent.Config{})
			caseID := pkg["caseId"].(string)

			require.NoError(t, a.Adjudicate(context.Background(), caseID, requestedAt))

			reads, filings := api.received()
			require.Len(t, reads, 1)
			require.Equal(t, "Bearer "+token, reads[0].Header.Get("Authorization"))
			require.Len(t, filings, 1)
			require.Equal(t, "/api/disputes/"+caseID+"/synthesize-opinion", filings[0].Path)
			require.Equal(t, wantKey(caseID, runID(pkg)), filings[0].Header.Get("Idempotency-Key"))
			got := decodeFiling(t, filings[0].Body)
			require.Equal(t, runID(pkg), got.RunID)
			require.Equal(t, recordDigest(pkg), got.InputDigest)
			require.NotNil(t, got.Proposal, "a proposal, not a request for human attention")
			p := *got.Proposal
			require.Equal(t, tt.outcome, p.Outcome)
			require.Equal(t, tt.remedies, p.Remedies)
			require.Equal(t, citeAll(pkg), p.Citations)
			require.True(t, strings.HasPrefix(p.Reasons, "Decided by the pcourt deterministic rubric (version 1), not by a model"), p.Reasons)
			require.Contains(t, p.Reasons, tt.explained)
			require.True(t, strings.HasSuffix(p.Reasons, tt.counted), p.Reasons)
		})
	}
}

func TestRubricAsksForHumanAttention(t *testing.T) {
	tests := []struct {
		name   string
		pkg    string
		change func(pkg map[string]any)
		reason string
	}{
		{name: "empty record", pkg: "empty", reason: "the confirmed record has no item"},
		{name: "evaluation with no allowed outcome", pkg: "evaluation", change: func(pkg map[string]any) {
			pkg["evaluation"].(map[string]any)["allowedOutcomes"] = []string{}
		}, reason: "no allowed outcome"},
		{name: "request older than the due period", pkg: "default", reason: "is not after now"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			api := newFakeAPI(t)
			pkg := loadPackage(t, tt.pkg, agent.RubricConfiguration())
			if tt.change != nil {
				tt.change(pkg)
			}
			api.serve(t, pkg)
			a := newAgent(t, api, agent.Config{})
			requestedAt := now
			if tt.name == "request older than the due period" {
				requestedAt = now.AddDate(0, 0, -15)
			}

			require.NoError(t, a.Adjudicate(context.Background(), pkg["caseId"].(string), requestedAt))

			got := api.onlyFiling(t)
			require.Nil(t, got.Proposal)
			require.NotNil(t, got.HumanAttention)
			require.Contains(t, got.HumanAttention.Reason, tt.reason)
			require.Equal(t, runID(pkg), got.RunID)
			require.Equal(t, recordDigest(pkg), got.InputDigest)
		})
	}
}

func TestAConfigurationMismatchAsksForHumanAttention(t *testing.T) {
	// The case pinned a model configuration; this agent runs the rubric.
	api := newFakeAPI(t)
	pinned := agent.ModelConfiguration(agent.ModelConfig{Name: "gpt-x", Version: "gpt-x-2026-01-01"}, agent.DefaultInstructions)
	pkg := loadPackage(t, "default", pinned)
	api.serve(t, pkg)
	a := newAgent(t, api, agent.Config{})

	require.NoError(t, a.Adjudicate(context.Background(), "case_default", now))

	got := api.onlyFiling(t)
	require.Nil(t, got.Proposal)
	require.NotNil(t, got.HumanAttention)
	require.Contains(t, got.HumanAttention.Reason, pkg["configurationDigest"].(string))
	require.Contains(t, got.HumanAttention.Reason, a.ConfigurationDigest())
	require.Contains(t, got.HumanAttention.Reason, "does not act under another configuration")
}

func TestNothingIsFiledWithoutAnOpenRun(t *testing.T) {
	tests := map[string]func(pkg map[string]any){
		"no run":         func(pkg map[string]any) { delete(pkg, "run") },
		"run superseded": func(pkg map[string]any) { pkg["run"].(map[string]any)["status"] = "superseded" },
		"proposal filed": func(pkg map[string]any) {
			pkg["proposal"] = map[string]any{"outcome": "claim_upheld", "remedies": []any{}, "reasons": "r", "citations": []any{}}
		},
	}
	for name, change := range tests {
		t.Run(name, func(t *testing.T) {
			api := newFakeAPI(t)
			pkg := loadPackage(t, "default", agent.RubricConfiguration())
			change(pkg)
			api.serve(t, pkg)
			a := newAgent(t, api, agent.Config{})

			require.NoError(t, a.Adjudicate(context.Background(), "case_default", now))

			reads, filings := api.received()
			require.Len(t, reads, 1)
			require.Empty(t, filings)
		})
	}
}

func TestFilingRefusalsAreNotRetried(t *testing.T) {
	tests := []struct {
		name   string
		answer answer
		err    string
	}{
		{"superseded run", answer{http.StatusConflict, `{"ok":false,"error":{"code":"run_not_open","message":"run_2 superseded it"}}`}, ""},
		{"refused proposal", answer{http.StatusUnprocessableEntity, `{"ok":false,"error":{"code":"citation_outside_record","message":"no"}}`}, "citation_outside_record"},
		{"other conflict", answer{http.StatusConflict, `{"ok":false,"error":{"code":"idempotency_key_reused","message":"no"}}`}, "idempotency_key_reused"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			api := newFakeAPI(t)
			api.serve(t, loadPackage(t, "default", agent.RubricConfiguration()))
			api.answerFilings(tt.answer)
			a := newAgent(t, api, agent.Config{})

			err := a.Adjudicate(context.Background(), "case_default", now)
			if tt.err == "" {
				require.NoError(t, err, "a superseded run is the end of the matter")
			} else {
				var apiErr *agent.APIError
				require.ErrorAs(t, err, &apiErr)
				require.Equal(t, tt.err, apiErr.Code)
			}
			_, filings := api.received()
			require.Len(t, filings, 1, "a refusal is never retried")
		})
	}
}

func TestServerErrorsAreRetriedWithTheSameKeyAndBody(t *testing.T) {
	api := newFakeAPI(t)
	pkg := loadPackage(t, "default", agent.RubricConfiguration())
	api.serve(t, pkg)
	api.answerFilings(answer{http.StatusServiceUnavailable, `{"ok":false,"error":{"code":"unavailable","message":"try later"}}`},
		answer{http.StatusBadGateway, "<html>bad gateway</html>"})
	a := newAgent(t, api, agent.Config{})

	require.NoError(t, a.Adjudicate(context.Background(), "case_default", now))

	_, filings := api.received()
	require.Len(t, filings, 3)
	for _, f := range filings[1:] {
		require.Equal(t, filings[0].Header.Get("Idempotency-Key"), f.Header.Get("Idempotency-Key"))
		require.Equal(t, filings[0].Body, f.Body)
	}
	require.Equal(t, wantKey("case_default", runID(pkg)), filings[0].Header.Get("Idempotency-Key"))
}

func TestServerErrorsStopAfterTheAttempts(t *testing.T) {
	api := newFakeAPI(t)
	api.serve(t, loadPackage(t, "default", agent.RubricConfiguration()))
	for range 5 {
		api.answerFilings(answer{http.StatusInternalServerError, `{"ok":false,"error":{"code":"internal","message":"x"}}`})
	}
	a := newAgent(t, api, agent.Config{Attempts: 3})

	err := a.Adjudicate(context.Background(), "case_default", now)
	require.ErrorContains(t, err, "3 attempts")
	_, filings := api.received()
	require.Len(t, filings, 3)
}

func TestTheRubricConfigurationIsPinned(t *testing.T) {
	c := agent.RubricConfiguration()
	require.Equal(t, award.Configuration{
		Provider: "rubric", Model: "pcourt-rubric", ModelVersion: "1", InstructionsDigest: award.Hash([]byte(agent.Rubric)),
		OutputSchemaVersion: award.SchemaProposal, TemperatureMilli: 0, Tools: []string{},
	}, c)
	// A change of the rubric's text changes every rubric case's pinned
	// digest: make it on purpose, with a new RubricVersion.
	digest, err := agent.ConfigurationDigest(c)
	require.NoError(t, err)
	require.Equal(t, "b06fcf0aac77e844c9ccc6d6f41126f80d05b99fdb99149649fcfbbc11a0a831", c.InstructionsDigest)
	b, err := agent.CanonicalConfiguration(c)
	require.NoError(t, err)
	require.Equal(t, award.Hash(b), digest)
}

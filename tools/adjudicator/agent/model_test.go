package agent_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/award"
	"github.com/pcourt/pcourt/tools/adjudicator/agent"
)

// chatRequest is what the fake model received, decoded.
type chatRequest struct {
	Model          string  `json:"model"`
	Temperature    float64 `json:"temperature"`
	Messages       []struct{ Role, Content string }
	ResponseFormat struct {
		Type       string `json:"type"`
		JSONSchema struct {
			Name   string         `json:"name"`
			Strict bool           `json:"strict"`
			Schema map[string]any `json:"schema"`
		} `json:"json_schema"`
	} `json:"response_format"`
}

func decodeChat(t testing.TB, r request) chatRequest {
	t.Helper()
	var c chatRequest
	require.NoError(t, json.Unmarshal(r.Body, &c))
	return c
}

// wantProposal is the proposal of answers/good.json, as filed.
func wantProposal(t testing.TB, name string) award.Proposal {
	t.Helper()
	var p award.Proposal
	require.NoError(t, json.Unmarshal([]byte(recordedContent(t, name)), &p))
	return p
}

func TestAModelsGoodProposalIsFiledAsIs(t *testing.T) {
	api := newFakeAPI(t)
	model := newFakeModel(t, recorded(t, "good"))
	cfg := agent.Config{Model: modelConfig(model)}
	pkg := loadPackage(t, "partial", agent.ModelConfiguration(cfg.Model, agent.DefaultInstructions))
	api.serve(t, pkg)
	a := newAgent(t, api, cfg)

	require.NoError(t, a.Adjudicate(context.Background(), "case_partial", now))

	got := api.onlyFiling(t)
	require.Nil(t, got.HumanAttention)
	require.Equal(t, wantProposal(t, "good"), *got.Proposal)
	require.Equal(t, runID(pkg), got.RunID)
	require.Equal(t, recordDigest(pkg), got.InputDigest)

	// The request: the model, the temperature, the instructions as the
	// system message, the case as the user message, strict JSON schema.
	reqs := model.received()
	require.Len(t, reqs, 1)
	require.Equal(t, "Bearer sk-test", reqs[0].Header.Get("Authorization"))
	c := decodeChat(t, reqs[0])
	require.Equal(t, "llama-3.1-8b-instruct", c.Model)
	require.InDelta(t, 0.2, c.Temperature, 1e-9)
	require.Len(t, c.Messages, 2)
	require.Equal(t, "system", c.Messages[0].Role)
	require.Equal(t, agent.DefaultInstructions, c.Messages[0].Content)
	require.Equal(t, a.Configuration().InstructionsDigest, award.Hash([]byte(c.Messages[0].Content)))
	require.Equal(t, "user", c.Messages[1].Role)
	var view struct {
		CaseMode        string
		Claim           struct{ AmountMinor int64 }
		AllowedOutcomes []string
		Record          struct {
			Digest string
			Items  []map[string]string
		}
		RunInstructions string
		Now             string
	}
	require.NoError(t, json.Unmarshal([]byte(c.Messages[1].Content), &view))
	require.Equal(t, "proceeding", view.CaseMode)
	require.Equal(t, int64(42001), view.Claim.AmountMinor)
	require.Equal(t, award.ProceedingOutcomes, view.AllowedOutcomes)
	require.Equal(t, recordDigest(pkg), view.Record.Digest)
	require.Len(t, view.Record.Items, len(recordItems(pkg)))
	for i, it := range recordItems(pkg) {
		for _, k := range []string{"itemId", "side", "kind", "digest", "text"} {
			require.Equal(t, it[k], view.Record.Items[i][k], "record item %d %s", i, k)
		}
	}
	require.Equal(t, "Decide on the confirmed record only.", view.RunInstructions)
	require.Equal(t, "2026-11-23T10:00:00.000Z", view.Now)

	rf := c.ResponseFormat
	require.Equal(t, "json_schema", rf.Type)
	require.Equal(t, "pc_adjudication_proposal_v1", rf.JSONSchema.Name)
	require.True(t, rf.JSONSchema.Strict)
	props := rf.JSONSchema.Schema["properties"].(map[string]any)
	require.ElementsMatch(t, []any{"claim_upheld", "claim_partially_upheld", "claim_dismissed"}, props["outcome"].(map[string]any)["enum"])
	require.Equal(t, false, rf.JSONSchema.Schema["additionalProperties"])
	require.ElementsMatch(t, []any{"outcome", "remedies", "reasons", "citations"}, rf.JSONSchema.Schema["required"])
}

func TestABadModelAnswerIsRetriedOnceThenHandedToAHuman(t *testing.T) {
	tests := []struct {
		answer string
		pkg    string
		reason string // in the retry message and the human attention reason
	}{
		{answer: "malformed", pkg: "partial", reason: "the answer is not one JSON object"},
		{answer: "unknown-member", pkg: "partial", reason: `unknown field "confidence"`},
		{answer: "outside-record", pkg: "partial", reason: `item "sub_c9" is not in the record`},
		{answer: "wrong-digest", pkg: "partial", reason: `is not the record's digest of item "sub_c1"`},
		{answer: "over-claim", pkg: "partial", reason: "the payments total 42002, more than the claim's 42001 USD"},
		{answer: "evaluation-outcome", pkg: "evaluation", reason: `outcome "claim_upheld" is not one of provisioned, not_provisioned`},
	}
	for _, tt := range tests {
		t.Run(tt.answer, func(t *testing.T) {
			api := newFakeAPI(t)
			model := newFakeModel(t, recorded(t, tt.answer), recorded(t, tt.answer))
			cfg := agent.Config{Model: modelConfig(model)}
			pkg := loadPackage(t, tt.pkg, agent.ModelConfiguration(cfg.Model, agent.DefaultInstructions))
			api.serve(t, pkg)
			a := newAgent(t, api, cfg)

			require.NoError(t, a.Adjudicate(context.Background(), pkg["caseId"].(string), now))

			reqs := model.received()
			require.Len(t, reqs, 2, "one retry, no more")
			retry := decodeChat(t, reqs[1])
			require.Len(t, retry.Messages, 4)
			require.Equal(t, "assistant", retry.Messages[2].Role)
			require.Equal(t, recordedContent(t, tt.answer), retry.Messages[2].Content)
			require.Equal(t, "user", retry.Messages[3].Role)
			require.Contains(t, retry.Messages[3].Content, tt.reason)

			got := api.onlyFiling(t)
			require.Nil(t, got.Proposal, "never the bad proposal")
			require.NotNil(t, got.HumanAttention)
			require.Contains(t, got.HumanAttention.Reason, "failed the checks twice")
			require.Contains(t, got.HumanAttention.Reason, tt.reason)
			require.Equal(t, runID(pkg), got.RunID)
		})
	}
}

func TestACorrectedAnswerIsFiled(t *testing.T) {
	api := newFakeAPI(t)
	model := newFakeModel(t, recorded(t, "wrong-digest"), recorded(t, "good"))
	cfg := agent.Config{Model: modelConfig(model)}
	api.serve(t, loadPackage(t, "partial", agent.ModelConfiguration(cfg.Model, agent.DefaultInstructions)))
	a := newAgent(t, api, cfg)

	require.NoError(t, a.Adjudicate(context.Background(), "case_partial", now))

	require.Len(t, model.received(), 2)
	got := api.onlyFiling(t)
	require.Equal(t, wantProposal(t, "good"), *got.Proposal)
}

func TestAnEvaluationIsDecidedByTheModel(t *testing.T) {
	api := newFakeAPI(t)
	model := newFakeModel(t, recorded(t, "evaluation-good"))
	cfg := agent.Config{Model: modelConfig(model)}
	api.serve(t, loadPackage(t, "evaluation", agent.ModelConfiguration(cfg.Model, agent.DefaultInstructions)))
	a := newAgent(t, api, cfg)

	require.NoError(t, a.Adjudicate(context.Background(), "case_evaluation", now))

	c := decodeChat(t, model.received()[0])
	require.ElementsMatch(t, []any{"provisioned", "not_provisioned"},
		c.ResponseFormat.JSONSchema.Schema["properties"].(map[string]any)["outcome"].(map[string]any)["enum"])
	require.Contains(t, c.Messages[1].Content, "Did the seller provision the subscription it was paid for?")
	got := api.onlyFiling(t)
	require.Equal(t, wantProposal(t, "evaluation-good"), *got.Proposal)
}

func TestModelServerFailures(t *testing.T) {
	busy := answer{http.StatusServiceUnavailable, `{"error":{"message":"overloaded"}}`}
	tests := []struct {
		name     string
		answers  []answer
		calls    int
		proposal bool
		reason   string
	}{
		{name: "a 5xx is retried", answers: []answer{busy, recorded(t, "good")}, calls: 2, proposal: true},
		{name: "down through every attempt", answers: []answer{busy, busy, busy, busy}, calls: 4, reason: "4 attempts"},
		{name: "a 4xx is not retried", answers: []answer{{http.StatusBadRequest, `{"error":{"message":"response_format json_schema is not supported"}}`}}, calls: 1,
			reason: "json_schema is not supported"},
		{name: "no choice", answers: []answer{{http.StatusOK, `{"model":"m","choices":[]}`}, {http.StatusOK, `{"model":"m","choices":[]}`}}, calls: 2,
			reason: "the answer has no choice"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			api := newFakeAPI(t)
			model := newFakeModel(t, tt.answers...)
			cfg := agent.Config{Model: modelConfig(model)}
			api.serve(t, loadPackage(t, "partial", agent.ModelConfiguration(cfg.Model, agent.DefaultInstructions)))
			a := newAgent(t, api, cfg)

			require.NoError(t, a.Adjudicate(context.Background(), "case_partial", now))

			require.Len(t, model.received(), tt.calls)
			got := api.onlyFiling(t)
			if tt.proposal {
				require.NotNil(t, got.Proposal)
				return
			}
			require.Nil(t, got.Proposal)
			require.Contains(t, got.HumanAttention.Reason, tt.reason)
		})
	}
}

func TestAnAnswerFromAnotherModelIsNotFiled(t *testing.T) {
	// The operator let the server say which build it runs; the server now
	// answers as another one.
	api := newFakeAPI(t)
	model := newFakeModel(t, recorded(t, "good"))
	m := modelConfig(model)
	m.Version, m.VersionFromServer = "llama-3.1-8b-instruct-q8_0", true
	cfg := agent.Config{Model: m}
	api.serve(t, loadPackage(t, "partial", agent.ModelConfiguration(m, agent.DefaultInstructions)))
	a := newAgent(t, api, cfg)

	require.NoError(t, a.Adjudicate(context.Background(), "case_partial", now))

	got := api.onlyFiling(t)
	require.Nil(t, got.Proposal)
	require.Contains(t, got.HumanAttention.Reason, `answered as model "llama-3.1-8b-instruct"`)
}

func TestProbeModelVersionReadsTheServersModel(t *testing.T) {
	model := newFakeModel(t, answer{http.StatusOK, `{"model":"qwen2.5-7b-instruct-q4_k_m","choices":[{"message":{"content":"ok"}}]}`})
	m := modelConfig(model)
	m.Version = ""

	v, err := agent.ProbeModelVersion(context.Background(), m, nil)
	require.NoError(t, err)
	require.Equal(t, "qwen2.5-7b-instruct-q4_k_m", v)
	c := decodeChat(t, model.received()[0])
	require.Equal(t, "llama-3.1-8b-instruct", c.Model)

	empty := newFakeModel(t, answer{http.StatusOK, `{"choices":[]}`})
	m.URL = empty.URL
	_, err = agent.ProbeModelVersion(context.Background(), m, nil)
	require.ErrorContains(t, err, "set MODEL_VERSION")
}

func TestTheModelConfiguration(t *testing.T) {
	m := agent.ModelConfig{URL: "http://127.0.0.1:8000", Name: "llama", Version: "llama-3.1-8b-q4", TemperatureMilli: 300}
	require.Equal(t, award.Configuration{
		Provider: "openai-compatible", Model: "llama", ModelVersion: "llama-3.1-8b-q4",
		InstructionsDigest: award.Hash([]byte(agent.DefaultInstructions)), OutputSchemaVersion: award.SchemaProposal,
		TemperatureMilli: 300, Tools: []string{},
	}, agent.ConfigurationOf(agent.Config{Model: m}))
	require.Equal(t, award.Hash([]byte("be brief")), agent.ConfigurationOf(agent.Config{Model: m, Instructions: "be brief"}).InstructionsDigest)
	require.Equal(t, agent.RubricConfiguration(), agent.ConfigurationOf(agent.Config{}))
}

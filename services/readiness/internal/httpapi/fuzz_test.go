package httpapi

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/pcourt/pcourt/api"
	"github.com/pcourt/pcourt/api/apitest"
	"github.com/pcourt/pcourt/libs/problem"
	"github.com/pcourt/pcourt/services/readiness/internal/readiness"
)

// FuzzReadinessBody holds the report's contract over any body: a body the
// service accepts yields a report valid against the OpenAPI schema; a body it
// refuses is a 400 problem, never a 5xx and never a report.
func FuzzReadinessBody(f *testing.F) {
	example, err := api.Example("ReadinessRequestExample")
	if err != nil {
		f.Fatal(err)
	}
	f.Add([]byte(example))
	f.Add([]byte(`{"claimantType":"human"}`))
	f.Add([]byte(`{"claimantType":"human","respondentType":"ai_agent","amountInDisputeUsd":0.5,"remedy":"declaratory","settlementRail":"acp","fastTrackClaimClass":"acp_evaluation","mutualConsentReported":false,"authorityToBindReported":false,"claimantEvidenceReady":false,"respondentEvidenceReady":false,"microClaimsTierConsentReported":true,"remedialJurisdictionOptInReported":false,"corpusAmountUsd":null}`))
	goldens, _ := filepath.Glob("../readiness/testdata/golden/*.json")
	for _, g := range goldens {
		raw, err := os.ReadFile(g)
		if err != nil {
			f.Fatal(err)
		}
		var golden struct {
			Request json.RawMessage `json:"request"`
		}
		if err := json.Unmarshal(raw, &golden); err != nil {
			f.Fatal(err)
		}
		f.Add([]byte(golden.Request))
	}
	rules, err := readiness.NewRules(readiness.DefaultRuleTable())
	if err != nil {
		f.Fatal(err)
	}
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, body []byte) {
		req, err := decodeRequest(body)
		if err != nil {
			p := problem.From(err, Problem)
			if p.Code.Status != 400 {
				t.Fatalf("refused body answered %d %s, want 400: %v", p.Code.Status, p.Code.Name, err)
			}
			return
		}
		report, err := json.Marshal(readiness.Evaluate(rules, req, now))
		if err != nil {
			t.Fatal(err)
		}
		apitest.Schema(t, "ReadinessReport", report)
	})
}

package tools

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pcourt/pcourt/libs/award"
	"github.com/pcourt/pcourt/libs/problem"
	"github.com/pcourt/pcourt/services/mcp/internal/apiclient"
)

// verifyAwardTool checks an award as any holder of it would, offline
// (docs/awards.md): its json artifact's exact bytes, their attestation
// (a detached JWS) and the published award keys.
var verifyAwardTool = &mcp.Tool{
	Name:  "verify_award",
	Title: "Verify an award",
	Description: "Fetches the award of a case (its json artifact and the artifact's attestation, scope cases:read) and the published award keys " +
		"(GET /api/awards/keys), and verifies the attestation's EdDSA signature over the artifact's exact bytes with the key it names, " +
		"as libs/award.Verify does offline. Returns the award's id, hash (SHA-256 of the artifact), outcome and signing key; " +
		"award_not_verified when any check fails.",
	InputSchema: map[string]any{
		"type":                 "object",
		"properties":           map[string]any{"caseId": map[string]any{"type": "string", "pattern": idPattern, "description": "the case whose award to verify"}},
		"required":             []string{"caseId"},
		"additionalProperties": false,
	},
	OutputSchema: map[string]any{
		"type": "object",
		"properties": map[string]any{
			"verified":  map[string]any{"type": "boolean", "const": true},
			"caseId":    map[string]any{"type": "string"},
			"awardId":   map[string]any{"type": "string"},
			"awardHash": map[string]any{"type": "string", "pattern": "^[0-9a-f]{64}$"},
			"outcome":   map[string]any{"type": "string"},
			"keyId":     map[string]any{"type": "string"},
			"issuedAt":  map[string]any{"type": "string"},
		},
		"required": []string{"verified", "caseId", "awardId", "awardHash", "outcome", "keyId", "issuedAt"},
	},
	Annotations: &mcp.ToolAnnotations{Title: "Verify an award", ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: new(false)},
}

// verifiedAward is verify_award's structured result.
type verifiedAward struct {
	Verified  bool   `json:"verified"`
	CaseID    string `json:"caseId"`
	AwardID   string `json:"awardId"`
	AwardHash string `json:"awardHash"`
	Outcome   string `json:"outcome"`
	KeyID     string `json:"keyId"`
	IssuedAt  string `json:"issuedAt"`
}

func (ts *toolset) verifyAward(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var args struct {
		CaseID string `json:"caseId"`
	}
	if err := strictArguments(req.Params.Arguments, &args); err != nil || !idRE.MatchString(args.CaseID) {
		return problemResult(problem.New(InvalidArguments, "verify_award takes exactly caseId, an id: 1 to 160 characters of A-Z a-z 0-9 . _ : -.")), nil
	}
	token, perr := ts.apiToken(ctx, req)
	if perr != nil {
		return problemResult(perr), nil
	}
	base := "/api/v2/cases/" + args.CaseID + "/award/artifacts/json"
	artifact, err := ts.API.Do(ctx, apiclient.Request{Method: http.MethodGet, Path: base, Bearer: token})
	if err != nil {
		return ts.failed(ctx, err), nil
	}
	attestation, err := ts.API.Do(ctx, apiclient.Request{Method: http.MethodGet, Path: base + "/attestation", Bearer: token})
	if err != nil {
		return ts.failed(ctx, err), nil
	}
	keys, err := ts.API.Do(ctx, apiclient.Request{Method: http.MethodGet, Path: "/api/awards/keys"})
	if err != nil {
		return ts.failed(ctx, err), nil
	}
	v, err := award.Verify(artifact.Body, string(attestation.Body), keys.Body)
	if err != nil {
		return problemResult(problem.Newf(AwardNotVerified, "The award of case %s does not verify: %v.", args.CaseID, err)), nil
	}
	if v.Award.CaseID != args.CaseID {
		return problemResult(problem.Newf(AwardNotVerified, "The award served for case %s names case %s.", args.CaseID, v.Award.CaseID)), nil
	}
	out := verifiedAward{Verified: true, CaseID: v.Award.CaseID, AwardID: v.Award.AwardID, AwardHash: v.AwardHash,
		Outcome: v.Award.Outcome, KeyID: v.KeyID, IssuedAt: v.Award.IssuedAt}
	body, _ := json.Marshal(out)
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(body)}}, StructuredContent: json.RawMessage(body)}, nil
}

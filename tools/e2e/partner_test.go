package e2e_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/api/apitest"
	"github.com/pcourt/pcourt/libs/auth"
)

const (
	tenant    = "tenant-e2e"
	partnerID = "partner-e2e"
)

// partner calls the system through nginx with one credential, as a
// partner's integration does.
type partner struct {
	base  string
	token string
	cred  auth.Credential
	http  *http.Client
}

// reply is one answer, its body read.
type reply struct {
	status int
	header http.Header
	body   []byte
}

// mint makes a sandbox credential of the e2e tenant and partner, through
// Redis with libs/auth, as the admin command does.
func (s *stack) mint(t *testing.T, role auth.Role, agentID string) *partner {
	t.Helper()
	store := auth.NewStore(s.redisClient(), auth.DefaultStoreConfig())
	token, cred, err := store.Mint(context.Background(), auth.MintRequest{
		Tenant: tenant, Environment: auth.Sandbox, Role: role, PartnerID: partnerID, AgentID: agentID, Label: "e2e",
	})
	require.NoError(t, err)
	return &partner{base: s.ingress, token: token, cred: cred, http: &http.Client{Timeout: 15 * time.Second}}
}

// request builds a request with the credential, a JSON body (nil: none),
// an Idempotency-Key when key is set and extra header pairs.
func (p *partner) request(ctx context.Context, method, path, key string, body any, headers ...string) (*http.Request, error) {
	var raw []byte
	if body != nil {
		var err error
		if raw, err = json.Marshal(body); err != nil {
			return nil, err
		}
	}
	req, err := http.NewRequestWithContext(ctx, method, p.base+path, bytes.NewReader(raw))
	if err != nil {
		return nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Authorization", "Bearer "+p.token)
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Add(headers[i], headers[i+1])
	}
	return req, nil
}

// send sends one request and reads its answer; a transport error is an
// error, any status is a reply.
func (p *partner) send(ctx context.Context, method, path, key string, body any, headers ...string) (reply, *http.Request, error) {
	req, err := p.request(ctx, method, path, key, body, headers...)
	if err != nil {
		return reply{}, nil, err
	}
	resp, err := p.http.Do(req)
	if err != nil {
		return reply{}, req, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return reply{}, req, fmt.Errorf("reading the answer to %s %s: %w", method, path, err)
	}
	return reply{status: resp.StatusCode, header: resp.Header, body: b}, req, nil
}

// do sends one request of the journey and fails the test unless the
// exchange is the one the OpenAPI document describes.
func (p *partner) do(t *testing.T, method, path, key string, body any, headers ...string) reply {
	t.Helper()
	r, req, err := p.send(context.Background(), method, path, key, body, headers...)
	require.NoError(t, err, "%s %s", method, path)
	if body != nil {
		raw, _ := json.Marshal(body)
		req.Body = io.NopCloser(bytes.NewReader(raw))
		req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(raw)), nil }
	}
	apitest.Response(t, req, &http.Response{StatusCode: r.status, Header: r.header, Request: req}, r.body)
	return r
}

// draftView is what the journey reads of a prepared draft.
type draftView struct {
	DraftID       string `json:"draftId"`
	DraftDigest   string `json:"draftDigest"`
	Confirmations []struct {
		ParticipantID         string `json:"participantId"`
		ConfirmationStatement string `json:"confirmationStatement"`
	} `json:"confirmations"`
}

func parseDraft(body []byte) (draftView, error) {
	var env struct {
		Data draftView `json:"data"`
	}
	if err := json.Unmarshal(body, &env); err != nil {
		return draftView{}, err
	}
	if env.Data.DraftID == "" {
		return draftView{}, fmt.Errorf("no draftId in %s", body)
	}
	return env.Data, nil
}

func parseCaseID(body []byte) string {
	var env struct {
		Data struct {
			CaseID string `json:"caseId"`
		} `json:"data"`
	}
	_ = json.Unmarshal(body, &env)
	return env.Data.CaseID
}

// confirmation is the claimant's confirmation of d, which opens the case
// of an initiator-only draft.
func (d draftView) confirmation(actor string) map[string]any {
	statement := ""
	for _, c := range d.Confirmations {
		if c.ParticipantID == "p-claimant" {
			statement = c.ConfirmationStatement
		}
	}
	return map[string]any{
		"participantId": "p-claimant", "draftDigest": d.DraftDigest, "confirmationStatement": statement,
		"actorId": actor, "principalId": "org-acme", "confirmationMethod": "protocol_act", "confirmationReference": "ref-p-claimant",
	}
}

// initiatorOnlyDraft is a draft whose initiator's confirmation opens the
// case; the respondent comes in by invitation.
func initiatorOnlyDraft(externalID string) map[string]any {
	return map[string]any{
		"externalCaseId":             externalID,
		"caseMode":                   "proceeding",
		"intakeMode":                 "claimant_initiated",
		"claimantAcceptanceIdentity": "claims@acme.example",
		"confirmationPolicy":         map[string]any{"mode": "initiator_only"},
		"procedure":                  map[string]any{"profile": "standard"},
		"participants": []map[string]any{
			{"participantId": "p-claimant", "side": "claimant", "principalId": "org-acme", "principalKind": "organization", "authorizationMode": "partner_credential", "initiator": true},
			{"participantId": "p-respondent", "side": "respondent", "principalId": "agent-bob", "principalKind": "ai_agent", "agentId": "agent-bob-7", "authorizationMode": "agent_credential"},
		},
		"claim": map[string]any{"amountInDisputeMinor": 125000, "remedy": "money_obligation", "summary": "Goods paid for, never delivered."},
	}
}

// callback is what the receiver container printed for one verified event.
type callback struct {
	EventID        string `json:"eventId"`
	Type           string `json:"type"`
	CaseID         string `json:"caseId"`
	ExternalCaseID string `json:"externalCaseId"`
	SchemaVersion  string `json:"schemaVersion"`
}

// callbacks parses the receiver's verified events.
func (s *stack) callbacks(ctx context.Context) []callback {
	var out []callback
	for _, line := range s.receiverLines(ctx) {
		var c callback
		if json.Unmarshal([]byte(line), &c) == nil && c.EventID != "" {
			out = append(out, c)
		}
	}
	return out
}

// registerReceiver subscribes the receiver container as the partner's
// endpoint for every event type, and starts it for that endpoint id.
// Deliveries made before it listens are retried.
func (s *stack) registerReceiver(t *testing.T, orch *partner) {
	t.Helper()
	r := orch.do(t, "POST", "/api/v2/webhooks/endpoints", "e2e-endpoint-"+randomHex(8), map[string]any{
		"url": fmt.Sprintf("http://receiver:%d/pcourt-events", receiverPort), "description": "e2e receiver container",
	})
	require.Equal(t, http.StatusCreated, r.status, string(r.body))
	var created struct {
		Data struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	require.NoError(t, json.Unmarshal(r.body, &created))
	require.NotEmpty(t, created.Data.ID)
	s.startReceiver(context.Background(), created.Data.ID)
}

package e2e_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/api/apitest"
	"github.com/pcourt/pcourt/libs/auth"
	"github.com/pcourt/pcourt/libs/x402/localfacilitator"
	"github.com/pcourt/pcourt/libs/x402/x402client"
)

// TestPartnerJourneyThroughTheIngress walks the partner's path through
// nginx, over two edges and two replicas of every service, all in
// containers: a readiness report paid with a really signed x402 payment,
// a draft confirmed and opened, the case on the three route families, the
// respondent invited, joining and answering, the signed callbacks
// verified by the receiver container, and an autonomous agent's account
// opening a case with its own token. Every answer is checked against the
// OpenAPI document.
func TestPartnerJourneyThroughTheIngress(t *testing.T) {
	skipUnlessE2E(t)
	s := startStack(t)
	ctx := context.Background()
	orch := s.mint(t, auth.RolePlatformOrchestrator, "")
	respondent := s.mint(t, auth.RoleRespondentAgent, "agent-bob-7")

	// 1. The paid readiness report.
	body, err := os.ReadFile(filepath.Join("..", "..", "docs", "examples", "readiness-request.json"))
	require.NoError(t, err)
	payer, err := x402client.New(x402client.Config{Key: localfacilitator.DevAccounts()[3].Key})
	require.NoError(t, err)
	req, err := http.NewRequest(http.MethodPost, s.ingress+"/api/x402/dispute-readiness", nil)
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	report, err := payer.Pay(ctx, req, body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, report.Response.StatusCode, string(report.Body))
	require.True(t, report.Paid)
	require.NotNil(t, report.Settlement)
	require.True(t, report.Settlement.Success)
	require.Contains(t, string(report.Body), `"readyToFile"`)
	req.Body = io.NopCloser(bytes.NewReader(body))
	req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	apitest.Response(t, req, report.Response, report.Body)
	settled, err := localfacilitator.NewLedger(s.redisClient()).Settlements(ctx, report.Settlement.Network, report.Challenge.Accepts[0].Asset)
	require.NoError(t, err)
	require.Len(t, settled, 1, "one payment, one settlement in the facilitator's ledger")
	require.Equal(t, report.Settlement.Transaction, settled[0].Transaction)

	// 2. The receiver container as the partner's endpoint.
	s.registerReceiver(t, orch)

	// 3. A draft only its initiator confirms: that confirmation opens it.
	prepared := orch.do(t, "POST", "/api/v2/case-drafts", "e2e-"+randomHex(8), initiatorOnlyDraft("partner-case-42"))
	require.Equal(t, http.StatusCreated, prepared.status, string(prepared.body))
	d, err := parseDraft(prepared.body)
	require.NoError(t, err)
	opened := orch.do(t, "POST", "/api/v2/case-drafts/"+d.DraftID+"/confirmations", "e2e-"+randomHex(8), d.confirmation(orch.cred.PublicID))
	require.Equal(t, http.StatusCreated, opened.status, string(opened.body))
	id := parseCaseID(opened.body)
	require.NotEmpty(t, id)

	// 4. The case on every route family (the cases service learns of the
	// opening from Kafka, so the first read may come before it).
	for _, path := range []string{"/api/cases/" + id, "/api/v2/cases/" + id, "/api/disputes/" + id} {
		var r reply
		require.Eventually(t, func() bool {
			r, _, err = orch.send(ctx, "GET", path, "", nil)
			return err == nil && r.status == http.StatusOK
		}, 30*time.Second, 100*time.Millisecond, "%s never answered 200 (last: %d %s)", path, r.status, r.body)
		r = orch.do(t, "GET", path, "", nil)
		require.Equal(t, http.StatusOK, r.status, "%s: %s", path, r.body)
		require.Contains(t, string(r.body), id)
	}

	// 5. The respondent invited, joining with the invitation, answering.
	invited := orch.do(t, "POST", "/api/cases/"+id+"/invitations", "e2e-"+randomHex(8), nil)
	require.Equal(t, http.StatusCreated, invited.status, string(invited.body))
	var invitation struct {
		Data struct {
			Invitation struct {
				RespondentInviteToken string `json:"respondentInviteToken"`
			} `json:"invitation"`
		} `json:"data"`
	}
	require.NoError(t, json.Unmarshal(invited.body, &invitation))
	token := invitation.Data.Invitation.RespondentInviteToken
	require.NotEmpty(t, token)
	joined := respondent.do(t, "POST", "/api/partner-cases/"+id+"/respondent", "e2e-"+randomHex(8), nil, auth.CapabilityHeader, token)
	require.Equal(t, http.StatusOK, joined.status, string(joined.body))
	answer := respondent.do(t, "POST", "/api/v2/cases/"+id+"/answer", "e2e-"+randomHex(8),
		map[string]any{"text": "The goods were shipped on 2026-11-02; the tracking record is attached."}, auth.CapabilityHeader, token)
	require.Equal(t, http.StatusCreated, answer.status, string(answer.body))
	docket := respondent.do(t, "GET", "/api/cases/"+id+"/events", "", nil, auth.CapabilityHeader, token)
	require.Equal(t, http.StatusOK, docket.status, string(docket.body))
	for _, fact := range []string{"opened", "respondent_invited", "respondent_joined", "answer_filed"} {
		require.Contains(t, string(docket.body), `"type":"`+fact+`"`)
	}

	// 6. The signed callbacks, verified by the receiver container with the
	// keys the edges publish: the opening and the invitation.
	want := map[string]bool{"opened": false, "respondent_invited": false}
	var openedEvent string
	deadline := time.Now().Add(60 * time.Second)
	for {
		for _, c := range s.callbacks(ctx) {
			if c.CaseID == id {
				require.Equal(t, "case-event-v2", c.SchemaVersion)
				require.Equal(t, "partner-case-42", c.ExternalCaseID)
				if _, ok := want[c.Type]; ok {
					want[c.Type] = true
				}
				if c.Type == "opened" {
					openedEvent = c.EventID
				}
			}
		}
		if want["opened"] && want["respondent_invited"] {
			break
		}
		require.True(t, time.Now().Before(deadline), "callbacks verified at the receiver after 60 s: %v%s", want, tailLogs(s.receiver))
		time.Sleep(500 * time.Millisecond) // polling the receiver's log, bounded by the deadline
	}
	// 7. The delivery record says it was delivered.
	require.Eventually(t, func() bool {
		r, _, err := orch.send(ctx, "GET", "/api/v2/webhooks/deliveries?eventId="+openedEvent, "", nil)
		return err == nil && r.status == http.StatusOK && bytes.Contains(r.body, []byte(`"delivered"`))
	}, 15*time.Second, 200*time.Millisecond)
	r := orch.do(t, "GET", "/api/v2/webhooks/deliveries?eventId="+openedEvent, "", nil)
	require.Equal(t, http.StatusOK, r.status, string(r.body))

	// 8. A verified autonomous agent, with its own OAuth token, opens a
	// case of its own and reads it (agent_test.go).
	walkVerifiedAgent(t, s, orch, id)
}

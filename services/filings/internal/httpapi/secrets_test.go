package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/auth"
	"github.com/pcourt/pcourt/libs/redisclient"
	"github.com/pcourt/pcourt/libs/redistest"
	"github.com/pcourt/pcourt/services/filings/internal/events"
)

// claimantInitiated is a claimant-initiated draft that the claimant's
// confirmation alone opens, with a respondent that names no partner and
// no agent: a hosted respondent, invited through the claimant's partner.
func claimantInitiated() map[string]any {
	body := twoParty()
	body["intakeMode"] = "claimant_initiated"
	body["confirmationPolicy"] = map[string]any{"mode": "initiator_only"}
	body["participants"] = []map[string]any{
		{"participantId": "p-claimant", "side": "claimant", "principalId": "org-acme", "principalKind": "organization", "authorizationMode": "partner_credential", "initiator": true},
		{"participantId": "p-respondent", "side": "respondent", "principalId": "org-beta", "principalKind": "organization", "authorizationMode": "partner_credential"},
	}
	return body
}

// openAs confirms participantID of d as token and returns the 201's
// answer and the case-opened fact the opening published.
func (s *stack) openAs(t *testing.T, d draftData, token, actorID, participantID, principalID string) (opened, events.CaseOpened) {
	t.Helper()
	rep := s.do(t, http.MethodPost, "/api/v2/case-drafts/"+d.DraftID+"/confirmations", token, newKey(), confirmation(d, participantID, actorID, principalID))
	require.Equal(t, http.StatusCreated, rep.status, string(rep.body))
	require.Equal(t, "no-store", rep.header.Get("Cache-Control"))
	var o opened
	require.NoError(t, json.Unmarshal(rep.body, &o))
	require.NotNil(t, o.Data.ShowOnce, "the first answer carries showOnce, empty or not")
	var fact events.CaseOpened
	require.NoError(t, json.Unmarshal(caseOpenedFacts(t, s)[d.ReservedCaseID], &fact))
	return o, fact
}

// Issue 21, item 1: showOnce never hands one partner a secret of a side
// another partner acts for. A hosted respondent's invitation and login go
// to the claimant's partner (it delivers them, by design; the cases
// service never lets it use them); a respondent bound to another partner
// gets no secret through the claimant's partner; the claimant's packet
// never goes to the respondent's partner.
func TestShowOnceHoldsOnlyTheOpenersSides(t *testing.T) {
	s := newStack(t)

	t.Run("a hosted respondent: its invitation and login, for the claimant's partner to deliver", func(t *testing.T) {
		d := s.prepare(t, claimantInitiated())
		o, fact := s.openAs(t, d, s.orchestrator, s.orchID, "p-claimant", "org-acme")
		require.NotEmpty(t, o.Data.ShowOnce.RespondentInviteToken)
		require.Regexp(t, `^/respond/`+o.Data.CaseID+`#login=pc_login_[A-Za-z0-9_-]+$`, o.Data.ShowOnce.RespondentLoginPath, "the token is in the fragment, never the query")
		require.Empty(t, o.Data.ShowOnce.ClaimantPartyToken, "no claimant packet without a claimant acceptance identity")

		_, login, _ := strings.Cut(o.Data.ShowOnce.RespondentLoginPath, "#login=")
		require.Equal(t, map[string]string{
			"respondent_invite": auth.HashToken(o.Data.ShowOnce.RespondentInviteToken),
			"respondent_login":  auth.HashToken(login),
		}, fact.CapabilityHashes, "the secrets travel as hashes, in the opening's fact only")
		for _, p := range fact.Participants {
			require.Equal(t, p.Side == "respondent", p.Hosted, "%s", p.ParticipantID)
		}
		// No second copy of a secret anywhere in Redis.
		for _, k := range redistest.Keys(t, s.rdb, "*") {
			require.NotContains(t, k, o.Data.ShowOnce.RespondentInviteToken)
			if typ, _ := s.rdb.Type(context.Background(), k).Result(); typ == "hash" {
				vals, _ := s.rdb.HGetAll(context.Background(), k).Result()
				for _, v := range vals {
					require.NotContains(t, v, o.Data.ShowOnce.RespondentInviteToken, "secret stored in %s", k)
					require.NotContains(t, v, login, "secret stored in %s", k)
				}
			}
		}
	})

	t.Run("a respondent of another partner: the claimant's partner gets none of its secrets", func(t *testing.T) {
		body := claimantInitiated()
		body["participants"].([]map[string]any)[1]["partnerId"] = partnerB
		d := s.prepare(t, body)
		o, fact := s.openAs(t, d, s.orchestrator, s.orchID, "p-claimant", "org-acme")
		require.Empty(t, o.Data.ShowOnce.RespondentInviteToken)
		require.Empty(t, o.Data.ShowOnce.RespondentLoginPath)
		require.Empty(t, fact.CapabilityHashes)
		require.False(t, fact.Participants[1].Hosted, "partner B acts for it")
	})

	t.Run("the respondent's partner opens: no claimant packet for it", func(t *testing.T) {
		body := bundledAcrossPartners()
		body["claimantAcceptanceIdentity"] = "claims@acme.example"
		body["intakeMode"] = "bilateral_api"
		body["confirmationPolicy"] = map[string]any{"mode": "all_participants"}
		body["participants"].([]map[string]any)[1]["authorizationMode"] = "partner_credential"
		d := s.prepare(t, body)
		rep := s.do(t, http.MethodPost, "/api/v2/case-drafts/"+d.DraftID+"/confirmations", s.orchestrator, newKey(), confirmation(d, "p-claimant", s.orchID, "org-acme"))
		require.Equal(t, http.StatusAccepted, rep.status, string(rep.body))
		o, fact := s.openAs(t, d, s.partnerB, s.partnerBID, "p-respondent", "org-beta")
		require.Empty(t, o.Data.ShowOnce.ClaimantPartyToken)
		require.Empty(t, o.Data.ShowOnce.RespondentInviteToken, "its respondent has joined")
		require.Empty(t, fact.CapabilityHashes)
	})

	t.Run("the claimant's partner opens: its own packet", func(t *testing.T) {
		body := claimantInitiated()
		body["claimantAcceptanceIdentity"] = "claims@acme.example"
		body["participants"].([]map[string]any)[1]["partnerId"] = partnerB
		d := s.prepare(t, body)
		o, fact := s.openAs(t, d, s.orchestrator, s.orchID, "p-claimant", "org-acme")
		require.NotEmpty(t, o.Data.ShowOnce.ClaimantPartyToken)
		require.Equal(t, map[string]string{"claimant_party": auth.HashToken(o.Data.ShowOnce.ClaimantPartyToken)}, fact.CapabilityHashes)
	})
}

// With durable writes on (production), a case's opening is answered only
// once the replica holds it: the draft opened and its case-opened entry
// in the outbox, so a primary lost right after the 201 loses neither
// (docs/redis.md, "Durable writes").
func TestAnOpeningIsOnTheReplicaWhenAnswered(t *testing.T) {
	primary := redistest.Start(t)
	replica := redistest.StartReplica(t, primary)
	var log bytes.Buffer
	durable := redisclient.NewDurable(redisclient.DurableConfig{Mode: redisclient.DurableWait, Replicas: 1, Timeout: 300 * time.Millisecond}, slog.New(slog.NewJSONHandler(&log, nil)))
	s := newDurableStackOn(t, primary.Client(t), durable)

	d := s.prepare(t, claimantInitiated())
	o, _ := s.openAs(t, d, s.orchestrator, s.orchID, "p-claimant", "org-acme")
	onReplica := &stack{rdb: replica.Client(t), drafts: s.drafts}
	require.Contains(t, caseOpenedFacts(t, onReplica), o.Data.CaseID, "the replica has the case-opened entry when the 201 is answered")
	require.Empty(t, log.String())

	// The replica away: the opening waits its timeout, stands, and is
	// answered; the shortfall is logged.
	replica.Stop()
	d = s.prepare(t, claimantInitiated())
	start := time.Now()
	o, _ = s.openAs(t, d, s.orchestrator, s.orchID, "p-claimant", "org-acme")
	require.GreaterOrEqual(t, time.Since(start), 300*time.Millisecond)
	require.Contains(t, caseOpenedFacts(t, s), o.Data.CaseID)
	require.Contains(t, log.String(), `"msg":"durable write short"`)
}

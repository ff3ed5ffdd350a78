package httpapi_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// Every mutation answer, and every answer that carries showOnce, says
// no-store (the hosted login's fragment: TestShowOnceHoldsOnlyTheOpenersSides).
func TestSecretsAndMutationsAreNeverCached(t *testing.T) {
	s := newStack(t)
	prep := s.do(t, http.MethodPost, "/api/v2/case-drafts", s.orchestrator, newKey(), bundled())
	require.Equal(t, http.StatusCreated, prep.status)
	require.Equal(t, "no-store", prep.header.Get("Cache-Control"), "prepare")
	var created struct {
		Data struct {
			draftData
			Fee struct {
				FeeID string `json:"feeId"`
			} `json:"fee"`
		} `json:"data"`
	}
	require.NoError(t, json.Unmarshal(prep.body, &created))
	d := created.Data.draftData

	checkout := s.do(t, http.MethodPost, "/api/fees/"+created.Data.Fee.FeeID+"/checkout", s.orchestrator, newKey(), map[string]any{})
	require.Equal(t, http.StatusOK, checkout.status, string(checkout.body))
	require.Equal(t, "no-store", checkout.header.Get("Cache-Control"), "checkout")

	_, agent := mintAgent(t, s)
	grant := s.do(t, http.MethodPost, "/api/v2/authorizations/authority-grants", s.orchestrator, newKey(), map[string]any{"resource": "draft:" + d.DraftID, "side": "claimant", "credentialId": agent})
	require.Equal(t, http.StatusCreated, grant.status, string(grant.body))
	require.Equal(t, "no-store", grant.header.Get("Cache-Control"), "grant")
	list := s.do(t, http.MethodGet, "/api/v2/authorizations/authority-grants?resource=draft:"+d.DraftID, s.orchestrator, "", nil)
	require.Equal(t, "private, no-store", list.header.Get("Cache-Control"), "grant list")

	confirmKey := newKey()
	first := s.do(t, http.MethodPost, "/api/v2/case-drafts/"+d.DraftID+"/confirmations", s.orchestrator, confirmKey, confirmation(d, "p-claimant", s.orchID, "org-acme"))
	require.Equal(t, http.StatusAccepted, first.status, string(first.body))
	require.Equal(t, "no-store", first.header.Get("Cache-Control"), "confirmation")

	consentKey := newKey()
	consent := map[string]any{"draftId": d.DraftID, "participantId": "p-respondent", "draftDigest": d.DraftDigest, "consentReference": "signed-terms-1"}
	rep := s.do(t, http.MethodPost, "/api/v2/authorizations/consents", s.orchestrator, consentKey, consent)
	require.Equal(t, http.StatusCreated, rep.status, string(rep.body))
	require.Equal(t, "no-store", rep.header.Get("Cache-Control"), "the consent that opens the case answers showOnce")
	var o opened
	require.NoError(t, json.Unmarshal(rep.body, &o))
	require.NotNil(t, o.Data.ShowOnce)

	replay := s.do(t, http.MethodPost, "/api/v2/authorizations/consents", s.orchestrator, consentKey, consent)
	require.Equal(t, http.StatusCreated, replay.status)
	require.Equal(t, "no-store", replay.header.Get("Cache-Control"), "replay")
	require.NotContains(t, string(replay.body), "showOnce")
}

// Names that enter a confirmation statement refuse bidi controls, zero-width
// and separator characters, with a code of their own naming the field.
func TestUnsafeCharactersInNamesAreRefused(t *testing.T) {
	s := newStack(t)
	for _, tc := range []struct{ name, value string }{
		{"right-to-left override", "org-acme\u202Eenilno"},
		{"zero-width space", "org-\u200Bacme"},
		{"line separator", "org-acme\u2028I agree to anything"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := twoParty()
			body["participants"].([]map[string]any)[0]["principalId"] = tc.value
			s.unchanged(t, func() {
				rep := s.do(t, http.MethodPost, "/api/v2/case-drafts", s.orchestrator, newKey(), body)
				require.Equal(t, http.StatusBadRequest, rep.status, string(rep.body))
				require.Equal(t, "unsafe_characters", rep.code)
				require.Contains(t, string(rep.body), "participants[0].principalId")
			})
		})
	}
}

// A retry that crosses from one route of an act to the other answers in the
// view of the route it arrives on: the same stored packet and digest.
func TestReplayAnswersInTheViewOfItsRoute(t *testing.T) {
	s := newStack(t)
	body := twoParty()
	body["claimantAcceptanceIdentity"] = "claims@acme.example"
	body["schedule"] = body["procedure"]
	delete(body, "procedure")
	for _, p := range body["participants"].([]map[string]any) {
		if p["principalKind"] == "ai_agent" {
			p["principalKind"] = "autonomous_agent"
		}
	}
	key := newKey()
	first := s.do(t, http.MethodPost, "/api/filings", s.orchestrator, key, body)
	require.Equal(t, http.StatusCreated, first.status, string(first.body))
	require.Contains(t, string(first.body), `"schedule"`)
	v2 := s.do(t, http.MethodPost, "/api/v2/case-drafts", s.orchestrator, key, body)
	require.Equal(t, http.StatusCreated, v2.status, string(v2.body))
	require.Equal(t, "true", v2.header.Get("Idempotent-Replayed"))
	require.NotContains(t, string(v2.body), `"schedule"`, "the v2 view has no schedule")
	require.Contains(t, string(v2.body), `"schemaVersion":"case-procedure-plan-v2"`, "the v2 view's procedure is the plan")
	var a, b struct{ Data draftData }
	require.NoError(t, json.Unmarshal(first.body, &a))
	require.NoError(t, json.Unmarshal(v2.body, &b))
	require.Equal(t, a.Data.DraftDigest, b.Data.DraftDigest)
	require.Equal(t, "/api/v2/case-drafts/"+a.Data.DraftID, v2.header.Get("Location"))
	again := s.do(t, http.MethodPost, "/api/filings", s.orchestrator, key, body)
	var firstAnswer, replayed struct {
		Data      json.RawMessage `json:"data"`
		RequestID string          `json:"requestId"`
	}
	require.NoError(t, json.Unmarshal(first.body, &firstAnswer))
	require.NoError(t, json.Unmarshal(again.body, &replayed))
	require.JSONEq(t, string(firstAnswer.Data), string(replayed.Data), "a replay on the first route is the first answer")
	require.Equal(t, again.header.Get("X-Request-Id"), replayed.RequestID, "one response, one request id")
	require.Equal(t, firstAnswer.RequestID, again.header.Get("X-Original-Request-Id"))

	d := a.Data
	key = newKey()
	confirm := confirmation(d, "p-claimant", s.orchID, "org-acme")
	rep := s.do(t, http.MethodPost, "/api/v2/case-drafts/"+d.DraftID+"/confirmations", s.orchestrator, key, confirm)
	require.Equal(t, http.StatusAccepted, rep.status, string(rep.body))
	require.NotContains(t, string(rep.body), `"schedule"`)
	canonical := s.do(t, http.MethodPost, "/api/filings/"+d.DraftID+"/confirmations", s.orchestrator, key, confirm)
	require.Equal(t, http.StatusAccepted, canonical.status, string(canonical.body))
	require.Equal(t, "true", canonical.header.Get("Idempotent-Replayed"))
	require.Contains(t, string(canonical.body), `"schedule"`, "the canonical view")
	require.Contains(t, string(canonical.body), `"principalKind":"organization"`, "the canonical view shows principal kinds")
}

// A plan copied from a draft read is accepted as it is; only a
// contradiction of its constants is refused.
func TestEchoedProcedurePlanIsAccepted(t *testing.T) {
	s := newStack(t)
	d := s.prepare(t, twoParty())
	_, raw := s.read(t, "/api/v2/case-drafts/"+d.DraftID)
	var read struct {
		Data struct {
			Procedure map[string]any `json:"procedure"`
		} `json:"data"`
	}
	require.NoError(t, json.Unmarshal(raw, &read))
	require.Equal(t, "case-procedure-plan-v2", read.Data.Procedure["schemaVersion"])

	body := twoParty()
	body["procedure"] = read.Data.Procedure
	rep := s.do(t, http.MethodPost, "/api/v2/case-drafts", s.orchestrator, newKey(), body)
	require.Equal(t, http.StatusCreated, rep.status, string(rep.body))

	for _, tc := range []struct {
		field string
		value any
		code  string
	}{
		{"schemaVersion", "case-procedure-plan-v1", "unsupported_schema_version"},
		{"recordConfirmationRequired", false, "record_confirmation_required"},
	} {
		t.Run(tc.field, func(t *testing.T) {
			plan := map[string]any{}
			for k, v := range read.Data.Procedure {
				plan[k] = v
			}
			plan[tc.field] = tc.value
			body := twoParty()
			body["procedure"] = plan
			s.unchanged(t, func() {
				rep := s.do(t, http.MethodPost, "/api/v2/case-drafts", s.orchestrator, newKey(), body)
				require.Equal(t, http.StatusBadRequest, rep.status, string(rep.body))
				require.Equal(t, tc.code, rep.code)
				require.Contains(t, string(rep.body), "procedure."+tc.field)
			})
		})
	}
}

// A consent body that breaks its own rules gets invalid_consent naming the
// field, on both consent routes.
func TestInvalidConsentBody(t *testing.T) {
	s := newStack(t)
	d := s.prepare(t, bundled())
	good := func() map[string]any {
		return map[string]any{"draftId": d.DraftID, "participantId": "p-respondent", "draftDigest": d.DraftDigest, "consentReference": "signed-terms-1"}
	}
	for _, tc := range []struct {
		field string
		value any
	}{
		{"draftId", ""},
		{"participantId", ""},
		{"draftDigest", strings.ToUpper(d.DraftDigest)},
		{"consentReference", "signed terms"},
		{"consentReference", ""},
	} {
		for _, path := range []string{"/api/v2/authorizations/consents", "/api/authorizations/consents"} {
			t.Run(path+" "+tc.field, func(t *testing.T) {
				body := good()
				body[tc.field] = tc.value
				s.unchanged(t, func() {
					rep := s.do(t, http.MethodPost, path, s.orchestrator, newKey(), body)
					require.Equal(t, http.StatusBadRequest, rep.status, string(rep.body))
					require.Equal(t, "invalid_consent", rep.code)
					require.Contains(t, string(rep.body), tc.field)
				})
			})
		}
	}
}

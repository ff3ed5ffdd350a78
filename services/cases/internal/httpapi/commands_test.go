package httpapi_test

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/auth"
	"github.com/pcourt/pcourt/libs/idempotency"
)

// The respondent's way in, headless: the claimant's partner invites (and
// gets a fresh secret, once), the respondent's agent joins with it and
// files its answer; every route family serves its part, the docket tells
// the story, and the case shows the answer.
func TestInviteJoinAnswer(t *testing.T) {
	s := newStack(t)
	c := s.open(t)

	rep := s.do(t, http.MethodPost, "/api/v2/cases/"+c.id+"/respondent-handoff", s.claimant, newKey(), map[string]any{})
	require.Equal(t, http.StatusCreated, rep.status, string(rep.body))
	require.Equal(t, "no-store", rep.header.Get("Cache-Control"))
	inv := data[actData](t, rep)
	require.NotNil(t, inv.Invitation)
	token := inv.Invitation.RespondentInviteToken
	require.True(t, strings.HasPrefix(token, "pc_inv_"), "a fresh invitation secret, shown once")
	require.Equal(t, "show_once_not_replayed", inv.Invitation.CapabilityDelivery)
	require.Equal(t, "respondent_invited", inv.Events[0].Type)

	// The invitation filings minted at opening stopped working: the agent
	// that holds it no longer even sees the case.
	rep = s.do(t, http.MethodGet, "/api/cases/"+c.id, s.respondentAgent, "", nil, auth.CapabilityHeader, c.inviteToken)
	require.Equal(t, http.StatusNotFound, rep.status)

	rep = s.do(t, http.MethodPost, "/api/partner-cases/"+c.id+"/respondent", s.respondentAgent, newKey(), nil, auth.CapabilityHeader, token)
	require.Equal(t, http.StatusOK, rep.status, string(rep.body))
	require.Equal(t, "no-store", rep.header.Get("Cache-Control"))
	joined := data[actData](t, rep)
	require.Equal(t, "awaiting_answer", joined.Case.Status)
	require.Equal(t, []string{"respondent_joined", "stage_opened"}, []string{joined.Events[0].Type, joined.Events[1].Type})

	text := "We shipped the goods on 2 November; tracking number attached.\nWe ask the tribunal to dismiss the claim."
	rep = s.do(t, http.MethodPost, "/api/disputes/"+c.id+"/answer", s.respondentAgent, newKey(), map[string]any{"text": text}, auth.CapabilityHeader, token)
	require.Equal(t, http.StatusCreated, rep.status, string(rep.body))
	require.True(t, strings.HasPrefix(string(rep.body), `{"ok":true,"data":{`), string(rep.body))
	answered := data[actData](t, rep)
	require.Equal(t, "evidence", answered.Case.Status)

	rep = s.do(t, http.MethodGet, "/api/cases/"+c.id, s.claimant, "", nil)
	require.Equal(t, http.StatusOK, rep.status)
	got := data[caseData](t, rep)
	require.NotNil(t, got.Answer)
	require.Equal(t, text, got.Answer.Text)
	sum := sha256.Sum256([]byte(text))
	require.Equal(t, hex.EncodeToString(sum[:]), got.Answer.Digest)
	require.Equal(t, "p-respondent", got.Answer.ParticipantID)
	require.Equal(t, []string{"opened", "respondent_invited", "respondent_joined", "stage_opened", "answer_filed", "stage_opened"}, s.docketTypes(t, c.id))

	// The respondent's own partner acts through its orchestrator too.
	rep = s.do(t, http.MethodGet, "/api/v2/cases/"+c.id+"/docket", s.respondent, "", nil)
	require.Equal(t, http.StatusOK, rep.status)
}

// A platform orchestrator acts for the participants its partner acts for:
// the respondent's partner joins and answers without any capability.
func TestTheRespondentsPartnerJoinsAndAnswers(t *testing.T) {
	s := newStack(t)
	c := s.open(t)
	rep := s.do(t, http.MethodPost, "/api/disputes/"+c.id+"/join", s.respondent, newKey(), nil)
	require.Equal(t, http.StatusOK, rep.status, string(rep.body))
	rep = s.do(t, http.MethodPost, "/api/cases/"+c.id+"/answer", s.respondent, newKey(), map[string]any{"participantId": "p-respondent", "text": "Denied."})
	require.Equal(t, http.StatusCreated, rep.status, string(rep.body))
}

// Every refusal is a precise problem and changes nothing: no case, docket,
// outbox, deadline, document, membership or capability moves.
func TestRefusalsChangeNothing(t *testing.T) {
	s := newStack(t)
	c := s.open(t)
	joinedCase := s.open(t)
	rep := s.do(t, http.MethodPost, "/api/partner-cases/"+joinedCase.id+"/respondent", s.respondent, newKey(), nil)
	require.Equal(t, http.StatusOK, rep.status, string(rep.body))
	other := s.open(t)

	answer := map[string]any{"text": "Denied."}
	cases := []struct {
		name         string
		method, path string
		token        string
		key          string
		body         any
		headers      []string
		status       int
		code         string
	}{
		{"answer before the respondent joined", "POST", "/api/cases/" + c.id + "/answer", s.respondent, newKey(), answer, nil, 422, "not_a_participant"},
		{"the claimant answering", "POST", "/api/cases/" + joinedCase.id + "/answer", s.claimant, newKey(), map[string]any{"participantId": "p-claimant", "text": "x"}, nil, 403, "wrong_side"},
		{"the claimant's partner answering for the respondent", "POST", "/api/cases/" + joinedCase.id + "/answer", s.claimant, newKey(), answer, nil, 403, "forbidden"},
		{"the respondent's partner inviting", "POST", "/api/cases/" + c.id + "/invitations", s.respondent, newKey(), nil, nil, 403, "forbidden"},
		{"the respondent agent inviting with the invitation", "POST", "/api/cases/" + c.id + "/invitations", s.respondentAgent, newKey(), nil, []string{auth.CapabilityHeader, c.inviteToken}, 403, "forbidden"},
		{"an invitation after the respondent joined", "POST", "/api/disputes/" + joinedCase.id + "/invite", s.claimant, newKey(), nil, nil, 409, "already_joined"},
		{"joining twice", "POST", "/api/partner-cases/" + joinedCase.id + "/respondent", s.respondent, newKey(), nil, nil, 409, "already_joined"},
		{"an unknown participant", "POST", "/api/cases/" + c.id + "/invitations", s.claimant, newKey(), map[string]any{"participantId": "p-nobody"}, nil, 422, "not_a_participant"},
		{"another partner of the tenant", "POST", "/api/cases/" + c.id + "/invitations", s.stranger, newKey(), nil, nil, 404, "case_not_found_or_opening"},
		{"another tenant", "POST", "/api/v2/cases/" + c.id + "/respondent-handoff", s.otherTenant, newKey(), nil, nil, 404, "case_not_found_or_opening"},
		{"the live environment", "POST", "/api/v2/cases/" + c.id + "/answer", s.live, newKey(), answer, nil, 404, "case_not_found_or_opening"},
		{"a respondent agent without the invitation", "POST", "/api/partner-cases/" + c.id + "/respondent", s.respondentAgent, newKey(), nil, nil, 404, "case_not_found_or_opening"},
		{"the invitation of another case", "POST", "/api/partner-cases/" + c.id + "/respondent", s.respondentAgent, newKey(), nil, []string{auth.CapabilityHeader, other.inviteToken}, 404, "case_not_found_or_opening"},
		{"a case not opened (yet)", "POST", "/api/cases/cs_unknown/answer", s.respondent, newKey(), answer, nil, 404, "case_not_found_or_opening"},
		{"an answer without text", "POST", "/api/cases/" + joinedCase.id + "/answer", s.respondent, newKey(), map[string]any{"text": ""}, nil, 400, "invalid_act"},
		{"an answer with a control character", "POST", "/api/cases/" + joinedCase.id + "/answer", s.respondent, newKey(), map[string]any{"text": "a\u0000b"}, nil, 400, "invalid_act"},
		{"an answer too long", "POST", "/api/cases/" + joinedCase.id + "/answer", s.respondent, newKey(), map[string]any{"text": strings.Repeat("x", 20001)}, nil, 400, "invalid_act"},
		{"an unknown field", "POST", "/api/cases/" + joinedCase.id + "/answer", s.respondent, newKey(), map[string]any{"text": "x", "side": "claimant"}, nil, 400, "unknown_field"},
		{"a body that is not JSON", "POST", "/api/cases/" + c.id + "/invitations", s.claimant, newKey(), []byte("{"), nil, 400, "malformed_json"},
		{"no Idempotency-Key", "POST", "/api/cases/" + c.id + "/invitations", s.claimant, "", nil, nil, 400, "idempotency_key_missing"},
		{"a short Idempotency-Key", "POST", "/api/cases/" + c.id + "/invitations", s.claimant, "short", nil, nil, 400, "idempotency_key_invalid"},
		{"no credential", "POST", "/api/cases/" + c.id + "/invitations", "", newKey(), nil, nil, 401, "unauthenticated"},
		{"no credential on the website alias", "POST", "/api/disputes/" + c.id + "/invite", "", newKey(), nil, nil, 401, "unauthenticated"},
		{"joining as the claimant on the website alias", "POST", "/api/disputes/" + c.id + "/join", s.respondent, newKey(), map[string]any{"participantId": "p-claimant"}, nil, 403, "forbidden"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s.unchanged(t, func() {
				rep := s.do(t, tc.method, tc.path, tc.token, tc.key, tc.body, tc.headers...)
				require.Equal(t, tc.status, rep.status, string(rep.body))
				require.Equal(t, tc.code, rep.code)
				require.Equal(t, "no-store", rep.header.Get("Cache-Control"))
				if strings.HasPrefix(tc.path, "/api/disputes/") {
					require.True(t, strings.HasPrefix(string(rep.body), `{"ok":false,"error":{"code":"`+tc.code+`"`), "website envelope: %s", rep.body)
				}
			})
		})
	}
}

// An exact retry replays the stored answer — without the invitation
// secret, which is shown once — on any route of the act, each in its own
// envelope; the same key with another body is refused; a new key rotates
// the secret again.
func TestReplayAndKeyReuse(t *testing.T) {
	s := newStack(t)
	c := s.open(t)
	key := newKey()
	first := s.do(t, http.MethodPost, "/api/cases/"+c.id+"/invitations", s.claimant, key, map[string]any{"participantId": "p-claimant"})
	require.Equal(t, http.StatusCreated, first.status, string(first.body))
	token := data[actData](t, first).Invitation.RespondentInviteToken
	require.NotEmpty(t, token)

	var replays []reply
	s.unchanged(t, func() {
		replays = append(replays,
			s.do(t, http.MethodPost, "/api/cases/"+c.id+"/invitations", s.claimant, key, map[string]any{"participantId": "p-claimant"}),
			s.do(t, http.MethodPost, "/api/v2/cases/"+c.id+"/respondent-handoff", s.claimant, key, []byte(`{ "participantId" : "p-claimant" }`)),
			s.do(t, http.MethodPost, "/api/disputes/"+c.id+"/invite", s.claimant, key, map[string]any{"participantId": "p-claimant"}),
		)
	})
	for i, rep := range replays {
		require.Equal(t, http.StatusCreated, rep.status, string(rep.body))
		require.Equal(t, "true", rep.header.Get(idempotency.ReplayedHeader), "replay %d", i)
		require.NotContains(t, string(rep.body), token, "secrets are never replayed")
		require.NotContains(t, string(rep.body), "respondentInviteToken")
		require.Equal(t, "no-store", rep.header.Get("Cache-Control"))
		inv := data[actData](t, rep)
		require.Equal(t, data[actData](t, first).Events, inv.Events, "the same act, not a new one")
	}
	require.True(t, strings.HasPrefix(string(replays[2].body), `{"ok":true,"data":{`), "a replay on the website alias has its envelope")

	s.unchanged(t, func() {
		rep := s.do(t, http.MethodPost, "/api/cases/"+c.id+"/invitations", s.claimant, key, map[string]any{})
		require.Equal(t, http.StatusUnprocessableEntity, rep.status)
		require.Equal(t, "idempotency_key_reused", rep.code)
	})

	// The secret of the first invitation still works: a replay rotated nothing.
	rep := s.do(t, http.MethodGet, "/api/cases/"+c.id, s.respondentAgent, "", nil, auth.CapabilityHeader, token)
	require.Equal(t, http.StatusOK, rep.status)

	// A new key asks for a new secret; the old one stops working.
	rep = s.do(t, http.MethodPost, "/api/cases/"+c.id+"/invitations", s.claimant, newKey(), map[string]any{"participantId": "p-claimant"})
	require.Equal(t, http.StatusCreated, rep.status)
	require.NotEqual(t, token, data[actData](t, rep).Invitation.RespondentInviteToken)
	s.unchanged(t, func() {
		rep := s.do(t, http.MethodPost, "/api/partner-cases/"+c.id+"/respondent", s.respondentAgent, newKey(), nil, auth.CapabilityHeader, token)
		require.Equal(t, http.StatusNotFound, rep.status)
	})
	require.Equal(t, []string{"opened", "respondent_invited", "respondent_invited"}, s.docketTypes(t, c.id))
}

// A replay rechecks authority: a credential whose capability was rotated
// since gets no stored answer.
func TestAReplayRechecksAuthority(t *testing.T) {
	s := newStack(t)
	c := s.open(t)
	key := newKey()
	rep := s.do(t, http.MethodPost, "/api/cases/"+c.id+"/invitations", s.claimant, newKey(), nil)
	token := data[actData](t, rep).Invitation.RespondentInviteToken
	// A join refused for a reason that is final is journaled against key.
	rep = s.do(t, http.MethodPost, "/api/partner-cases/"+c.id+"/respondent", s.respondentAgent, key, map[string]any{"participantId": "p-claimant"}, auth.CapabilityHeader, token)
	require.Equal(t, http.StatusForbidden, rep.status, string(rep.body))
	rep = s.do(t, http.MethodPost, "/api/cases/"+c.id+"/invitations", s.claimant, newKey(), nil)
	require.Equal(t, http.StatusCreated, rep.status)
	rep = s.do(t, http.MethodPost, "/api/partner-cases/"+c.id+"/respondent", s.respondentAgent, key, map[string]any{"participantId": "p-claimant"}, auth.CapabilityHeader, token)
	require.Equal(t, http.StatusNotFound, rep.status, "the rotated invitation no longer shows the case, even to a replay: %s", rep.body)
}

// Concurrent invitations on one case each record one event, with
// gap-free sequences.
func TestConcurrentActsKeepTheDocketGapFree(t *testing.T) {
	s := newStack(t)
	c := s.open(t)
	const n = 32
	var wg sync.WaitGroup
	statuses := make([]int, n)
	for i := range n {
		wg.Go(func() {
			rep := s.do(t, http.MethodPost, "/api/cases/"+c.id+"/invitations", s.claimant, newKey(), nil)
			statuses[i] = rep.status
		})
	}
	wg.Wait()
	for _, st := range statuses {
		require.Equal(t, http.StatusCreated, st)
	}
	types := s.docketTypes(t, c.id)
	require.Len(t, types, n+1)
	rep := s.do(t, http.MethodGet, "/api/cases/"+c.id+"/events?limit=200", s.claimant, "", nil)
	for i, e := range data[docketData](t, rep).Events {
		require.Equal(t, int64(i+1), e.Sequence)
	}
}

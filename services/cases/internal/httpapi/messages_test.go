package httpapi_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
)

type messagesData struct {
	Messages []struct {
		MessageID string `json:"messageId"`
		Side      string `json:"side"`
		Text      string `json:"text"`
	} `json:"messages"`
	Read map[string]int `json:"read"`
}

// Both sides write to each other on any route family; each message is told
// to the other side (message_posted) and kept as posted; each side marks
// what it has read, which never moves back and tells nobody.
func TestMessagesBetweenTheSides(t *testing.T) {
	s := newStack(t)
	c := s.open(t)
	require.Equal(t, http.StatusOK, s.do(t, http.MethodPost, "/api/partner-cases/"+c.id+"/respondent", s.respondent, newKey(), nil).status)

	key := newKey()
	first := s.do(t, http.MethodPost, "/api/cases/"+c.id+"/messages", s.claimant, key, map[string]any{"text": "Can you share the courier's tracking number?"})
	require.Equal(t, http.StatusCreated, first.status, string(first.body))
	require.Equal(t, "no-store", first.header.Get("Cache-Control"))
	posted := data[struct {
		MessageID string `json:"messageId"`
		actData
	}](t, first)
	require.NotEmpty(t, posted.MessageID)
	require.Equal(t, "message_posted", posted.Events[0].Type)

	// A retry on an alias replays the same message; the same key with
	// another text is refused.
	replay := s.do(t, http.MethodPost, "/api/v2/cases/"+c.id+"/messages", s.claimant, key, map[string]any{"text": "Can you share the courier's tracking number?"})
	require.Equal(t, http.StatusCreated, replay.status, string(replay.body))
	require.Equal(t, posted.MessageID, data[struct {
		MessageID string `json:"messageId"`
	}](t, replay).MessageID)
	s.unchanged(t, func() {
		reused := s.do(t, http.MethodPost, "/api/cases/"+c.id+"/messages", s.claimant, key, map[string]any{"text": "something else"})
		require.Equal(t, http.StatusUnprocessableEntity, reused.status, string(reused.body))
		require.Equal(t, "idempotency_key_reused", reused.code)
	})

	second := s.do(t, http.MethodPost, "/api/disputes/"+c.id+"/messages", s.respondent, newKey(), map[string]any{"text": "Tracking 1Z999."})
	require.Equal(t, http.StatusCreated, second.status, string(second.body))
	secondID := data[struct {
		MessageID string `json:"messageId"`
	}](t, second).MessageID

	read := s.do(t, http.MethodPatch, "/api/v2/cases/"+c.id+"/messages", s.claimant, newKey(), map[string]any{"readThrough": secondID})
	require.Equal(t, http.StatusOK, read.status, string(read.body))
	require.Empty(t, data[actData](t, read).Events, "a read receipt calls nobody back")
	back := s.do(t, http.MethodPatch, "/api/cases/"+c.id+"/messages", s.claimant, newKey(), map[string]any{"readThrough": posted.MessageID})
	require.Equal(t, http.StatusOK, back.status, string(back.body))

	list := s.do(t, http.MethodGet, "/api/disputes/"+c.id+"/messages", s.respondent, "", nil)
	require.Equal(t, http.StatusOK, list.status, string(list.body))
	require.Equal(t, "private, no-store", list.header.Get("Cache-Control"))
	got := data[messagesData](t, list)
	require.Len(t, got.Messages, 2)
	require.Equal(t, "claimant", got.Messages[0].Side)
	require.Equal(t, "Tracking 1Z999.", got.Messages[1].Text)
	require.Equal(t, map[string]int{"claimant": 2, "respondent": 0}, got.Read, "reading never moves back")

	types := s.docketTypes(t, c.id)
	require.Equal(t, []string{"message_posted", "message_posted"}, types[len(types)-2:])
}

func TestMessageRefusalsChangeNothing(t *testing.T) {
	s := newStack(t)
	c := s.open(t)
	base := "/api/cases/" + c.id + "/messages"
	tests := []struct {
		name, method, token string
		body                any
		status              int
		code                string
	}{
		{"a partner taking no part", http.MethodPost, s.stranger, map[string]any{"text": "hello"}, http.StatusNotFound, "case_not_found_or_opening"},
		{"another tenant", http.MethodPost, s.otherTenant, map[string]any{"text": "hello"}, http.StatusNotFound, "case_not_found_or_opening"},
		{"the other environment", http.MethodGet, s.live, nil, http.StatusNotFound, "case_not_found_or_opening"},
		{"no text", http.MethodPost, s.claimant, map[string]any{"text": ""}, http.StatusBadRequest, "invalid_act"},
		{"a control character", http.MethodPost, s.claimant, map[string]any{"text": "a\u0007b"}, http.StatusBadRequest, "invalid_act"},
		{"an unknown field", http.MethodPost, s.claimant, map[string]any{"text": "a", "side": "respondent"}, http.StatusBadRequest, "unknown_field"},
		{"the respondent before joining", http.MethodPost, s.respondent, map[string]any{"text": "hello"}, http.StatusUnprocessableEntity, "not_a_participant"},
		{"an agent without authority", http.MethodPost, s.claimantAgent, map[string]any{"text": "hello"}, http.StatusNotFound, "case_not_found_or_opening"},
		{"read an unknown message", http.MethodPatch, s.claimant, map[string]any{"readThrough": "msg_nope"}, http.StatusNotFound, "message_not_found"},
		{"read without a message", http.MethodPatch, s.claimant, map[string]any{}, http.StatusBadRequest, "invalid_act"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s.unchanged(t, func() {
				key := ""
				if tt.method != http.MethodGet {
					key = newKey()
				}
				rep := s.do(t, tt.method, base, tt.token, key, tt.body)
				require.Equal(t, tt.status, rep.status, string(rep.body))
				require.Equal(t, tt.code, rep.code)
			})
		})
	}
}

// The partner alias of the decision status reads where a case stands:
// nothing is decided, and a decision waits for the record to close.
func TestDecisionStatus(t *testing.T) {
	s := newStack(t)
	c := s.open(t)
	rep := s.do(t, http.MethodGet, "/api/v2/cases/"+c.id+"/decision-status", s.respondent, "", nil)
	require.Equal(t, http.StatusOK, rep.status, string(rep.body))
	got := data[struct {
		Decision         string `json:"decision"`
		DecisionExpected bool   `json:"decisionExpected"`
		WaitingFor       string `json:"waitingFor"`
		DeadlineAt       string `json:"deadlineAt"`
	}](t, rep)
	require.Equal(t, "not_decided", got.Decision)
	require.True(t, got.DecisionExpected)
	require.Equal(t, "record_closing", got.WaitingFor)
	require.NotEmpty(t, got.DeadlineAt)

	require.Equal(t, http.StatusCreated, s.do(t, http.MethodPost, "/api/cases/"+c.id+"/termination-requests", s.claimant, newKey(), nil).status)
	rep = s.do(t, http.MethodGet, "/api/v2/cases/"+c.id+"/decision-status", s.claimant, "", nil)
	got = data[struct {
		Decision         string `json:"decision"`
		DecisionExpected bool   `json:"decisionExpected"`
		WaitingFor       string `json:"waitingFor"`
		DeadlineAt       string `json:"deadlineAt"`
	}](t, rep)
	require.False(t, got.DecisionExpected, "a withdrawn case is never decided")
	require.Empty(t, got.WaitingFor)

	summary := s.do(t, http.MethodGet, "/api/v2/cases/"+c.id+"/record-confirmations", s.claimant, "", nil)
	require.Equal(t, http.StatusOK, summary.status, string(summary.body))
	require.Equal(t, "private, no-store", summary.header.Get("Cache-Control"))
}

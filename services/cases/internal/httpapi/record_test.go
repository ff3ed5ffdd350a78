package httpapi_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/jcs"
)

// fastPlan opens a case with one evidence round of one filing per side
// and no answer: two submissions bring it to the record confirmation.
func fastPlan(payload map[string]any) {
	payload["procedure"] = map[string]any{
		"profile": "fast", "answerRequired": false, "evidenceRounds": 1,
		"rebuttalRounds": 0, "filingsPerSidePerStage": 1, "recordConfirmationRequired": true,
	}
}

// awaitingConfirmation opens a fast case, lets the respondent join and
// each side file one submission; it returns the case and the two
// submissions' ids.
func (s *stack) awaitingConfirmation(t *testing.T) (c opened, claimantSub, respondentSub string) {
	t.Helper()
	c = s.open(t, fastPlan)
	require.Equal(t, http.StatusOK, s.do(t, http.MethodPost, "/api/partner-cases/"+c.id+"/respondent", s.respondent, newKey(), nil).status)
	var ids []string
	for _, who := range []string{s.claimant, s.respondent} {
		rep := s.do(t, http.MethodPost, "/api/cases/"+c.id+"/submissions", who, newKey(), map[string]any{"text": "what happened, as " + who[:6]})
		require.Equal(t, http.StatusCreated, rep.status, string(rep.body))
		ids = append(ids, data[actData](t, rep).SubmissionID)
	}
	rep := s.do(t, http.MethodGet, "/api/cases/"+c.id, s.claimant, "", nil)
	require.Equal(t, "awaiting_record_confirmation", data[caseData](t, rep).Status)
	return c, ids[0], ids[1]
}

type summaryData struct {
	Status          string            `json:"status"`
	SummaryDigest   string            `json:"summaryDigest"`
	CorrectionTexts map[string]string `json:"correctionTexts"`
	Corrections     []struct {
		ID      string `json:"id"`
		Side    string `json:"side"`
		EntryID string `json:"entryId"`
		Digest  string `json:"digest"`
	} `json:"corrections"`
	Confirmations []struct {
		Side string `json:"side"`
	} `json:"confirmations"`
}

// summary reads the record summary and checks its digest is what it says:
// the SHA-256 of the RFC 8785 form of the answer, submissions, exhibits
// and corrections it shows.
func (s *stack) summary(t *testing.T, path, token string) summaryData {
	t.Helper()
	rep := s.do(t, http.MethodGet, path, token, "", nil)
	require.Equal(t, http.StatusOK, rep.status, string(rep.body))
	var env struct {
		Data map[string]json.RawMessage `json:"data"`
	}
	require.NoError(t, json.Unmarshal(rep.body, &env))
	digested := map[string]json.RawMessage{}
	for _, k := range []string{"answer", "submissions", "exhibits", "corrections"} {
		if v, ok := env.Data[k]; ok {
			digested[k] = v
		}
	}
	b, err := jcs.Canonicalize(digested)
	require.NoError(t, err)
	sum := sha256.Sum256(b)
	got := data[summaryData](t, rep)
	require.Equal(t, hex.EncodeToString(sum[:]), got.SummaryDigest, "the digest is of the entries shown")
	return got
}

// A side corrects its own entry before it confirms: the summary digest
// changes, the other side's confirmation of the old summary is withdrawn,
// and the exact-digest confirmation refuses the old digest.
func TestTheRecordIsCorrectedAndConfirmedByItsDigest(t *testing.T) {
	s := newStack(t)
	c, mine, theirs := s.awaitingConfirmation(t)
	base := "/api/cases/" + c.id

	first := s.summary(t, base+"/record-summary", s.claimant)
	require.Empty(t, first.Corrections)
	require.Equal(t, first.SummaryDigest, s.summary(t, "/api/v2/cases/"+c.id+"/restatement", s.respondent).SummaryDigest, "both sides read one record")

	rep := s.do(t, http.MethodPost, "/api/v2/cases/"+c.id+"/record-confirmations", s.respondent, newKey(), map[string]any{"summaryDigest": first.SummaryDigest})
	require.Equal(t, http.StatusOK, rep.status, string(rep.body))

	s.unchanged(t, func() {
		for _, tc := range []struct {
			name, token, entry, code string
			status                   int
		}{
			{"the other side's submission", s.claimant, theirs, "entry_not_found", http.StatusNotFound},
			{"no such entry", s.claimant, "sub_nothing", "entry_not_found", http.StatusNotFound},
			{"no answer was filed", s.respondent, "answer", "entry_not_found", http.StatusNotFound},
			{"another partner of the tenant", s.stranger, mine, "case_not_found_or_opening", http.StatusNotFound},
			{"another tenant", s.otherTenant, mine, "case_not_found_or_opening", http.StatusNotFound},
			{"the respondent, which confirmed", s.respondent, theirs, "record_already_confirmed", http.StatusConflict},
		} {
			rep := s.do(t, http.MethodPost, base+"/record-summary/corrections", tc.token, newKey(), map[string]any{"entryId": tc.entry, "text": "in fact"})
			require.Equal(t, tc.status, rep.status, "%s: %s", tc.name, rep.body)
			require.Equal(t, tc.code, rep.code, tc.name)
		}
		rep := s.do(t, http.MethodPost, base+"/record-summary/corrections", s.claimant, newKey(), map[string]any{"entryId": mine, "text": ""})
		require.Equal(t, http.StatusBadRequest, rep.status)
		require.Equal(t, "invalid_act", rep.code)
	})

	rep = s.do(t, http.MethodPost, base+"/record-summary/corrections", s.claimant, newKey(), map[string]any{"entryId": mine, "text": "The invoice was dated 3 March, not 3 May."})
	require.Equal(t, http.StatusCreated, rep.status, string(rep.body))
	act := data[struct {
		CorrectionID string `json:"correctionId"`
		Events       []struct{ Type string }
	}](t, rep)
	require.NotEmpty(t, act.CorrectionID)
	require.Equal(t, "record_corrected", act.Events[0].Type)

	second := s.summary(t, base+"/record-summary", s.respondent)
	require.NotEqual(t, first.SummaryDigest, second.SummaryDigest)
	require.Empty(t, second.Confirmations, "the respondent confirmed another summary: it is asked again")
	require.Len(t, second.Corrections, 1)
	require.Equal(t, mine, second.Corrections[0].EntryID)
	require.Equal(t, "claimant", second.Corrections[0].Side)
	require.Equal(t, "The invoice was dated 3 March, not 3 May.", second.CorrectionTexts[act.CorrectionID])

	s.unchanged(t, func() {
		rep := s.do(t, http.MethodPost, base+"/record-summary/confirmations", s.respondent, newKey(), map[string]any{"summaryDigest": first.SummaryDigest})
		require.Equal(t, http.StatusUnprocessableEntity, rep.status, string(rep.body))
		require.Equal(t, "record_summary_digest_mismatch", rep.code)
	})

	rep = s.do(t, http.MethodPost, base+"/record-summary/confirmations", s.respondent, newKey(), map[string]any{"summaryDigest": second.SummaryDigest})
	require.Equal(t, http.StatusOK, rep.status, string(rep.body))
	rep = s.do(t, http.MethodPost, base+"/record-summary/confirmations", s.claimant, newKey(), nil)
	require.Equal(t, http.StatusOK, rep.status, string(rep.body))
	require.Equal(t, "record_confirmed", data[actData](t, rep).Case.Status)

	s.unchanged(t, func() {
		rep := s.do(t, http.MethodPost, base+"/record-summary/corrections", s.claimant, newKey(), map[string]any{"entryId": mine, "text": "later"})
		require.Equal(t, http.StatusConflict, rep.status, string(rep.body))
		require.Equal(t, "stage_closed", rep.code, "the record is closed")
	})
	types := s.docketTypes(t, c.id)
	require.Contains(t, types, "record_corrected")
	require.Equal(t, []string{"record_confirmed", "evidence_export_ready", "evidence_export_ready"}, types[len(types)-3:])
}

// The website restatement is the record summary; its POST corrects or
// confirms by the body's action, and confirms only an exact digest.
func TestTheWebsiteRestatement(t *testing.T) {
	s := newStack(t)
	c, mine, theirs := s.awaitingConfirmation(t)
	path := "/api/disputes/" + c.id + "/restatement"

	shown := s.summary(t, path, s.claimant)
	s.unchanged(t, func() {
		for name, body := range map[string]map[string]any{
			"no action":                      {"summaryDigest": shown.SummaryDigest},
			"an unknown action":              {"action": "approve", "summaryDigest": shown.SummaryDigest},
			"a confirmation without digest":  {"action": "confirm"},
			"a confirmation with a text":     {"action": "confirm", "summaryDigest": shown.SummaryDigest, "text": "also this"},
			"a correction carrying a digest": {"action": "correct", "entryId": mine, "text": "x", "summaryDigest": shown.SummaryDigest},
		} {
			rep := s.do(t, http.MethodPost, path, s.claimant, newKey(), body)
			require.Equal(t, http.StatusBadRequest, rep.status, "%s: %s", name, rep.body)
			require.Equal(t, "invalid_act", rep.code, name)
		}
		rep := s.do(t, http.MethodPost, path, s.claimant, newKey(), map[string]any{"action": "correct", "entryId": theirs, "text": "x"})
		require.Equal(t, http.StatusNotFound, rep.status, string(rep.body))
		require.Equal(t, "entry_not_found", rep.code, "a side corrects only its own entries")
		rep = s.do(t, http.MethodPost, path, s.otherTenant, newKey(), map[string]any{"action": "confirm", "summaryDigest": shown.SummaryDigest})
		require.Equal(t, http.StatusNotFound, rep.status, string(rep.body))
	})

	// Retry rule 6: the website, partner and canonical routes keep
	// separate journals: a key replays only on its own route, and the
	// same key on another is refused.
	var ids []string
	for i, p := range []string{path, "/api/v2/cases/" + c.id + "/restatement", "/api/cases/" + c.id + "/record-summary/corrections"} {
		body := map[string]any{"entryId": mine, "text": "A correction."}
		if p == path {
			body["action"] = "correct"
		}
		key := newKey()
		rep := s.do(t, http.MethodPost, p, s.claimant, key, body)
		require.Equal(t, http.StatusCreated, rep.status, "%s: %s", p, rep.body)
		ids = append(ids, data[struct {
			CorrectionID string `json:"correctionId"`
		}](t, rep).CorrectionID)
		again := s.do(t, http.MethodPost, p, s.claimant, key, body)
		require.Equal(t, http.StatusCreated, again.status)
		require.Equal(t, ids[i], data[struct {
			CorrectionID string `json:"correctionId"`
		}](t, again).CorrectionID, "the same key on the same route is a replay")
		if i == 0 {
			s.unchanged(t, func() {
				rep := s.do(t, http.MethodPost, "/api/cases/"+c.id+"/record-summary/corrections", s.claimant, key, map[string]any{"entryId": mine, "text": "A correction."})
				require.Equal(t, http.StatusUnprocessableEntity, rep.status, string(rep.body))
				require.Equal(t, "idempotency_key_reused", rep.code, "one key is not reused across the journals")
			})
		}
	}
	require.Len(t, s.summary(t, path, s.respondent).Corrections, 3)
	require.NotEqual(t, ids[0], ids[1])
	require.NotEqual(t, ids[1], ids[2])

	s.unchanged(t, func() {
		rep := s.do(t, http.MethodPost, path, s.respondent, newKey(), map[string]any{"action": "confirm", "summaryDigest": shown.SummaryDigest})
		require.Equal(t, http.StatusUnprocessableEntity, rep.status, string(rep.body))
		require.Equal(t, "record_summary_digest_mismatch", rep.code, "the summary changed since it was shown")
	})
	now := s.summary(t, path, s.respondent)
	for _, who := range []string{s.respondent, s.claimant} {
		rep := s.do(t, http.MethodPost, path, who, newKey(), map[string]any{"action": "confirm", "summaryDigest": now.SummaryDigest})
		require.Equal(t, http.StatusOK, rep.status, string(rep.body))
	}
	require.Equal(t, "record_confirmed", s.summary(t, path, s.claimant).Status)
}

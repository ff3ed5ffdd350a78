package httpapi_test

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

type restatementData struct {
	CaseID       string `json:"caseId"`
	RecordDigest string `json:"recordDigest"`
	Entries      []struct {
		EntryID string `json:"entryId"`
		Kind    string `json:"kind"`
		Side    string `json:"side"`
		Digest  string `json:"digest"`
		Summary string `json:"summary"`
	} `json:"entries"`
}

// POST /api/disputes/{id}/restatement/generate restates the record entry
// by entry, each summary beside the digest it was taken from; the same
// record gives the same restatement, and generating changes nothing.
func TestTheWebsiteGeneratesTheRestatement(t *testing.T) {
	s := newStack(t)
	c, claimantSub, respondentSub := s.awaitingConfirmation(t)
	path := "/api/disputes/" + c.id + "/restatement/generate"

	var first []byte
	s.unchanged(t, func() {
		rep := s.do(t, http.MethodPost, path, s.respondent, "", nil)
		require.Equal(t, http.StatusOK, rep.status, string(rep.body))
		require.True(t, strings.HasPrefix(string(rep.body), `{"ok":true,"data":{`), string(rep.body))
		first = rep.body
	})
	r := data[restatementData](t, reply{body: first})
	require.Equal(t, c.id, r.CaseID)
	require.Regexp(t, "^[0-9a-f]{64}$", r.RecordDigest)
	require.Len(t, r.Entries, 2)
	require.Equal(t, []string{claimantSub, respondentSub}, []string{r.Entries[0].EntryID, r.Entries[1].EntryID})
	require.Equal(t, "submission", r.Entries[0].Kind)
	require.Equal(t, "claimant", r.Entries[0].Side)
	sum := sha256.Sum256([]byte("what happened, as " + s.claimant[:6]))
	require.Equal(t, hex.EncodeToString(sum[:]), r.Entries[0].Digest)
	require.Equal(t, "what happened, as "+s.claimant[:6], r.Entries[0].Summary)

	again := s.do(t, http.MethodPost, path, s.claimant, "", nil)
	require.Equal(t, string(first), string(again.body), "the same record, the same restatement")

	for name, token := range map[string]string{"another partner": s.stranger, "another tenant": s.otherTenant} {
		rep := s.do(t, http.MethodPost, path, token, "", nil)
		require.Equal(t, http.StatusNotFound, rep.status, name)
		require.Equal(t, "case_not_found_or_opening", rep.code, name)
	}
	require.Equal(t, http.StatusUnauthorized, s.do(t, http.MethodPost, path, "", "", nil).status)
}

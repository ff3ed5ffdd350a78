package main

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func writeCredentials(t *testing.T, lines ...string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "credentials.env")
	require.NoError(t, os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o600))
	return path
}

var partyCredentials = []string{
	"export PCOURT_URL=http://127.0.0.1:1",
	"export PCOURT_ORCHESTRATOR_TOKEN=o",
	"export PCOURT_CLAIMANT_TOKEN=c",
	"export PCOURT_RESPONDENT_TOKEN=r",
}

// What the demo refuses before it calls anything: a stop it does not
// know, and the award walkthrough without the reviewer's token.
func TestRefusedBeforeAnyCall(t *testing.T) {
	parties := writeCredentials(t, partyCredentials...)
	for name, tc := range map[string]struct {
		args []string
		want string
	}{
		"an unknown stop":              {[]string{"-through", "appeal", "-env", parties}, `-through "appeal": want opening, award or execution`},
		"an execution, no facilitator": {[]string{"-through", "execution", "-env", writeCredentials(t, append(partyCredentials, "export PCOURT_REVIEWER_TOKEN=v")...)}, "PCOURT_FACILITATOR_URL"},
		"the award with no reviewer":   {[]string{"-through", "award", "-env", parties}, "PCOURT_REVIEWER_TOKEN"},
		"a stray argument":             {[]string{"-env", parties, "award"}, "unexpected arguments"},
		"no credentials at all":        {[]string{"-env", filepath.Join(t.TempDir(), "none.env")}, "PCOURT_URL and the three"},
	} {
		t.Run(name, func(t *testing.T) {
			err := run(context.Background(), tc.args, func(string) string { return "" }, io.Discard)
			require.ErrorContains(t, err, tc.want)
		})
	}
}

func TestReviewerTokenFromTheEnvironmentOrTheFile(t *testing.T) {
	inFile := writeCredentials(t, append(partyCredentials, "export PCOURT_REVIEWER_TOKEN=from-file")...)
	s, err := loadSettings(inFile, func(string) string { return "" }, throughAward)
	require.NoError(t, err)
	require.Equal(t, "from-file", s.reviewer)

	env := func(name string) string {
		if name == "PCOURT_REVIEWER_TOKEN" {
			return "from-env"
		}
		return ""
	}
	s, err = loadSettings(inFile, env, throughAward)
	require.NoError(t, err)
	require.Equal(t, "from-env", s.reviewer, "the environment wins")

	_, err = loadSettings(writeCredentials(t, partyCredentials...), func(string) string { return "" }, throughOpening)
	require.NoError(t, err, "the walkthrough to the opening needs no reviewer")
}

// A decision that never reaches the stage waited for ends the demo with
// an error naming the stage it stayed in; a request for human attention
// ends it at once, with the adjudicator's reason.
func TestWaitForStageNamesWhereTheDecisionStayed(t *testing.T) {
	for name, tc := range map[string]struct {
		status string
		want   []string
	}{
		"stuck before assignment": {`{"data":{"stage":"unassigned","waitingFor":"tribunal_assignment"}}`,
			[]string{"waited in stage unassigned (waiting for tribunal_assignment)", "without reaching stage review"}},
		"stuck in adjudication": {`{"data":{"stage":"adjudication","waitingFor":"adjudicator_proposal"}}`,
			[]string{"waited in stage adjudication (waiting for adjudicator_proposal)", "adjudicator.log"}},
		"human attention": {`{"data":{"stage":"human_attention","run":{"attentionReason":"the record has no item"}}}`,
			[]string{"human attention", "the record has no item"}},
	} {
		t.Run(name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path != "/api/v2/cases/cs_1/decision-status" || r.Header.Get("Authorization") != "Bearer tok" {
					http.NotFound(w, r)
					return
				}
				_, _ = io.WriteString(w, tc.status)
			}))
			t.Cleanup(srv.Close)
			c := &client{base: srv.URL, out: io.Discard, http: srv.Client()}
			_, err := waitForStage(context.Background(), c, "tok", "cs_1", stageReview, 600*time.Millisecond)
			require.Error(t, err)
			for _, want := range tc.want {
				require.ErrorContains(t, err, want)
			}
		})
	}
}

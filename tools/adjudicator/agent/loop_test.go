package agent_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/award"
	"github.com/pcourt/pcourt/libs/webhook/signature"
	"github.com/pcourt/pcourt/tools/adjudicator/agent"
)

// callback is a case-event-v2 body as the webhooks service sends it.
func callback(eventID, deliveryID, eventType, caseID string) []byte {
	return fmt.Appendf(nil, `{"schemaVersion":"case-event-v2","eventId":%q,"deliveryId":%q,"sequence":7,"type":%q,"occurredAt":"2026-11-23T09:59:58.000Z","caseId":%q,"externalCaseId":"ext-%s","actionRequired":true}`,
		eventID, deliveryID, eventType, caseID, caseID)
}

// deliver signs body for the agent's endpoint, as the webhooks service
// does, and posts it to the agent.
func deliver(t testing.TB, api *fakeAPI, to string, body []byte, eventID string, test bool) (int, string) {
	t.Helper()
	hdr, err := api.signer.Sign(body, eventID, signature.Recipient{EndpointID: endpointID, Test: test}, now.Add(-time.Second))
	require.NoError(t, err)
	req, err := http.NewRequest(http.MethodPost, to, bytes.NewReader(body))
	require.NoError(t, err)
	hdr.Apply(req.Header)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	text, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(bytes.TrimSpace(text))
}

// startAgent serves a's Handler, as an operator's listener would, and
// returns its URL and a function that waits for the agent's work to end.
func startAgent(t testing.TB, a *agent.Agent) (string, func()) {
	t.Helper()
	srv := httptest.NewServer(a.Handler())
	t.Cleanup(srv.Close)
	return srv.URL + "/pcourt-events", func() {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		require.NoError(t, a.Shutdown(ctx), "the agent's work did not end")
	}
}

func TestTheWholeLoop(t *testing.T) {
	api := newFakeAPI(t)
	pkg := loadPackage(t, "default", agent.RubricConfiguration())
	api.serve(t, pkg)
	// The first filing meets an overloaded server: the retry must carry the
	// same Idempotency-Key and the same bytes.
	api.answerFilings(answer{http.StatusServiceUnavailable, `{"ok":false,"error":{"code":"unavailable","message":"try later"}}`})
	a := newAgent(t, api, agent.Config{})
	url, wait := startAgent(t, a)

	// Another event type: acknowledged, ignored.
	status, _ := deliver(t, api, url, callback("evt_opened", "dlv_1", "case_opened", "case_default"), "evt_opened", false)
	require.Equal(t, http.StatusAccepted, status)
	// A test event of the right type: no case stands behind it.
	status, _ = deliver(t, api, url, callback("evt_test", "dlv_2", agent.EventAdjudicationRequested, "case_default"), "evt_test", true)
	require.Equal(t, http.StatusAccepted, status)
	// The adjudication request, then a second delivery of the same event.
	body := callback("evt_adj", "dlv_3", agent.EventAdjudicationRequested, "case_default")
	status, _ = deliver(t, api, url, body, "evt_adj", false)
	require.Equal(t, http.StatusAccepted, status)
	status, text := deliver(t, api, url, callback("evt_adj", "dlv_4", agent.EventAdjudicationRequested, "case_default"), "evt_adj", false)
	require.Equal(t, http.StatusOK, status)
	require.Equal(t, "duplicate", text)
	// A forged delivery: signed for another endpoint.
	hdr, err := api.signer.Sign(body, "evt_adj", signature.Recipient{EndpointID: "we_someone_else"}, now)
	require.NoError(t, err)
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	require.NoError(t, err)
	hdr.Apply(req.Header)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusUnauthorized, resp.StatusCode)

	wait()

	reads, filings := api.received()
	require.Len(t, reads, 1, "one event, one reading: the other type, the test event and the duplicate are not processed")
	require.Equal(t, "/api/disputes/case_default/review-package", reads[0].Path)
	require.Equal(t, "Bearer "+token, reads[0].Header.Get("Authorization"))
	require.Len(t, filings, 2, "the 503, then the retry")
	key := wantKey("case_default", runID(pkg))
	for _, f := range filings {
		require.Equal(t, http.MethodPost, f.Method)
		require.Equal(t, "/api/disputes/case_default/synthesize-opinion", f.Path)
		require.Equal(t, "Bearer "+token, f.Header.Get("Authorization"))
		require.Equal(t, "application/json", f.Header.Get("Content-Type"))
		require.Equal(t, key, f.Header.Get("Idempotency-Key"))
	}
	require.Equal(t, filings[0].Body, filings[1].Body)
	got := decodeFiling(t, filings[1].Body)
	require.Equal(t, runID(pkg), got.RunID)
	require.Equal(t, recordDigest(pkg), got.InputDigest)
	require.Equal(t, award.OutcomeClaimUpheld, got.Proposal.Outcome)
	// Due 14 days after the request's date (the event's occurredAt).
	require.Equal(t, []award.Remedy{pay(42000)}, got.Proposal.Remedies)
	require.Equal(t, citeAll(pkg), got.Proposal.Citations)
}

func TestTheLoopWithAModel(t *testing.T) {
	api := newFakeAPI(t)
	model := newFakeModel(t, recorded(t, "outside-record"), recorded(t, "outside-record"))
	cfg := agent.Config{Model: modelConfig(model)}
	api.serve(t, loadPackage(t, "partial", agent.ModelConfiguration(cfg.Model, agent.DefaultInstructions)))
	a := newAgent(t, api, cfg)
	url, wait := startAgent(t, a)

	status, _ := deliver(t, api, url, callback("evt_p", "dlv_1", agent.EventAdjudicationRequested, "case_partial"), "evt_p", false)
	require.Equal(t, http.StatusAccepted, status)
	wait()

	require.Len(t, model.received(), 2)
	got := api.onlyFiling(t)
	require.Nil(t, got.Proposal)
	require.Contains(t, got.HumanAttention.Reason, `item "sub_c9" is not in the record`)
}

func TestAFailedEventIsProcessedAgainOnReplayARefusedOneIsNot(t *testing.T) {
	api := newFakeAPI(t)
	api.serve(t, loadPackage(t, "default", agent.RubricConfiguration()))
	api.failReads(2) // 500 through both attempts of the first delivery
	a := newAgent(t, api, agent.Config{Attempts: 2})
	url, wait := startAgent(t, a)

	// The server failed through every attempt: the event id is released,
	// so the webhooks service's replay of the event is processed.
	status, _ := deliver(t, api, url, callback("evt_x", "dlv_1", agent.EventAdjudicationRequested, "case_default"), "evt_x", false)
	require.Equal(t, http.StatusAccepted, status)
	require.Eventually(t, func() bool {
		status, _ := deliver(t, api, url, callback("evt_x", "dlv_2", agent.EventAdjudicationRequested, "case_default"), "evt_x", false)
		return status == http.StatusAccepted
	}, 5*time.Second, 5*time.Millisecond, "the replay is processed once the failed delivery let go of the event")

	// A refusal (404: no such case) is the end of its event: read once,
	// and a replay is a duplicate.
	status, _ = deliver(t, api, url, callback("evt_y", "dlv_3", agent.EventAdjudicationRequested, "case_missing"), "evt_y", false)
	require.Equal(t, http.StatusAccepted, status)
	require.Eventually(t, func() bool {
		reads, _ := api.received()
		return len(reads) == 4
	}, 5*time.Second, 5*time.Millisecond)
	wait()
	status, text := deliver(t, api, url, callback("evt_y", "dlv_4", agent.EventAdjudicationRequested, "case_missing"), "evt_y", false)
	require.Equal(t, http.StatusServiceUnavailable, status, "shut down")
	require.Equal(t, "shutting_down", text)

	reads, filings := api.received()
	require.Len(t, reads, 4, "two failed reads, the replay's, the missing case's")
	require.Len(t, filings, 1, "the replay filed")
}

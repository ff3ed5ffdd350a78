package httpapi_test

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/auth"
	"github.com/pcourt/pcourt/libs/auth/authtest"
	"github.com/pcourt/pcourt/libs/award"
	"github.com/pcourt/pcourt/services/cases/internal/caseflow"
	"github.com/pcourt/pcourt/services/cases/internal/httpapi"
)

// awarded walks a quick proceeding to its award: the adjudicator
// proposes 300.00 USD from the respondent to the claimant, the reviewer
// agrees, both sides see the dispositive part, the reviewer signs.
func (s *stack) awarded(t *testing.T) (opened, string) {
	t.Helper()
	c := s.recordClosed(t)
	w := "/api/disputes/" + c.id + "/"
	pkg := data[reviewPackageData](t, s.do(t, http.MethodGet, w+"review-package", s.adjudicator, "", nil))
	item := pkg.Record.Items[1]
	proposal := map[string]any{
		"outcome":   "claim_partially_upheld",
		"remedies":  []map[string]any{{"kind": "payment", "payer": "respondent", "payee": "claimant", "amountMinor": 30000, "currency": "USD", "dueBy": dueIn(30 * 24 * time.Hour)}},
		"reasons":   "The key never worked for most of the term.",
		"citations": []map[string]any{{"itemId": item.ItemID, "digest": item.Digest, "pinpoint": "tickets"}},
	}
	steps := []struct {
		path, token string
		body        any
	}{
		{"synthesize-opinion", s.adjudicator, map[string]any{"runId": pkg.Run.RunID, "inputDigest": pkg.Record.Digest, "proposal": proposal}},
		{"reviewer-opinion", s.reviewer, map[string]any{"opinion": "agree"}},
		{"reviewer-attestation", s.reviewer, map[string]any{"reviewedRecord": true, "noConflict": true}},
		{"pre-award-review", s.reviewer, nil},
		{"pre-award-review", s.claimant, map[string]any{"clericalErrors": []string{}}},
		{"pre-award-review", s.respondent, map[string]any{"clericalErrors": []string{}}},
		{"signoff", s.reviewer, nil},
	}
	for _, st := range steps {
		rep := s.do(t, http.MethodPost, w+st.path, st.token, newKey(), st.body)
		require.Less(t, rep.status, 300, "%s: %s", st.path, rep.body)
	}
	st := data[decisionData](t, s.do(t, http.MethodGet, "/api/v2/cases/"+c.id+"/decision-status", s.claimant, "", nil))
	require.NotEmpty(t, st.AwardHash)
	return c, st.AwardHash
}

type postAwardData struct {
	AwardHash       string `json:"awardHash"`
	Final           bool   `json:"final"`
	FinalBy         string `json:"finalBy"`
	RequestDeadline string `json:"requestDeadline"`
	Requests        []struct {
		RequestID       string `json:"requestId"`
		Kind            string `json:"kind"`
		Side            string `json:"side"`
		Status          string `json:"status"`
		IssuedAwardHash string `json:"issuedAwardHash"`
	} `json:"requests"`
	Superseded []string `json:"supersededAwardHashes"`
}

type finalityData struct {
	Final           bool   `json:"final"`
	FinalAt         string `json:"finalAt"`
	WaitingFor      string `json:"waitingFor"`
	RequestDeadline string `json:"requestDeadline"`
	AwardHash       string `json:"awardHash"`
}

// A side asks for a correction within the window; the reviewer who signed
// grants it and a new award is served, naming the one it corrects, which
// stays readable, byte-identical and verifiable.
func TestAGrantedCorrectionServesANewAwardAndKeepsTheOld(t *testing.T) {
	s := newStack(t)
	c, first := s.awarded(t)
	base := "/api/cases/" + c.id + "/post-award-requests"
	oldJSON := s.raw(t, "/api/cases/"+c.id+"/award/artifacts/json", s.claimant)

	st := data[finalityData](t, s.do(t, http.MethodGet, "/api/v2/cases/"+c.id+"/decision-status", s.respondent, "", nil))
	require.False(t, st.Final)
	require.Equal(t, "award_finality", st.WaitingFor)
	require.NotEmpty(t, st.RequestDeadline)

	s.unchanged(t, func() {
		rep := s.do(t, http.MethodPost, base, s.stranger, newKey(), map[string]any{"kind": "correction", "text": "x"})
		require.Equal(t, http.StatusNotFound, rep.status, "another partner sees no case")
		rep = s.do(t, http.MethodPost, base, s.otherTenant, newKey(), map[string]any{"kind": "correction", "text": "x"})
		require.Equal(t, http.StatusNotFound, rep.status)
		rep = s.do(t, http.MethodPost, base, s.respondent, newKey(), map[string]any{"kind": "appeal", "text": "x"})
		require.Equal(t, http.StatusBadRequest, rep.status, string(rep.body))
		require.Equal(t, "invalid_after_award_act", rep.code)
	})

	rep := s.do(t, http.MethodPost, "/api/disputes/"+c.id+"/correct", s.respondent, newKey(), map[string]any{"text": "The amount should read 250.00: the last month was credited."})
	require.Equal(t, http.StatusCreated, rep.status, string(rep.body))
	v := data[postAwardData](t, s.do(t, http.MethodGet, base, s.claimant, "", nil))
	require.Len(t, v.Requests, 1)
	require.Equal(t, "correction", v.Requests[0].Kind)
	require.Equal(t, "respondent", v.Requests[0].Side)
	require.Equal(t, "post_award_request_decision", data[finalityData](t, s.do(t, http.MethodGet, "/api/v2/cases/"+c.id+"/decision-status", s.claimant, "", nil)).WaitingFor)

	corrected := []map[string]any{{"kind": "payment", "payer": "respondent", "payee": "claimant", "amountMinor": 25000, "currency": "USD", "dueBy": dueIn(30 * 24 * time.Hour)}}
	s.unchanged(t, func() {
		decide := map[string]any{"requestId": v.Requests[0].RequestID, "decision": "grant", "reasons": "A computational error.", "remedies": corrected}
		rep := s.do(t, http.MethodPatch, base, s.claimant, newKey(), decide)
		require.Equal(t, http.StatusForbidden, rep.status, string(rep.body))
		require.Equal(t, "not_tribunal_member", rep.code, "a side never decides its own request")
		rep = s.do(t, http.MethodPatch, base, s.adjudicator, newKey(), decide)
		require.Equal(t, http.StatusForbidden, rep.status, string(rep.body))
		require.Equal(t, "not_award_reviewer", rep.code, "the AI decides nothing after the award either")
		rep = s.do(t, http.MethodPatch, base, s.reviewer2, newKey(), decide)
		require.Equal(t, http.StatusNotFound, rep.status, "a reviewer not on the case sees nothing")
		tooMuch := map[string]any{"requestId": v.Requests[0].RequestID, "decision": "grant", "reasons": "r",
			"remedies": []map[string]any{{"kind": "payment", "payer": "respondent", "payee": "claimant", "amountMinor": 99000, "currency": "USD", "dueBy": dueIn(30 * 24 * time.Hour)}}}
		rep = s.do(t, http.MethodPatch, base, s.reviewer, newKey(), tooMuch)
		require.Equal(t, http.StatusUnprocessableEntity, rep.status, string(rep.body))
		require.Equal(t, "remedy_exceeds_claim", rep.code)
	})
	rep = s.do(t, http.MethodPatch, base, s.reviewer, newKey(), map[string]any{"requestId": v.Requests[0].RequestID, "decision": "grant", "reasons": "A computational error.", "remedies": corrected})
	require.Equal(t, http.StatusOK, rep.status, string(rep.body))
	v = data[postAwardData](t, rep)
	require.Equal(t, []string{first}, v.Superseded)
	require.Equal(t, "granted", v.Requests[0].Status)
	second := v.Requests[0].IssuedAwardHash
	require.Equal(t, second, v.AwardHash)

	award2 := data[struct {
		AwardID  string `json:"awardId"`
		Corrects string `json:"corrects"`
		Served   bool   `json:"served"`
		Remedies []struct {
			AmountMinor int64 `json:"amountMinor"`
		} `json:"remedies"`
	}](t, s.do(t, http.MethodGet, "/api/cases/"+c.id+"/award", s.claimant, "", nil))
	require.Equal(t, first, award2.Corrects)
	require.True(t, award2.Served)
	require.Equal(t, int64(25000), award2.Remedies[0].AmountMinor)
	require.Equal(t, "award:"+c.id+":2", award2.AwardID)

	newJSON := s.raw(t, "/api/cases/"+c.id+"/award/artifacts/json", s.respondent)
	require.Equal(t, second, award.Hash(newJSON))
	keys := s.raw(t, "/api/awards/keys", "")
	attestation := s.raw(t, "/api/cases/"+c.id+"/award/artifacts/json/attestation", s.respondent)
	_, err := award.Verify(newJSON, string(attestation), keys)
	require.NoError(t, err, "the amended award is signed like the first")
	require.Equal(t, oldJSON, s.raw(t, "/api/cases/"+c.id+"/award/artifacts/json?awardHash="+first, s.claimant), "the corrected award stays byte-identical")
	oldAttestation := s.raw(t, "/api/cases/"+c.id+"/award/artifacts/json/attestation?awardHash="+first, s.claimant)
	_, err = award.Verify(oldJSON, string(oldAttestation), keys)
	require.NoError(t, err)
	old := data[struct {
		Served       bool   `json:"served"`
		SupersededBy string `json:"supersededBy"`
	}](t, s.do(t, http.MethodGet, "/api/cases/"+c.id+"/award?awardHash="+first, s.claimant, "", nil))
	require.False(t, old.Served)
	require.Equal(t, second, old.SupersededBy)
	rep = s.do(t, http.MethodGet, "/api/cases/"+c.id+"/award?awardHash="+newKey(), s.claimant, "", nil)
	require.Equal(t, http.StatusNotFound, rep.status)
	require.Contains(t, s.docketTypes(t, c.id), "award_amended")
}

// Both sides waive their recourse (the website's consent): the award is
// final at once, and nothing more may be asked of it.
func TestBothSidesConsentingMakesTheAwardFinal(t *testing.T) {
	s := newStack(t)
	c, hash := s.awarded(t)
	w := "/api/disputes/" + c.id + "/"
	rep := s.do(t, http.MethodPost, w+"consent", s.claimant, newKey(), nil)
	require.Equal(t, http.StatusOK, rep.status, string(rep.body))
	require.False(t, data[postAwardData](t, rep).Final)
	s.unchanged(t, func() {
		rep := s.do(t, http.MethodPost, w+"consent", s.claimant, newKey(), nil)
		require.Equal(t, http.StatusConflict, rep.status)
		require.Equal(t, "recourse_waived", rep.code)
		rep = s.do(t, http.MethodPost, w+"post-award-request", s.claimant, newKey(), map[string]any{"kind": "interpretation", "text": "What is due?"})
		require.Equal(t, "recourse_waived", rep.code)
	})
	rep = s.do(t, http.MethodPost, w+"consent", s.respondent, newKey(), nil)
	require.Equal(t, http.StatusOK, rep.status, string(rep.body))
	v := data[postAwardData](t, rep)
	require.True(t, v.Final)
	require.Equal(t, "waiver", v.FinalBy)
	st := data[finalityData](t, s.do(t, http.MethodGet, "/api/v2/cases/"+c.id+"/decision-status", s.claimant, "", nil))
	require.True(t, st.Final)
	require.Equal(t, hash, st.AwardHash)
	final := data[struct {
		Final bool `json:"final"`
	}](t, s.do(t, http.MethodGet, "/api/cases/"+c.id+"/award", s.respondent, "", nil))
	require.True(t, final.Final, "the award says it is final")
	require.Contains(t, s.docketTypes(t, c.id), "award_final")
	s.unchanged(t, func() {
		rep := s.do(t, http.MethodPost, w+"additional-award", s.respondent, newKey(), map[string]any{"text": "x"})
		require.Equal(t, http.StatusConflict, rep.status)
		require.Equal(t, "award_final", rep.code)
	})
}

type executionData struct {
	ExecutionID string `json:"executionId"`
	Mode        string `json:"mode"`
	Status      string `json:"status"`
	AwardHash   string `json:"awardHash"`
	Attempts    []struct {
		Outcome string `json:"outcome"`
		Detail  string `json:"detail"`
	} `json:"attempts"`
	Completion *struct {
		Transaction  string `json:"transaction"`
		To           string `json:"to"`
		AmountAtomic string `json:"amountAtomic"`
		Reference    string `json:"reference"`
	} `json:"completion"`
}

// final makes the award of c final by both sides' consent.
func (s *stack) final(t *testing.T, c opened) {
	t.Helper()
	for _, token := range []string{s.claimant, s.respondent} {
		rep := s.do(t, http.MethodPost, "/api/disputes/"+c.id+"/consent", token, newKey(), nil)
		require.Equal(t, http.StatusOK, rep.status, string(rep.body))
	}
}

// grantReport gives a fresh credential of partner the explicit
// execution:report grant of side on the case.
func (s *stack) grantReport(t *testing.T, c opened, partner string, side auth.Side) string {
	t.Helper()
	token, cred := authtest.Mint(t, s.credentials, auth.RolePlatformOrchestrator, authtest.WithPartner(partner))
	require.NoError(t, s.credentials.Grant(context.Background(), auth.Membership{Resource: httpapi.ExecutionReportResource(c.id), Side: side,
		Subject: auth.CredentialSubject(cred.PublicID), ExpiresAt: time.Now().Add(24 * time.Hour)}))
	return token
}

// The obliged side reports that it paid: only with the explicit
// execution:report grant, only once the award is final, only for the
// served award, and once.
func TestThePartyReportsItsOwnExecutionWithItsGrant(t *testing.T) {
	s := newStack(t)
	c, hash := s.awarded(t)
	base := "/api/cases/" + c.id + "/executions"
	report := map[string]any{"mode": "party_reported", "action": "report", "awardHash": hash, "remedyIndex": 0, "reference": "wire 2026-11-28/0042"}
	reporter := s.grantReport(t, c, respondentPartner, auth.Respondent)
	claimantReporter := s.grantReport(t, c, claimantPartner, auth.Claimant)

	s.unchanged(t, func() {
		rep := s.do(t, http.MethodPost, base, s.respondent, newKey(), report)
		require.Equal(t, http.StatusForbidden, rep.status, string(rep.body))
		require.Equal(t, "execution_report_not_granted", rep.code, "a case membership is not the execution:report grant")
		rep = s.do(t, http.MethodPost, base, reporter, newKey(), report)
		require.Equal(t, http.StatusConflict, rep.status, string(rep.body))
		require.Equal(t, "award_not_final", rep.code)
	})
	s.final(t, c)
	s.unchanged(t, func() {
		wrong := map[string]any{"mode": "party_reported", "action": "report", "awardHash": award.Hash([]byte("another")), "remedyIndex": 0, "reference": "r"}
		rep := s.do(t, http.MethodPost, base, reporter, newKey(), wrong)
		require.Equal(t, http.StatusConflict, rep.status, string(rep.body))
		require.Equal(t, "award_hash_mismatch", rep.code)
		rep = s.do(t, http.MethodPost, base, claimantReporter, newKey(), report)
		require.Equal(t, http.StatusForbidden, rep.status, string(rep.body))
		require.Equal(t, "not_obligor", rep.code, "the claimant was ordered nothing")
		rep = s.do(t, http.MethodPost, base, s.stranger, newKey(), report)
		require.Equal(t, http.StatusNotFound, rep.status)
		refund := map[string]any{"mode": "escrow_release", "action": "release", "awardHash": hash, "remedyIndex": 0}
		rep = s.do(t, http.MethodPost, base, s.claimant, newKey(), refund)
		require.Equal(t, http.StatusConflict, rep.status, string(rep.body))
		require.Equal(t, "execution_mode_unavailable", rep.code)
	})
	rep := s.do(t, http.MethodPost, base, reporter, newKey(), report)
	require.Equal(t, http.StatusCreated, rep.status, string(rep.body))
	e := data[executionData](t, rep)
	require.Equal(t, "completed", e.Status)
	require.Equal(t, "wire 2026-11-28/0042", e.Completion.Reference)

	got := s.do(t, http.MethodGet, "/api/executions/"+e.ExecutionID, s.claimant, "", nil)
	require.Equal(t, http.StatusOK, got.status, string(got.body))
	require.Equal(t, e.ExecutionID, data[executionData](t, got).ExecutionID)
	require.Equal(t, http.StatusNotFound, s.do(t, http.MethodGet, "/api/executions/"+e.ExecutionID, s.stranger, "", nil).status)
	require.Equal(t, http.StatusNotFound, s.do(t, http.MethodGet, "/api/executions/ex:nothing", s.claimant, "", nil).status)
	s.unchanged(t, func() {
		rep := s.do(t, http.MethodPost, base, reporter, newKey(), report)
		require.Equal(t, http.StatusConflict, rep.status)
		require.Equal(t, "already_executed", rep.code)
	})
	list := data[struct {
		Executions []executionData `json:"executions"`
	}](t, s.do(t, http.MethodGet, base, s.respondent, "", nil))
	require.Len(t, list.Executions, 1)
	legacy := data[struct {
		SettlementExecutions []struct {
			SettlementExecutionID string `json:"settlementExecutionId"`
			Rail                  string `json:"rail"`
			Status                string `json:"status"`
		} `json:"settlementExecutions"`
	}](t, s.do(t, http.MethodGet, "/api/v2/cases/"+c.id+"/settlement-executions", s.respondent, "", nil))
	require.Equal(t, "partner_executes", legacy.SettlementExecutions[0].Rail, "the historical alias answers in its own terms")
	require.Contains(t, s.docketTypes(t, c.id), "execution_completed")
}

// claimantWallet is the payer of the claimant's original x402 payment.
const claimantWallet = "0x1111111111111111111111111111111111111111"

func refundCommand(hash string) map[string]any {
	return map[string]any{"mode": "x402r_refund", "action": "refund", "awardHash": hash, "remedyIndex": 0,
		"payment": map[string]any{"network": refundNetwork, "payer": claimantWallet, "transaction": "0x" + strings.Repeat("ab", 32)}}
}

// The x402r refund really pays: the refund operator's signed transfer of
// the remedy's 300.00 USD is settled through the local facilitator, once,
// however many identical commands arrive at once.
func TestAnX402rRefundIsSettledOnceForTwentyConcurrentCommands(t *testing.T) {
	s := newStack(t)
	c, hash := s.awarded(t)
	base := "/api/cases/" + c.id + "/executions"
	operatorBefore := s.balance(t, s.operator)

	s.unchanged(t, func() {
		rep := s.do(t, http.MethodPost, base, s.claimant, newKey(), refundCommand(hash))
		require.Equal(t, "award_not_final", rep.code, string(rep.body))
	})
	s.final(t, c)
	s.unchanged(t, func() {
		rep := s.do(t, http.MethodPost, base, s.respondent, newKey(), refundCommand(hash))
		require.Equal(t, http.StatusForbidden, rep.status, string(rep.body))
		require.Equal(t, "not_payee", rep.code, "the respondent may not send the claimant's refund elsewhere")
		mainnet := refundCommand(hash)
		mainnet["payment"].(map[string]any)["network"] = "eip155:8453"
		rep = s.do(t, http.MethodPost, base, s.claimant, newKey(), mainnet)
		require.Equal(t, http.StatusBadRequest, rep.status, string(rep.body))
		require.Equal(t, "invalid_after_award_act", rep.code, "a sandbox case refunds on a test network only")
		rep = s.do(t, http.MethodPost, base, s.claimant, "", refundCommand(hash))
		require.Equal(t, http.StatusBadRequest, rep.status, string(rep.body))
		rep = s.do(t, http.MethodPost, base, s.stranger, newKey(), refundCommand(hash))
		require.Equal(t, http.StatusNotFound, rep.status)
	})
	require.Empty(t, s.settlements(t))

	// Twenty identical commands at once, ten with one key and ten with
	// keys of their own: one transfer.
	shared := newKey()
	statuses := make(chan int, 20)
	var wg sync.WaitGroup
	for i := range 20 {
		k := shared
		if i%2 == 1 {
			k = newKey()
		}
		wg.Go(func() {
			req := s.request(t, http.MethodPost, base, s.claimant, k, refundCommand(hash))
			resp, err := http.DefaultClient.Do(req)
			if err == nil {
				resp.Body.Close()
				statuses <- resp.StatusCode
			}
		})
	}
	wg.Wait()
	close(statuses)
	created := 0
	for st := range statuses {
		switch st {
		case http.StatusCreated:
			created++
		case http.StatusConflict:
		default:
			t.Fatalf("a concurrent command answered %d", st)
		}
	}
	require.GreaterOrEqual(t, created, 1)
	settled := s.settlements(t)
	require.Len(t, settled, 1, "one transfer")
	require.Equal(t, uint64(300_000_000), settled[0].Amount, "300.00 USD in USDC's atomic units")
	require.Equal(t, uint64(300_000_000), s.balance(t, claimantWallet))
	require.Equal(t, operatorBefore-300_000_000, s.balance(t, s.operator))

	list := data[struct {
		Executions []executionData `json:"executions"`
	}](t, s.do(t, http.MethodGet, base, s.respondent, "", nil))
	require.Len(t, list.Executions, 1)
	e := list.Executions[0]
	require.Equal(t, "completed", e.Status)
	require.Equal(t, settled[0].Transaction, e.Completion.Transaction, "the execution shows the transaction")
	require.Equal(t, "300000000", e.Completion.AmountAtomic)
	s.unchanged(t, func() {
		rep := s.do(t, http.MethodPost, base, s.claimant, newKey(), refundCommand(hash))
		require.Equal(t, "already_executed", rep.code)
	})
	require.Contains(t, s.docketTypes(t, c.id), "execution_completed")
}

// A refund the rail refuses (the operator cannot cover it) is recorded as
// a failed attempt and answered 502; the same command pays once the
// operator is funded, and another command may not take it over.
func TestAFailedRefundIsRetriedByItsOwnCommandAndPaysOnce(t *testing.T) {
	s := newStack(t)
	c, hash := s.awarded(t)
	s.final(t, c)
	base := "/api/cases/" + c.id + "/executions"
	balances := "pc:facilitator:{" + refundNetwork + ":" + strings.ToLower(s.usdc(t).Address.Hex()) + "}:balances"
	require.NoError(t, s.rdb.HSet(context.Background(), balances, strings.ToLower(s.operator), "0").Err())

	k := newKey()
	rep := s.do(t, http.MethodPost, base, s.claimant, k, refundCommand(hash))
	require.Equal(t, http.StatusBadGateway, rep.status, string(rep.body))
	require.Equal(t, "execution_failed", rep.code)
	list := data[struct {
		Executions []executionData `json:"executions"`
	}](t, s.do(t, http.MethodGet, base, s.claimant, "", nil))
	require.Equal(t, "failed", list.Executions[0].Status)
	require.Len(t, list.Executions[0].Attempts, 1)
	require.Equal(t, "refused by the rail: insufficient_funds", list.Executions[0].Attempts[0].Detail, "the rail's reason, never its address")
	require.Empty(t, s.settlements(t), "nothing moved")
	require.Contains(t, s.docketTypes(t, c.id), "execution_failed")

	rep = s.do(t, http.MethodPost, base, s.claimant, newKey(), refundCommand(hash))
	require.Equal(t, http.StatusConflict, rep.status, string(rep.body))
	require.Equal(t, "execution_exists", rep.code)

	s.fundOperator(t, 1_000_000_000)
	rep = s.do(t, http.MethodPost, base, s.claimant, k, refundCommand(hash))
	require.Equal(t, http.StatusOK, rep.status, string(rep.body))
	e := data[executionData](t, rep)
	require.Equal(t, "completed", e.Status)
	require.Len(t, e.Attempts, 2)
	rep = s.do(t, http.MethodPost, base, s.claimant, k, refundCommand(hash))
	require.Equal(t, http.StatusOK, rep.status, "the journal replays the completed answer")
	require.Len(t, s.settlements(t), 1)
	require.Equal(t, uint64(300_000_000), s.balance(t, claimantWallet))
}

// With nothing asked of it, the award becomes final when its request
// window lapses: the deadline scan, fourteen days on, records award_final.
func TestTheAwardIsFinalWhenItsRequestWindowLapses(t *testing.T) {
	s := newStack(t)
	c, _ := s.awarded(t)
	st := data[finalityData](t, s.do(t, http.MethodGet, "/api/v2/cases/"+c.id+"/decision-status", s.claimant, "", nil))
	deadline, err := time.Parse("2006-01-02T15:04:05.000Z", st.RequestDeadline)
	require.NoError(t, err)
	require.WithinDuration(t, time.Now().Add(14*24*time.Hour), deadline, time.Minute)

	early := caseflow.NewScheduler(s.cases, caseflow.DefaultSchedulerConfig(), discard(), func() time.Time { return deadline.Add(-time.Minute) }, s.tickers...)
	_, err = early.RunOnce(context.Background())
	require.NoError(t, err)
	require.False(t, data[finalityData](t, s.do(t, http.MethodGet, "/api/v2/cases/"+c.id+"/decision-status", s.claimant, "", nil)).Final)

	late := caseflow.NewScheduler(s.cases, caseflow.DefaultSchedulerConfig(), discard(), func() time.Time { return deadline.Add(time.Minute) }, s.tickers...)
	_, err = late.RunOnce(context.Background())
	require.NoError(t, err)
	v := data[postAwardData](t, s.do(t, http.MethodGet, "/api/cases/"+c.id+"/post-award-requests", s.respondent, "", nil))
	require.True(t, v.Final)
	require.Equal(t, "window_lapsed", v.FinalBy)
	require.Contains(t, s.docketTypes(t, c.id), "award_final")
}

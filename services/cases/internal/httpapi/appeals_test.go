package httpapi_test

import (
	"context"
	"crypto/rand"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/crypto"
	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/x402"
	"github.com/pcourt/pcourt/services/cases/internal/caseflow"
)

type appealData struct {
	AppealID            string `json:"appealId"`
	Side                string `json:"side"`
	Status              string `json:"status"`
	AppellateReviewerID string `json:"appellateReviewerId"`
	AnswerDeadline      string `json:"answerDeadline"`
	IssuedAwardHash     string `json:"issuedAwardHash"`
	Fee                 struct {
		AmountMinor int64  `json:"amountMinor"`
		Collection  string `json:"collection"`
		Status      string `json:"status"`
		PaymentPath string `json:"paymentPath"`
		Payment     *struct {
			Transaction string `json:"transaction"`
		} `json:"payment"`
	} `json:"fee"`
}

// payment signs an x402 payment of the fee from the challenge the fee's
// resource answers, by a payer the local facilitator funded.
func (s *stack) feePayment(t *testing.T, path, token string) (header string, amount uint64) {
	t.Helper()
	rep := s.do(t, http.MethodPost, path, token, "", nil)
	require.Equal(t, http.StatusPaymentRequired, rep.status, string(rep.body))
	var challenge x402.PaymentRequired
	require.NoError(t, x402.DecodeHeader(rep.header.Get(x402.HeaderPaymentRequired), &challenge))
	require.Len(t, challenge.Accepts, 1)
	offer := challenge.Accepts[0]
	require.Equal(t, refundNetwork, offer.Network)
	key, err := crypto.GenerateKey()
	require.NoError(t, err)
	require.NoError(t, s.ledger.Fund(context.Background(), refundNetwork, s.usdc(t).Address.Hex(), crypto.PubkeyToAddress(key.PublicKey).Hex(), 1_000_000_000))
	payment, err := x402.NewExactPayment(key, offer, time.Now(), rand.Reader)
	require.NoError(t, err)
	payment.Resource = &challenge.Resource
	header, err = x402.EncodeHeader(payment)
	require.NoError(t, err)
	amount, err = strconv.ParseUint(offer.Amount, 10, 64)
	require.NoError(t, err)
	return header, amount
}

// tick runs the deadline scan once as if at now.
func (s *stack) tick(t *testing.T, now time.Time) {
	t.Helper()
	sc := caseflow.NewScheduler(s.cases, caseflow.DefaultSchedulerConfig(), discard(), func() time.Time { return now }, s.tickers...)
	_, err := sc.RunOnce(context.Background())
	require.NoError(t, err)
}

// The respondent appeals; its fee is paid with x402 through the
// settlement journal, once; the claimant answers; an appellate reviewer
// who took no part in the award closes the briefing and sets the award
// aside in an award of its own, final on issue.
func TestAnAppealIsPaidAnsweredAndDecidedInAnAwardOfItsOwn(t *testing.T) {
	s := newStack(t)
	c, first := s.awarded(t)
	base := "/api/cases/" + c.id + "/appeals"
	w := "/api/disputes/" + c.id + "/appeal"
	grounds := []map[string]any{{"kind": "clearly_erroneous_fact", "text": "The key worked: the access logs show daily use."}}

	s.unchanged(t, func() {
		rep := s.do(t, http.MethodPost, base, s.stranger, newKey(), map[string]any{"grounds": grounds})
		require.Equal(t, http.StatusNotFound, rep.status, "another partner sees no case")
		rep = s.do(t, http.MethodPost, base, s.otherTenant, newKey(), map[string]any{"grounds": grounds})
		require.Equal(t, http.StatusNotFound, rep.status)
		rep = s.do(t, http.MethodPost, base, s.respondent, newKey(), map[string]any{"grounds": []map[string]any{{"kind": "disagreement", "text": "x"}}})
		require.Equal(t, http.StatusBadRequest, rep.status, string(rep.body))
		require.Equal(t, "invalid_after_award_act", rep.code)
		rep = s.do(t, http.MethodPost, base, s.reviewer, newKey(), map[string]any{"grounds": grounds})
		require.Equal(t, http.StatusForbidden, rep.status, "the tribunal appeals nothing")
	})

	rep := s.do(t, http.MethodPost, base, s.respondent, newKey(), map[string]any{"grounds": grounds})
	require.Equal(t, http.StatusCreated, rep.status, string(rep.body))
	ap := data[appealData](t, rep)
	require.Equal(t, "awaiting_fee", ap.Status)
	require.Equal(t, "x402", ap.Fee.Collection)
	require.Equal(t, s.reviewer2ID, ap.AppellateReviewerID, "the pool's reviewer who took no part in the award")
	feePath := ap.Fee.PaymentPath
	require.Equal(t, base+"/"+ap.AppealID+"/fee", feePath)
	require.Equal(t, "appeal", data[finalityData](t, s.do(t, http.MethodGet, "/api/v2/cases/"+c.id+"/decision-status", s.claimant, "", nil)).WaitingFor)

	answer := map[string]any{"text": "The logs show failed logins, not use."}
	s.unchanged(t, func() {
		rep := s.do(t, http.MethodPost, base, s.claimant, newKey(), map[string]any{"grounds": grounds})
		require.Equal(t, "appeal_pending", rep.code, string(rep.body))
		rep = s.do(t, http.MethodPost, "/api/cases/"+c.id+"/post-award-requests", s.claimant, newKey(), map[string]any{"kind": "correction", "text": "x"})
		require.Equal(t, "appeal_pending", rep.code, string(rep.body))
		rep = s.do(t, http.MethodPost, base+"/"+ap.AppealID+"/answers", s.claimant, newKey(), answer)
		require.Equal(t, http.StatusConflict, rep.status)
		require.Equal(t, "appeal_fee_unpaid", rep.code, "the briefing opens once the fee is paid")
		rep = s.do(t, http.MethodPost, feePath, s.claimant, "", nil)
		require.Equal(t, http.StatusForbidden, rep.status)
		require.Equal(t, "not_appellant", rep.code)
		rep = s.do(t, http.MethodPost, feePath, s.stranger, "", nil)
		require.Equal(t, http.StatusNotFound, rep.status)
		rep = s.do(t, http.MethodPost, w+"/confirm-fee", s.respondent, newKey(), map[string]any{"appealId": ap.AppealID})
		require.Equal(t, http.StatusOK, rep.status, string(rep.body))
		require.Equal(t, "quoted", data[struct {
			Status string `json:"status"`
		}](t, rep).Status, "confirm-fee reads the status and attests nothing")
	})

	header, amount := s.feePayment(t, feePath, s.respondent)
	require.Equal(t, uint64(ap.Fee.AmountMinor)*10_000, amount)
	rep = s.do(t, http.MethodPost, feePath, s.respondent, "", nil, x402.HeaderPaymentSignature, header)
	require.Equal(t, http.StatusOK, rep.status, string(rep.body))
	require.NotEmpty(t, rep.header.Get(x402.HeaderPaymentResponse))
	ap = data[appealData](t, rep)
	require.Equal(t, "briefing", ap.Status)
	require.Equal(t, "paid", ap.Fee.Status)
	require.NotEmpty(t, ap.Fee.Payment.Transaction)
	require.Equal(t, amount, s.balance(t, s.feePayee))

	// The same payment again replays; a new one is refused; nothing moves.
	rep = s.do(t, http.MethodPost, feePath, s.respondent, "", nil, x402.HeaderPaymentSignature, header)
	require.Equal(t, http.StatusOK, rep.status, string(rep.body))
	s.unchanged(t, func() {
		rep := s.do(t, http.MethodPost, feePath, s.respondent, "", nil)
		require.Equal(t, "appeal_fee_not_payable", rep.code, "a paid fee is no longer offered")
	})
	require.Equal(t, amount, s.balance(t, s.feePayee), "a fee is paid once")

	s.unchanged(t, func() {
		rep := s.do(t, http.MethodPost, base+"/"+ap.AppealID+"/answers", s.respondent, newKey(), answer)
		require.Equal(t, "not_appellee", rep.code, string(rep.body))
		rep = s.do(t, http.MethodPost, w+"/close-briefing", s.reviewer2, newKey(), map[string]any{"appealId": ap.AppealID})
		require.Equal(t, "appeal_answer_window_open", rep.code, string(rep.body))
	})
	rep = s.do(t, http.MethodPost, w+"/answer", s.claimant, newKey(), map[string]any{"appealId": ap.AppealID, "text": answer["text"]})
	require.Equal(t, http.StatusCreated, rep.status, string(rep.body))

	decide := map[string]any{"appealId": ap.AppealID, "decision": "set_aside", "outcome": "claim_dismissed", "reasons": "The logs prove the key worked."}
	s.unchanged(t, func() {
		rep := s.do(t, http.MethodPost, w+"/close-briefing", s.reviewer, newKey(), map[string]any{"appealId": ap.AppealID})
		require.Equal(t, http.StatusForbidden, rep.status)
		require.Equal(t, "not_appellate_reviewer", rep.code, "the award's own reviewer hears no appeal of it")
		rep = s.do(t, http.MethodPost, w+"/decide", s.reviewer2, newKey(), decide)
		require.Equal(t, "appeal_briefing_open", rep.code, string(rep.body))
		rep = s.do(t, http.MethodPost, w+"/close-briefing", s.claimant, newKey(), map[string]any{"appealId": ap.AppealID})
		require.Equal(t, http.StatusForbidden, rep.status)
	})
	rep = s.do(t, http.MethodPost, w+"/close-briefing", s.reviewer2, newKey(), map[string]any{"appealId": ap.AppealID})
	require.Equal(t, http.StatusOK, rep.status, string(rep.body))
	rep = s.do(t, http.MethodPost, w+"/decide", s.reviewer2, newKey(), decide)
	require.Equal(t, http.StatusOK, rep.status, string(rep.body))
	ap = data[appealData](t, rep)
	require.Equal(t, "decided", ap.Status)

	served := data[struct {
		AwardHash string `json:"awardHash"`
		Outcome   string `json:"outcome"`
		Corrects  string `json:"corrects"`
		Final     bool   `json:"final"`
		Appeal    struct {
			AppealID string `json:"appealId"`
			Decision string `json:"decision"`
		} `json:"appeal"`
	}](t, s.do(t, http.MethodGet, "/api/cases/"+c.id+"/award", s.claimant, "", nil))
	require.Equal(t, ap.IssuedAwardHash, served.AwardHash)
	require.Equal(t, "claim_dismissed", served.Outcome)
	require.Equal(t, first, served.Corrects)
	require.True(t, served.Final, "the appellate award is final on issue")
	require.Equal(t, "set_aside", served.Appeal.Decision)
	rep = s.do(t, http.MethodGet, "/api/cases/"+c.id+"/award?awardHash="+first, s.respondent, "", nil)
	require.Equal(t, http.StatusOK, rep.status, "the appealed award stays readable")
	st := data[finalityData](t, s.do(t, http.MethodGet, "/api/v2/cases/"+c.id+"/decision-status", s.claimant, "", nil))
	require.True(t, st.Final)
	require.Contains(t, s.docketTypes(t, c.id), "appeal_decided")
}

// An appeal whose fee is not paid lapses at its due date, and the award
// becomes final when its windows lapse.
func TestAnUnpaidAppealLapses(t *testing.T) {
	s := newStack(t)
	c, _ := s.awarded(t)
	rep := s.do(t, http.MethodPost, "/api/disputes/"+c.id+"/appeal", s.claimant, newKey(),
		map[string]any{"grounds": []map[string]any{{"kind": "material_error_of_law", "text": "The clause was misread."}}})
	require.Equal(t, http.StatusCreated, rep.status, string(rep.body))
	s.tick(t, time.Now().Add(8*24*time.Hour))
	list := data[struct {
		Appeals []appealData `json:"appeals"`
	}](t, s.do(t, http.MethodGet, "/api/cases/"+c.id+"/appeals", s.respondent, "", nil))
	require.Equal(t, "lapsed", list.Appeals[0].Status)
	s.tick(t, time.Now().Add(15*24*time.Hour))
	require.True(t, data[finalityData](t, s.do(t, http.MethodGet, "/api/v2/cases/"+c.id+"/decision-status", s.claimant, "", nil)).Final)
}

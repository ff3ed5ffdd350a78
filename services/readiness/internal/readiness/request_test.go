package readiness_test

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/services/readiness/internal/readiness"
)

// validRaw returns a request that passes validation, with every optional
// member present, for the validation table to break one member at a time.
func validRaw() readiness.RawRequest {
	return readiness.RawRequest{
		CaseTrack:                         readiness.Given("ai_standard"),
		ClaimantType:                      readiness.Given("human"),
		RespondentType:                    readiness.Given("organization"),
		AmountInDisputeUsd:                readiness.Given(1200.5),
		Remedy:                            readiness.Given("corpus_allocation"),
		SettlementRail:                    readiness.Given("x402r"),
		FastTrackClaimClass:               readiness.Given("non_delivery"),
		MutualConsentReported:             readiness.Given(true),
		AuthorityToBindReported:           readiness.Given(true),
		ClaimantEvidenceReady:             readiness.Given(true),
		RespondentEvidenceReady:           readiness.Given(true),
		MicroClaimsTierConsentReported:    readiness.Given(false),
		RemedialJurisdictionOptInReported: readiness.Given(false),
		CorpusAmountUsd:                   readiness.Given(1500.0),
		EscrowWindowEndsAt:                readiness.Given("2026-11-20T12:00:00Z"),
	}
}

func TestNewRequestRefusesEachViolation(t *testing.T) {
	str := readiness.Given[string]
	num := readiness.Given[float64]
	tests := []struct {
		name   string
		mutate func(*readiness.RawRequest)
		field  string
		reason string
	}{
		{"caseTrack null", func(r *readiness.RawRequest) { r.CaseTrack = readiness.Null[string]() }, "caseTrack", "must not be null; omit it to leave the track unselected"},
		{"caseTrack unknown", func(r *readiness.RawRequest) { r.CaseTrack = str("ai_slow") }, "caseTrack", "must be one of ai_fast, ai_standard, ai_assisted_human"},
		{"caseTrack wrong case", func(r *readiness.RawRequest) { r.CaseTrack = str("AI_FAST") }, "caseTrack", "must be one of ai_fast, ai_standard, ai_assisted_human"},
		{"claimantType missing", func(r *readiness.RawRequest) { r.ClaimantType = readiness.Member[string]{} }, "claimantType", "is required"},
		{"claimantType null", func(r *readiness.RawRequest) { r.ClaimantType = readiness.Null[string]() }, "claimantType", "must not be null"},
		{"claimantType unknown", func(r *readiness.RawRequest) { r.ClaimantType = str("robot") }, "claimantType", "must be one of human, organization, ai_agent"},
		{"respondentType missing", func(r *readiness.RawRequest) { r.RespondentType = readiness.Member[string]{} }, "respondentType", "is required"},
		{"respondentType null", func(r *readiness.RawRequest) { r.RespondentType = readiness.Null[string]() }, "respondentType", "must not be null"},
		{"respondentType empty", func(r *readiness.RawRequest) { r.RespondentType = str("") }, "respondentType", "must be one of human, organization, ai_agent"},
		{"amount missing", func(r *readiness.RawRequest) { r.AmountInDisputeUsd = readiness.Member[float64]{} }, "amountInDisputeUsd", "is required"},
		{"amount null", func(r *readiness.RawRequest) { r.AmountInDisputeUsd = readiness.Null[float64]() }, "amountInDisputeUsd", "must not be null"},
		{"amount NaN", func(r *readiness.RawRequest) { r.AmountInDisputeUsd = num(math.NaN()) }, "amountInDisputeUsd", "must be a finite number"},
		{"amount +Inf", func(r *readiness.RawRequest) { r.AmountInDisputeUsd = num(math.Inf(1)) }, "amountInDisputeUsd", "must be a finite number"},
		{"amount negative", func(r *readiness.RawRequest) { r.AmountInDisputeUsd = num(-0.01) }, "amountInDisputeUsd", "must be between 0 and 10000000 inclusive"},
		{"amount above limit", func(r *readiness.RawRequest) { r.AmountInDisputeUsd = num(10000000.01) }, "amountInDisputeUsd", "must be between 0 and 10000000 inclusive"},
		{"amount three decimals", func(r *readiness.RawRequest) { r.AmountInDisputeUsd = num(1.005) }, "amountInDisputeUsd", "must have at most 2 decimal places"},
		{"amount tiny", func(r *readiness.RawRequest) { r.AmountInDisputeUsd = num(5e-324) }, "amountInDisputeUsd", "must have at most 2 decimal places"},
		{"remedy missing", func(r *readiness.RawRequest) { r.Remedy = readiness.Member[string]{} }, "remedy", "is required"},
		{"remedy null", func(r *readiness.RawRequest) { r.Remedy = readiness.Null[string]() }, "remedy", "must not be null"},
		{"remedy unknown", func(r *readiness.RawRequest) { r.Remedy = str("damages") }, "remedy", "must be one of corpus_allocation, money_obligation, declaratory"},
		{"settlementRail missing", func(r *readiness.RawRequest) { r.SettlementRail = readiness.Member[string]{} }, "settlementRail", "is required"},
		{"settlementRail null", func(r *readiness.RawRequest) { r.SettlementRail = readiness.Null[string]() }, "settlementRail", "must not be null"},
		{"settlementRail unknown", func(r *readiness.RawRequest) { r.SettlementRail = str("wire") }, "settlementRail", "must be one of none, x402r, bilateral_escrow, acp, processor_connect, partner_executes"},
		{"fastTrackClaimClass missing", func(r *readiness.RawRequest) { r.FastTrackClaimClass = readiness.Member[string]{} }, "fastTrackClaimClass", "is required; send null for an ordinary claim"},
		{"fastTrackClaimClass unknown", func(r *readiness.RawRequest) { r.FastTrackClaimClass = str("ordinary") }, "fastTrackClaimClass", "must be one of payment_not_settled, refund_window_expired, non_delivery, double_charge, escrowed_refund_request, acp_evaluation"},
		{"mutualConsentReported missing", func(r *readiness.RawRequest) { r.MutualConsentReported = readiness.Member[bool]{} }, "mutualConsentReported", "is required"},
		{"mutualConsentReported null", func(r *readiness.RawRequest) { r.MutualConsentReported = readiness.Null[bool]() }, "mutualConsentReported", "must not be null"},
		{"authorityToBindReported missing", func(r *readiness.RawRequest) { r.AuthorityToBindReported = readiness.Member[bool]{} }, "authorityToBindReported", "is required"},
		{"authorityToBindReported null", func(r *readiness.RawRequest) { r.AuthorityToBindReported = readiness.Null[bool]() }, "authorityToBindReported", "must not be null"},
		{"claimantEvidenceReady missing", func(r *readiness.RawRequest) { r.ClaimantEvidenceReady = readiness.Member[bool]{} }, "claimantEvidenceReady", "is required"},
		{"claimantEvidenceReady null", func(r *readiness.RawRequest) { r.ClaimantEvidenceReady = readiness.Null[bool]() }, "claimantEvidenceReady", "must not be null"},
		{"respondentEvidenceReady missing", func(r *readiness.RawRequest) { r.RespondentEvidenceReady = readiness.Member[bool]{} }, "respondentEvidenceReady", "is required"},
		{"respondentEvidenceReady null", func(r *readiness.RawRequest) { r.RespondentEvidenceReady = readiness.Null[bool]() }, "respondentEvidenceReady", "must not be null"},
		{"microClaimsTierConsentReported missing", func(r *readiness.RawRequest) { r.MicroClaimsTierConsentReported = readiness.Member[bool]{} }, "microClaimsTierConsentReported", "is required"},
		{"microClaimsTierConsentReported null", func(r *readiness.RawRequest) { r.MicroClaimsTierConsentReported = readiness.Null[bool]() }, "microClaimsTierConsentReported", "must not be null"},
		{"remedialJurisdictionOptInReported missing", func(r *readiness.RawRequest) { r.RemedialJurisdictionOptInReported = readiness.Member[bool]{} }, "remedialJurisdictionOptInReported", "is required"},
		{"remedialJurisdictionOptInReported null", func(r *readiness.RawRequest) { r.RemedialJurisdictionOptInReported = readiness.Null[bool]() }, "remedialJurisdictionOptInReported", "must not be null"},
		{"corpus missing", func(r *readiness.RawRequest) { r.CorpusAmountUsd = readiness.Member[float64]{} }, "corpusAmountUsd", "is required; send null when no external corpus exists"},
		{"corpus -Inf", func(r *readiness.RawRequest) { r.CorpusAmountUsd = num(math.Inf(-1)) }, "corpusAmountUsd", "must be a finite number"},
		{"corpus negative", func(r *readiness.RawRequest) { r.CorpusAmountUsd = num(-1) }, "corpusAmountUsd", "must be between 0 and 10000000 inclusive"},
		{"corpus above limit", func(r *readiness.RawRequest) { r.CorpusAmountUsd = num(10000001) }, "corpusAmountUsd", "must be between 0 and 10000000 inclusive"},
		{"corpus three decimals", func(r *readiness.RawRequest) { r.CorpusAmountUsd = num(0.001) }, "corpusAmountUsd", "must have at most 2 decimal places"},
		{"escrowWindowEndsAt null", func(r *readiness.RawRequest) { r.EscrowWindowEndsAt = readiness.Null[string]() }, "escrowWindowEndsAt", "must not be null; omit it when there is no settlement deadline"},
		{"escrowWindowEndsAt date only", func(r *readiness.RawRequest) { r.EscrowWindowEndsAt = str("2026-11-20") }, "escrowWindowEndsAt", "must be an RFC 3339 date-time such as 2026-11-05T17:00:00Z"},
		{"escrowWindowEndsAt no offset", func(r *readiness.RawRequest) { r.EscrowWindowEndsAt = str("2026-11-20T12:00:00") }, "escrowWindowEndsAt", "must be an RFC 3339 date-time such as 2026-11-05T17:00:00Z"},
		{"escrowWindowEndsAt space separator", func(r *readiness.RawRequest) { r.EscrowWindowEndsAt = str("2026-11-20 12:00:00Z") }, "escrowWindowEndsAt", "must be an RFC 3339 date-time such as 2026-11-05T17:00:00Z"},
		{"escrowWindowEndsAt impossible date", func(r *readiness.RawRequest) { r.EscrowWindowEndsAt = str("2026-02-30T12:00:00Z") }, "escrowWindowEndsAt", "must be an RFC 3339 date-time such as 2026-11-05T17:00:00Z"},
		{"escrowWindowEndsAt before year 0000 in UTC", func(r *readiness.RawRequest) { r.EscrowWindowEndsAt = str("0000-01-01T00:00:00+00:01") }, "escrowWindowEndsAt", "must fall within the years 0000 to 9999 in UTC"},
		{"escrowWindowEndsAt after year 9999 in UTC", func(r *readiness.RawRequest) { r.EscrowWindowEndsAt = str("9999-12-31T23:59:00-00:01") }, "escrowWindowEndsAt", "must fall within the years 0000 to 9999 in UTC"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			raw := validRaw()
			tt.mutate(&raw)

			_, err := readiness.NewRequest(raw)

			var verr *readiness.ValidationError
			require.True(t, errors.As(err, &verr), "want a *ValidationError, got %v", err)
			require.Equal(t, tt.field, verr.Field)
			require.Equal(t, tt.reason, verr.Reason)
			require.Equal(t, tt.field+" "+tt.reason, err.Error())
		})
	}
}

func TestNewRequestReportsTheFirstFieldInSpecOrder(t *testing.T) {
	raw := validRaw()
	raw.EscrowWindowEndsAt = readiness.Given("tomorrow")
	raw.Remedy = readiness.Given("damages")
	raw.AmountInDisputeUsd = readiness.Given(-5.0)

	_, err := readiness.NewRequest(raw)

	var verr *readiness.ValidationError
	require.ErrorAs(t, err, &verr)
	require.Equal(t, "amountInDisputeUsd", verr.Field)
}

func TestNewRequestAcceptsTheEdgesOfEachConstraint(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*readiness.RawRequest)
		check  func(*testing.T, readiness.Request)
	}{
		{
			name: "optional members omitted",
			mutate: func(r *readiness.RawRequest) {
				r.CaseTrack, r.EscrowWindowEndsAt = readiness.Member[string]{}, readiness.Member[string]{}
			},
			check: func(t *testing.T, req readiness.Request) {
				_, track := req.CaseTrack()
				_, window := req.EscrowWindowEndsAt()
				require.False(t, track)
				require.False(t, window)
			},
		},
		{
			name: "nullable members null",
			mutate: func(r *readiness.RawRequest) {
				r.FastTrackClaimClass, r.CorpusAmountUsd = readiness.Null[string](), readiness.Null[float64]()
			},
			check: func(t *testing.T, req readiness.Request) {
				_, class := req.FastTrackClaimClass()
				_, corpus := req.CorpusAmountUsd()
				require.False(t, class)
				require.False(t, corpus)
			},
		},
		{
			name:   "amount zero",
			mutate: func(r *readiness.RawRequest) { r.AmountInDisputeUsd = readiness.Given(0.0) },
			check: func(t *testing.T, req readiness.Request) {
				require.Equal(t, int64(0), req.AmountInDisputeUsd().Cents())
			},
		},
		{
			name:   "amount negative zero is zero",
			mutate: func(r *readiness.RawRequest) { r.AmountInDisputeUsd = readiness.Given(math.Copysign(0, -1)) },
			check:  func(t *testing.T, req readiness.Request) { require.Equal(t, "0.00", req.AmountInDisputeUsd().String()) },
		},
		{
			name:   "amount at the limit",
			mutate: func(r *readiness.RawRequest) { r.AmountInDisputeUsd = readiness.Given(10000000.0) },
			check: func(t *testing.T, req readiness.Request) {
				require.Equal(t, int64(1_000_000_000), req.AmountInDisputeUsd().Cents())
			},
		},
		{
			name:   "amount with two decimals that binary cannot hold",
			mutate: func(r *readiness.RawRequest) { r.AmountInDisputeUsd = readiness.Given(0.29) },
			check: func(t *testing.T, req readiness.Request) {
				require.Equal(t, int64(29), req.AmountInDisputeUsd().Cents())
			},
		},
		{
			name:   "amount just below the limit",
			mutate: func(r *readiness.RawRequest) { r.AmountInDisputeUsd = readiness.Given(9999999.99) },
			check: func(t *testing.T, req readiness.Request) {
				require.Equal(t, int64(999_999_999), req.AmountInDisputeUsd().Cents())
			},
		},
		{
			name:   "corpus zero",
			mutate: func(r *readiness.RawRequest) { r.CorpusAmountUsd = readiness.Given(0.0) },
			check: func(t *testing.T, req readiness.Request) {
				corpus, ok := req.CorpusAmountUsd()
				require.True(t, ok)
				require.Equal(t, int64(0), corpus.Cents())
			},
		},
		{
			name:   "window with offset and fraction is normalized to UTC",
			mutate: func(r *readiness.RawRequest) { r.EscrowWindowEndsAt = readiness.Given("2026-11-20T14:30:00.250+02:00") },
			check: func(t *testing.T, req readiness.Request) {
				end, ok := req.EscrowWindowEndsAt()
				require.True(t, ok)
				require.Equal(t, time.Date(2026, 11, 20, 12, 30, 0, 250_000_000, time.UTC), end)
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			raw := validRaw()
			tt.mutate(&raw)

			req, err := readiness.NewRequest(raw)

			require.NoError(t, err)
			tt.check(t, req)
		})
	}
}

func TestNewRequestKeepsEveryReportedFact(t *testing.T) {
	req, err := readiness.NewRequest(validRaw())
	require.NoError(t, err)

	type view struct {
		Track, Claimant, Respondent, Amount, Remedy, Rail, Class, Corpus, Window string
		Flags                                                                    [6]bool
	}
	track, _ := req.CaseTrack()
	class, _ := req.FastTrackClaimClass()
	corpus, _ := req.CorpusAmountUsd()
	window, _ := req.EscrowWindowEndsAt()
	got := view{
		Track: string(track), Claimant: string(req.ClaimantType()), Respondent: string(req.RespondentType()),
		Amount: req.AmountInDisputeUsd().String(), Remedy: string(req.Remedy()), Rail: string(req.SettlementRail()),
		Class: string(class), Corpus: corpus.String(), Window: window.Format(time.RFC3339),
		Flags: [6]bool{
			req.MutualConsentReported(), req.AuthorityToBindReported(), req.ClaimantEvidenceReady(),
			req.RespondentEvidenceReady(), req.MicroClaimsTierConsentReported(), req.RemedialJurisdictionOptInReported(),
		},
	}
	want := view{
		Track: "ai_standard", Claimant: "human", Respondent: "organization", Amount: "1200.50",
		Remedy: "corpus_allocation", Rail: "x402r", Class: "non_delivery", Corpus: "1500.00",
		Window: "2026-11-20T12:00:00Z", Flags: [6]bool{true, true, true, true, false, false},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("request facts (-want +got):\n%s", diff)
	}
}

func TestMoneyAndPercentEncodeAsShortDecimalNumbers(t *testing.T) {
	tests := []struct {
		cents      int64
		text, json string
	}{
		{0, "0.00", "0"},
		{1, "0.01", "0.01"},
		{10, "0.10", "0.1"},
		{1250, "12.50", "12.5"},
		{750000, "7500.00", "7500"},
		{1_000_000_000, "10000000.00", "10000000"},
		{-1250, "-12.50", "-12.5"},
	}
	for _, tt := range tests {
		m := readiness.MoneyFromCents(tt.cents)
		b, err := m.MarshalJSON()
		require.NoError(t, err)
		require.Equal(t, tt.text, m.String())
		require.Equal(t, tt.json, string(b))

		p := readiness.PercentFromBasisPoints(tt.cents)
		b, err = p.MarshalJSON()
		require.NoError(t, err)
		require.Equal(t, tt.json, string(b))
	}
}

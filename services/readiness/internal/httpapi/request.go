package httpapi

import (
	"bytes"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/pcourt/pcourt/libs/httpserver"
	"github.com/pcourt/pcourt/libs/problem"
	"github.com/pcourt/pcourt/services/readiness/internal/readiness"
)

// requestBody is the request as the strict decoding leaves it: one field
// per member of the spec's request, each absent, null or a value of its
// JSON type, so that a missing field, a null and a value stay distinct, as
// the spec's nullable-but-required fields need.
type requestBody struct {
	CaseTrack                         member[string]  `json:"caseTrack"`
	ClaimantType                      member[string]  `json:"claimantType"`
	RespondentType                    member[string]  `json:"respondentType"`
	AmountInDisputeUsd                member[float64] `json:"amountInDisputeUsd"`
	Remedy                            member[string]  `json:"remedy"`
	SettlementRail                    member[string]  `json:"settlementRail"`
	FastTrackClaimClass               member[string]  `json:"fastTrackClaimClass"`
	MutualConsentReported             member[bool]    `json:"mutualConsentReported"`
	AuthorityToBindReported           member[bool]    `json:"authorityToBindReported"`
	ClaimantEvidenceReady             member[bool]    `json:"claimantEvidenceReady"`
	RespondentEvidenceReady           member[bool]    `json:"respondentEvidenceReady"`
	MicroClaimsTierConsentReported    member[bool]    `json:"microClaimsTierConsentReported"`
	RemedialJurisdictionOptInReported member[bool]    `json:"remedialJurisdictionOptInReported"`
	CorpusAmountUsd                   member[float64] `json:"corpusAmountUsd"`
	EscrowWindowEndsAt                member[string]  `json:"escrowWindowEndsAt"`
}

// member is one member of the body. The decoder calls UnmarshalJSONFrom
// only for a member the body has; an absent one keeps the zero value,
// readiness's absent Member.
type member[T any] struct{ readiness.Member[T] }

// UnmarshalJSONFrom takes JSON null as Null and anything else as a value
// of the member's JSON type; DecodeStrict reports a member of another type
// by its name.
func (m *member[T]) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	if dec.PeekKind() == 'n' {
		if _, err := dec.ReadToken(); err != nil {
			return err
		}
		m.Member = readiness.Null[T]()
		return nil
	}
	var v T
	if err := jsonv2.UnmarshalDecode(dec, &v); err != nil {
		return err
	}
	m.Member = readiness.Given(v)
	return nil
}

// decodeRequest turns the body into a validated domain request.
func decodeRequest(body []byte) (readiness.Request, error) {
	var b requestBody
	if err := httpserver.DecodeStrict(body, &b); err != nil {
		return readiness.Request{}, err
	}
	if string(bytes.TrimSpace(body)) == "null" { // one JSON value, so null alone
		return readiness.Request{}, problem.New(problem.InvalidFieldType, "The request body must be a JSON object.")
	}
	req, err := readiness.NewRequest(readiness.RawRequest{
		CaseTrack:                         b.CaseTrack.Member,
		ClaimantType:                      b.ClaimantType.Member,
		RespondentType:                    b.RespondentType.Member,
		AmountInDisputeUsd:                b.AmountInDisputeUsd.Member,
		Remedy:                            b.Remedy.Member,
		SettlementRail:                    b.SettlementRail.Member,
		FastTrackClaimClass:               b.FastTrackClaimClass.Member,
		MutualConsentReported:             b.MutualConsentReported.Member,
		AuthorityToBindReported:           b.AuthorityToBindReported.Member,
		ClaimantEvidenceReady:             b.ClaimantEvidenceReady.Member,
		RespondentEvidenceReady:           b.RespondentEvidenceReady.Member,
		MicroClaimsTierConsentReported:    b.MicroClaimsTierConsentReported.Member,
		RemedialJurisdictionOptInReported: b.RemedialJurisdictionOptInReported.Member,
		CorpusAmountUsd:                   b.CorpusAmountUsd.Member,
		EscrowWindowEndsAt:                b.EscrowWindowEndsAt.Member,
	})
	if err != nil {
		return readiness.Request{}, err // *readiness.ValidationError, mapped to invalid_readiness_request
	}
	return req, nil
}

package httpapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"

	"github.com/pcourt/pcourt/libs/httpserver"
	"github.com/pcourt/pcourt/libs/problem"
	"github.com/pcourt/pcourt/services/readiness/internal/readiness"
)

// decodeRequest turns the body into a validated domain request. The body is
// decoded into raw members first so that a missing field, a null and a value
// stay distinct, as the spec's nullable-but-required fields need.
func decodeRequest(body []byte) (readiness.Request, error) {
	var members map[string]json.RawMessage
	if err := httpserver.DecodeStrict(body, &members); err != nil {
		return readiness.Request{}, err
	}
	if members == nil {
		return readiness.Request{}, problem.New(problem.InvalidFieldType, "The request body must be a JSON object.")
	}
	var raw readiness.RawRequest
	fields := map[string]func(json.RawMessage) error{
		"caseTrack":                         member(&raw.CaseTrack),
		"claimantType":                      member(&raw.ClaimantType),
		"respondentType":                    member(&raw.RespondentType),
		"amountInDisputeUsd":                member(&raw.AmountInDisputeUsd),
		"remedy":                            member(&raw.Remedy),
		"settlementRail":                    member(&raw.SettlementRail),
		"fastTrackClaimClass":               member(&raw.FastTrackClaimClass),
		"mutualConsentReported":             member(&raw.MutualConsentReported),
		"authorityToBindReported":           member(&raw.AuthorityToBindReported),
		"claimantEvidenceReady":             member(&raw.ClaimantEvidenceReady),
		"respondentEvidenceReady":           member(&raw.RespondentEvidenceReady),
		"microClaimsTierConsentReported":    member(&raw.MicroClaimsTierConsentReported),
		"remedialJurisdictionOptInReported": member(&raw.RemedialJurisdictionOptInReported),
		"corpusAmountUsd":                   member(&raw.CorpusAmountUsd),
		"escrowWindowEndsAt":                member(&raw.EscrowWindowEndsAt),
	}
	names := make([]string, 0, len(members))
	for name := range members {
		names = append(names, name)
	}
	sort.Strings(names) // the first problem reported does not depend on map order
	for _, name := range names {
		set, ok := fields[name]
		if !ok {
			return readiness.Request{}, problem.Newf(problem.UnknownField, "Field %q is not part of this request.", name)
		}
		if err := set(members[name]); err != nil {
			return readiness.Request{}, problem.Newf(problem.InvalidFieldType, "Field %q %s.", name, err)
		}
	}
	req, err := readiness.NewRequest(raw)
	if err != nil {
		return readiness.Request{}, err // *readiness.ValidationError, mapped to invalid_readiness_request
	}
	return req, nil
}

// member decodes one field into a readiness.Member: JSON null is Null, any
// other value must have the field's JSON type.
func member[T any](dst *readiness.Member[T]) func(json.RawMessage) error {
	return func(raw json.RawMessage) error {
		if bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
			*dst = readiness.Null[T]()
			return nil
		}
		// raw is exactly one JSON value: the strict decode of the whole
		// body checked its syntax and that nothing trails it.
		var v T
		if err := json.Unmarshal(raw, &v); err != nil {
			return fmt.Errorf("must be a JSON %s", jsonType(v))
		}
		*dst = readiness.Given(v)
		return nil
	}
}

func jsonType(v any) string {
	switch v.(type) {
	case string:
		return "string"
	case bool:
		return "boolean"
	default:
		return "number"
	}
}

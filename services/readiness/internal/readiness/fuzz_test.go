package readiness_test

import (
	"encoding/json"
	"errors"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/services/readiness/internal/readiness"
)

var (
	fuzzTracks     = []string{"ai_fast", "ai_standard", "ai_assisted_human"}
	fuzzParties    = []string{"human", "organization", "ai_agent"}
	fuzzRemedies   = []string{"corpus_allocation", "money_obligation", "declaratory"}
	fuzzRails      = []string{"none", "x402r", "bilateral_escrow", "acp", "processor_connect", "partner_executes"}
	fuzzClasses    = []string{"payment_not_settled", "refund_window_expired", "non_delivery", "double_charge", "escrowed_refund_request", "acp_evaluation"}
	fuzzFieldKinds = []memberKind{
		optionalMember, requiredMember, requiredMember, requiredMember, requiredMember, requiredMember,
		nullableMember, requiredMember, requiredMember, requiredMember, requiredMember, requiredMember,
		requiredMember, nullableMember, optionalMember,
	}
)

type memberKind int

const (
	requiredMember memberKind = iota // must be present and not null
	nullableMember                   // must be present, may be null
	optionalMember                   // may be omitted, must not be null
)

// FuzzEvaluate builds requests from fuzzed primitives. Bit i of missing
// omits request member i (spec order) and bit i of nulls makes it null; the
// selectors pick an enum value or, one past the end, the free string. An
// oracle written apart from NewRequest decides whether the request is valid
// and which field it should be refused for.
func FuzzEvaluate(f *testing.F) {
	f.Add(uint16(0), uint16(0), uint8(1), uint8(0), uint8(1), uint8(1), uint8(0), uint8(0), "", 40000.0, 0.0, uint8(0xff), "", int64(1793610000))
	f.Add(uint16(1<<14), uint16(1<<6|1<<13), uint8(0), uint8(2), uint8(2), uint8(0), uint8(1), uint8(3), "", 1800.0, 2000.0, uint8(0x0f), "2026-11-12T09:00:00+02:00", int64(1793610000))
	f.Add(uint16(0), uint16(1<<13), uint8(2), uint8(1), uint8(1), uint8(1), uint8(4), uint8(0), "", 300000.0, 0.0, uint8(0x3f), "2026-11-03T09:00:00Z", int64(1793610000))
	f.Add(uint16(1), uint16(0), uint8(0), uint8(0), uint8(0), uint8(2), uint8(3), uint8(5), "acp_evaluation", 0.0, 12.34, uint8(0), "2026-10-30T17:30:00.5Z", int64(0))
	f.Add(uint16(0), uint16(0), uint8(3), uint8(3), uint8(3), uint8(3), uint8(6), uint8(6), "bogus", math.NaN(), -1.0, uint8(0), "not a date", int64(-1))
	f.Add(uint16(0xffff), uint16(0xffff), uint8(0), uint8(0), uint8(0), uint8(0), uint8(0), uint8(0), "", 1.005, 1e7, uint8(0), "", int64(42))

	rules := defaultRules(f)

	f.Fuzz(func(t *testing.T, missing, nulls uint16, track, claimant, respondent, remedy, rail, class uint8,
		free string, amount, corpus float64, flags uint8, window string, nowSec int64) {
		pick := func(sel uint8, values []string) string {
			if i := int(sel) % (len(values) + 1); i < len(values) {
				return values[i]
			}
			return free
		}
		strs := []string{
			pick(track, fuzzTracks), pick(claimant, fuzzParties), pick(respondent, fuzzParties),
			"", pick(remedy, fuzzRemedies), pick(rail, fuzzRails), pick(class, fuzzClasses),
		}
		present := func(i int) bool { return missing&(1<<i) == 0 }
		isNull := func(i int) bool { return nulls&(1<<i) != 0 }
		str := func(i int, v string) readiness.Member[string] { return member(present(i), isNull(i), v) }
		num := func(i int, v float64) readiness.Member[float64] { return member(present(i), isNull(i), v) }
		flag := func(i int) readiness.Member[bool] { return member(present(i), isNull(i), flags&(1<<(i-7)) != 0) }

		raw := readiness.RawRequest{
			CaseTrack:                         str(0, strs[0]),
			ClaimantType:                      str(1, strs[1]),
			RespondentType:                    str(2, strs[2]),
			AmountInDisputeUsd:                num(3, amount),
			Remedy:                            str(4, strs[4]),
			SettlementRail:                    str(5, strs[5]),
			FastTrackClaimClass:               str(6, strs[6]),
			MutualConsentReported:             flag(7),
			AuthorityToBindReported:           flag(8),
			ClaimantEvidenceReady:             flag(9),
			RespondentEvidenceReady:           flag(10),
			MicroClaimsTierConsentReported:    flag(11),
			RemedialJurisdictionOptInReported: flag(12),
			CorpusAmountUsd:                   num(13, corpus),
			EscrowWindowEndsAt:                str(14, window),
		}

		valueValid := []bool{
			slices.Contains(fuzzTracks, strs[0]), slices.Contains(fuzzParties, strs[1]),
			slices.Contains(fuzzParties, strs[2]), amountValid(amount), slices.Contains(fuzzRemedies, strs[4]),
			slices.Contains(fuzzRails, strs[5]), slices.Contains(fuzzClasses, strs[6]),
			true, true, true, true, true, true, amountValid(corpus), dateTimeValid(window),
		}
		wantField := ""
		for i, kind := range fuzzFieldKinds {
			var ok bool
			switch kind {
			case requiredMember:
				ok = present(i) && !isNull(i) && valueValid[i]
			case nullableMember:
				ok = present(i) && (isNull(i) || valueValid[i])
			case optionalMember:
				ok = !present(i) || (!isNull(i) && valueValid[i])
			}
			if !ok {
				wantField = requestFields[i]
				break
			}
		}

		req, err := readiness.NewRequest(raw)
		if wantField != "" {
			var verr *readiness.ValidationError
			require.True(t, errors.As(err, &verr), "want a *ValidationError for %s, got %v", wantField, err)
			require.Equal(t, wantField, verr.Field)
			require.NotEmpty(t, verr.Reason)
			return
		}
		require.NoError(t, err)

		now := time.Unix(nowSec%(400*365*24*3600), 0).UTC() // within ±400 years of 1970
		report := readiness.Evaluate(rules, req, now)
		encoded, err := json.Marshal(report)
		require.NoError(t, err)
		requireReportInvariants(t, req, report, encoded)

		again, err := json.Marshal(readiness.Evaluate(rules, req, now))
		require.NoError(t, err)
		require.Equal(t, string(encoded), string(again), "same request at the same instant, same bytes")
	})
}

func member[T any](present, null bool, v T) readiness.Member[T] {
	switch {
	case !present:
		return readiness.Member[T]{}
	case null:
		return readiness.Null[T]()
	default:
		return readiness.Given(v)
	}
}

// amountValid is the oracle for USD amounts, written differently from
// NewRequest: k/100 for an integer k is the only kind of value that survives
// a round trip through cents.
func amountValid(v float64) bool {
	if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 || v > readiness.MaxAmountUSD {
		return false
	}
	return math.Round(v*100)/100 == v
}

func dateTimeValid(s string) bool {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return false
	}
	y := t.UTC().Year()
	return y >= 0 && y <= 9999
}

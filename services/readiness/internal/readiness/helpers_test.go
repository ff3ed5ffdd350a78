package readiness_test

import (
	"bytes"
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/services/readiness/internal/readiness"
)

// defaultRules is the built-in table, ready for Evaluate.
func defaultRules(t testing.TB) readiness.Rules {
	t.Helper()
	rules, err := readiness.NewRules(readiness.DefaultRuleTable())
	require.NoError(t, err)
	return rules
}

// fixedNow is the instant every golden report is evaluated at.
var fixedNow = time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)

// requestFields are the request members in spec order, the order in which
// NewRequest reports the first failure.
var requestFields = []string{
	"caseTrack", "claimantType", "respondentType", "amountInDisputeUsd", "remedy", "settlementRail",
	"fastTrackClaimClass", "mutualConsentReported", "authorityToBindReported", "claimantEvidenceReady",
	"respondentEvidenceReady", "microClaimsTierConsentReported", "remedialJurisdictionOptInReported",
	"corpusAmountUsd", "escrowWindowEndsAt",
}

// rawFromJSON decodes a request body the way the HTTP layer must: keeping
// missing, null and value apart. Test bodies are trusted, so anything the
// HTTP layer would refuse fails the test instead.
func rawFromJSON(tb testing.TB, body string) readiness.RawRequest {
	tb.Helper()
	var members map[string]json.RawMessage
	dec := json.NewDecoder(strings.NewReader(body))
	require.NoError(tb, dec.Decode(&members))
	for name := range members {
		require.Contains(tb, requestFields, name, "unknown request member")
	}
	var raw readiness.RawRequest
	decodeMember(tb, members, "caseTrack", &raw.CaseTrack)
	decodeMember(tb, members, "claimantType", &raw.ClaimantType)
	decodeMember(tb, members, "respondentType", &raw.RespondentType)
	decodeMember(tb, members, "amountInDisputeUsd", &raw.AmountInDisputeUsd)
	decodeMember(tb, members, "remedy", &raw.Remedy)
	decodeMember(tb, members, "settlementRail", &raw.SettlementRail)
	decodeMember(tb, members, "fastTrackClaimClass", &raw.FastTrackClaimClass)
	decodeMember(tb, members, "mutualConsentReported", &raw.MutualConsentReported)
	decodeMember(tb, members, "authorityToBindReported", &raw.AuthorityToBindReported)
	decodeMember(tb, members, "claimantEvidenceReady", &raw.ClaimantEvidenceReady)
	decodeMember(tb, members, "respondentEvidenceReady", &raw.RespondentEvidenceReady)
	decodeMember(tb, members, "microClaimsTierConsentReported", &raw.MicroClaimsTierConsentReported)
	decodeMember(tb, members, "remedialJurisdictionOptInReported", &raw.RemedialJurisdictionOptInReported)
	decodeMember(tb, members, "corpusAmountUsd", &raw.CorpusAmountUsd)
	decodeMember(tb, members, "escrowWindowEndsAt", &raw.EscrowWindowEndsAt)
	return raw
}

func decodeMember[T any](tb testing.TB, members map[string]json.RawMessage, name string, dst *readiness.Member[T]) {
	tb.Helper()
	text, ok := members[name]
	switch {
	case !ok:
		*dst = readiness.Member[T]{}
	case bytes.Equal(text, []byte("null")):
		*dst = readiness.Null[T]()
	default:
		var v T
		require.NoError(tb, json.Unmarshal(text, &v), name)
		*dst = readiness.Given(v)
	}
}

// mustRequest validates a body that the test expects to be valid.
func mustRequest(tb testing.TB, body string) readiness.Request {
	tb.Helper()
	req, err := readiness.NewRequest(rawFromJSON(tb, body))
	require.NoError(tb, err)
	return req
}

// usdNumber is a JSON number in dollars with at most two decimals.
var usdNumber = regexp.MustCompile(`^(0|[1-9][0-9]*)(\.[0-9]{1,2})?$`)

// requireReportInvariants checks what every report must satisfy, whatever
// the request: the spec's schema for `data` (on the encoded bytes) and the
// rules' own promises (on the struct).
func requireReportInvariants(tb testing.TB, req readiness.Request, report readiness.Report, encoded []byte) {
	tb.Helper()

	d := report.Disclaimers
	require.False(tb, d.CaseFiled || d.MeritsAssessed || d.LegalAdvice || d.ReportedFactsVerified, "disclaimers must all be false")
	require.NotEmpty(tb, d.Statement)

	_, trackGiven := req.CaseTrack()
	require.Equal(tb, trackGiven, report.Composition != nil, "composition is nil iff caseTrack is omitted")
	require.Equal(tb, trackGiven, report.FilingFee != nil, "filingFee is nil iff caseTrack is omitted")
	if fee := report.FilingFee; fee != nil {
		require.Equal(tb, "USD", fee.Currency)
		require.GreaterOrEqual(tb, fee.AmountUsd.Cents(), fee.FloorUsd.Cents()+fee.PanelSurchargeUsd.Cents())
		require.Contains(tb, readiness.CompositionReasons(), report.Composition.Reason)
	}

	wantLane := readiness.LaneStandard
	if req.ClaimantType() == readiness.PartyAIAgent && req.RespondentType() == readiness.PartyAIAgent {
		wantLane = readiness.LaneAgent
	}
	require.Equal(tb, wantLane, report.Lane)

	codes := readiness.RequirementCodes()
	last := -1
	allSatisfied := true
	for _, r := range report.Requirements {
		i := slices.Index(codes, r.Code)
		require.GreaterOrEqual(tb, i, 0, "requirement code %q is outside the closed set", r.Code)
		require.Greater(tb, i, last, "requirement %q is out of order or repeated", r.Code)
		last = i
		require.NotEmpty(tb, r.Detail)
		allSatisfied = allSatisfied && r.Satisfied
		if r.Code == readiness.CodeLaneSupport {
			require.Equal(tb, report.SupportedLane, r.Satisfied, "lane_support mirrors supportedLane")
		}
	}
	require.Equal(tb, report.SupportedLane && trackGiven && allSatisfied, report.ReadyToFile)

	end, windowGiven := req.EscrowWindowEndsAt()
	if windowGiven {
		require.NotNil(tb, report.Timing.EscrowWindowEndsAt)
		require.True(tb, end.Equal(*report.Timing.EscrowWindowEndsAt))
		require.Equal(tb, time.UTC, report.Timing.EscrowWindowEndsAt.Location())
	} else {
		require.Nil(tb, report.Timing.EscrowWindowEndsAt)
	}
	if w := report.Timing.Warning; w != nil {
		require.NotEmpty(tb, *w)
	}
	texts := []string{d.Statement, report.CorpusCompatibility.Detail}
	for _, r := range report.Requirements {
		texts = append(texts, r.Detail)
	}
	if report.FilingFee != nil {
		texts = append(texts, report.FilingFee.CollectionNote)
	}
	if report.Timing.Warning != nil {
		texts = append(texts, *report.Timing.Warning)
	}
	for _, text := range texts {
		require.NotContains(tb, text, "{", "a placeholder was left unrendered")
	}

	requireDataSchema(tb, encoded)
}

// requireDataSchema checks encoded against the spec's `data` object: every
// member required, no extra members, the declared types and value sets.
func requireDataSchema(tb testing.TB, encoded []byte) {
	tb.Helper()
	dec := json.NewDecoder(bytes.NewReader(encoded))
	dec.UseNumber()
	var data map[string]any
	require.NoError(tb, dec.Decode(&data))

	requireKeys(tb, data, "supportedLane", "readyToFile", "lane", "composition", "filingFee",
		"requirements", "corpusCompatibility", "timing", "disclaimers")
	require.IsType(tb, true, data["supportedLane"])
	require.IsType(tb, true, data["readyToFile"])
	require.Contains(tb, []any{"agent", "standard"}, data["lane"])

	if c := data["composition"]; c != nil {
		comp := c.(map[string]any)
		requireKeys(tb, comp, "value", "reason")
		require.Contains(tb, []any{"memorandum", "single_arbiter", "panel"}, comp["value"])
		require.IsType(tb, "", comp["reason"])
	}
	if f := data["filingFee"]; f != nil {
		fee := f.(map[string]any)
		requireKeys(tb, fee, "currency", "amountUsd", "tier", "percent", "floorUsd", "panelSurchargeUsd", "collectionNote")
		require.Equal(tb, "USD", fee["currency"])
		require.Contains(tb, []any{"micro", "single_arbiter", "panel", "declaratory"}, fee["tier"])
		for _, k := range []string{"amountUsd", "percent", "floorUsd", "panelSurchargeUsd"} {
			n, ok := fee[k].(json.Number)
			require.True(tb, ok, "%s must be a number", k)
			require.Regexp(tb, usdNumber, n.String(), "%s must be non-negative with at most 2 decimals", k)
		}
		require.IsType(tb, "", fee["collectionNote"])
	}

	reqs, ok := data["requirements"].([]any)
	require.True(tb, ok, "requirements must be an array")
	for _, item := range reqs {
		r := item.(map[string]any)
		requireKeys(tb, r, "code", "satisfied", "detail")
		require.IsType(tb, "", r["code"])
		require.IsType(tb, true, r["satisfied"])
		require.IsType(tb, "", r["detail"])
	}

	corpus := data["corpusCompatibility"].(map[string]any)
	requireKeys(tb, corpus, "compatible", "detail")
	require.IsType(tb, true, corpus["compatible"])
	require.IsType(tb, "", corpus["detail"])

	timing := data["timing"].(map[string]any)
	requireKeys(tb, timing, "escrowWindowEndsAt", "warning")
	if at := timing["escrowWindowEndsAt"]; at != nil {
		s, ok := at.(string)
		require.True(tb, ok)
		_, err := time.Parse(time.RFC3339, s)
		require.NoError(tb, err)
		require.True(tb, strings.HasSuffix(s, "Z"), "escrowWindowEndsAt is normalized to UTC")
	}
	if w := timing["warning"]; w != nil {
		require.IsType(tb, "", w)
	}

	disc := data["disclaimers"].(map[string]any)
	requireKeys(tb, disc, "caseFiled", "meritsAssessed", "legalAdvice", "reportedFactsVerified", "statement")
	for _, k := range []string{"caseFiled", "meritsAssessed", "legalAdvice", "reportedFactsVerified"} {
		require.Equal(tb, false, disc[k], k)
	}
	require.IsType(tb, "", disc["statement"])
}

func requireKeys(tb testing.TB, obj map[string]any, keys ...string) {
	tb.Helper()
	got := make([]string, 0, len(obj))
	for k := range obj {
		got = append(got, k)
	}
	slices.Sort(got)
	want := slices.Clone(keys)
	slices.Sort(want)
	require.Equal(tb, want, got)
}

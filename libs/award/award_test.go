package award_test

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/award"
	"github.com/pcourt/pcourt/libs/jwk"
)

// sampleAward is a proceeding's award as the cases service would issue it.
func sampleAward() award.Document {
	return award.Document{
		SchemaVersion:  award.SchemaAward,
		AwardID:        "aw_01JD8QC2M4P6R8T0V2X4Z6B8D0",
		CaseID:         "cs_01JD8Q9XK3M5P7R9T1V3X5Z7B9",
		ExternalCaseID: "order-4711-dispute",
		Environment:    "sandbox",
		CaseMode:       "proceeding",
		Rules:          award.Rules{Version: "pc-rules-2026-01", Hash: strings.Repeat("ab", 32)},
		Parties: []award.Party{
			{Side: "claimant", ParticipantID: "pt_claimant_1", PrincipalID: "pr_buyer"},
			{Side: "respondent", ParticipantID: "pt_respondent_1", PrincipalID: "pr_seller"},
		},
		Outcome: award.OutcomeClaimPartiallyUpheld,
		Remedies: []award.Remedy{{
			Kind: award.RemedyPayment, Payer: "respondent", Payee: "claimant",
			AmountMinor: 4250, Currency: "USD", DueBy: "2026-12-23T00:00:00.000Z",
		}},
		Reasons: "The goods arrived late but whole; the delay is compensated, the refund is not owed. «Exact bytes» — UTF-8 stays as it is.",
		Citations: []award.Citation{
			{ItemID: "answer", Digest: strings.Repeat("cd", 32), Pinpoint: "paragraph 2"},
			{ItemID: "sb_01JD8QBZ", Digest: strings.Repeat("ef", 32)},
		},
		Tribunal: award.Tribunal{
			Adjudicator: award.Member{MemberID: "mb_adjudicator_1", Kind: "autonomous_agent"},
			Configuration: award.Configuration{
				Provider: "rubric", Model: "pc-rubric", ModelVersion: "1",
				InstructionsDigest:  strings.Repeat("01", 32),
				OutputSchemaVersion: award.SchemaProposal,
			},
			Runs: []award.Run{{
				RunID: "run_1", ConfigurationDigest: strings.Repeat("02", 32),
				InputDigest: strings.Repeat("03", 32), OutputDigest: strings.Repeat("04", 32), Status: "completed",
			}},
			Reviewer:        award.Member{MemberID: "mb_reviewer_1", Kind: "individual"},
			ReviewerOpinion: "agree",
		},
		IssuedAt: "2026-11-23T10:00:00.000Z",
	}
}

func mustBytes(t testing.TB, d award.Document) []byte {
	t.Helper()
	b, err := d.Bytes()
	require.NoError(t, err)
	return b
}

// seededKey returns a fixed key made from name.
func seededKey(name string) ed25519.PrivateKey {
	seed := sha256.Sum256([]byte(name))
	return ed25519.NewKeyFromSeed(seed[:])
}

func publicOf(priv ed25519.PrivateKey) ed25519.PublicKey {
	return priv.Public().(ed25519.PublicKey)
}

// jwksOf returns the JWK set of keys by kid, in the given order.
func jwksOf(t testing.TB, keys ...any) []byte {
	t.Helper()
	var set []jwk.JWK
	for i := 0; i < len(keys); i += 2 {
		set = append(set, jwk.NewJWK(keys[i].(string), publicOf(keys[i+1].(ed25519.PrivateKey))))
	}
	data, err := jwk.MarshalJWKS(set...)
	require.NoError(t, err)
	return data
}

func TestKeyID(t *testing.T) {
	pub := publicOf(seededKey("key id"))
	created := time.Date(2026, 11, 23, 23, 30, 0, 0, time.FixedZone("UTC-2", -2*3600))
	kid := award.KeyID(pub, created)
	sum := sha256.Sum256(pub)
	require.Equal(t, "pcaw_20261124_"+hex.EncodeToString(sum[:8]), kid, "the UTC day, then 16 hex of the SHA-256 of the key")
	require.True(t, jwk.ValidKeyID(kid))

	p, err := award.ParseKeyID(kid)
	require.NoError(t, err)
	require.Equal(t, time.Date(2026, 11, 24, 0, 0, 0, 0, time.UTC), p.Created)
	require.True(t, p.Matches(pub))
	require.False(t, p.Matches(publicOf(seededKey("another"))))
	require.False(t, p.Matches(pub[:31]))

	for _, bad := range []string{
		"pcaw_2026-11-24_0123456789abcdef", "pcaw_20261324_0123456789abcdef", "pcaw_20260230_0123456789abcdef",
		"pcaw_20261124_0123456789ABCDEF", "pcaw_20261124_0123456789abcde", "pcwh_20261124_0123456789abcdef",
		"pcaw_20261124_0123456789abcdef ", "",
	} {
		_, err := award.ParseKeyID(bad)
		require.Error(t, err, bad)
	}
}

func TestBytesWritesEmptyListsAndIsCanonical(t *testing.T) {
	d := award.Document{SchemaVersion: award.SchemaAward, CaseMode: "evaluation", Evaluation: &award.Evaluation{Question: "q"},
		Tribunal: award.Tribunal{Adjudicator: award.Member{MemberID: "a", Kind: "autonomous_agent"}, ReviewerOpinion: "agree"}}
	b := mustBytes(t, d)
	require.NotContains(t, string(b), "null")
	for _, list := range []string{"parties", "remedies", "citations", "runs", "tools", "criteria", "allowedOutcomes"} {
		require.Contains(t, string(b), `"`+list+`":[]`, list)
	}
	require.Nil(t, d.Evaluation.Criteria, "Bytes leaves the caller's document as it was")
	canon, err := award.Canonical(json.RawMessage(b))
	require.NoError(t, err)
	require.Equal(t, string(canon), string(b))

	full := mustBytes(t, sampleAward())
	require.True(t, strings.HasPrefix(string(full), `{"awardId":"aw_01JD8QC2M4P6R8T0V2X4Z6B8D0","caseId":`), "members in RFC 8785 order: %s", full)
	require.Contains(t, string(full), "«Exact bytes» — UTF-8", "no \\u escapes beyond the mandatory ones")
	require.NotContains(t, string(full), `"evaluation"`, "an absent evaluation is left out, not null")
	require.Equal(t, string(full), string(mustBytes(t, sampleAward())), "the same document gives the same bytes")
}

func TestBytesRefuses(t *testing.T) {
	for name, d := range map[string]award.Document{
		"no schema version": {},
		"other schema":      {SchemaVersion: award.SchemaProposal},
		"invalid UTF-8":     func() award.Document { d := sampleAward(); d.Reasons = "bad \xff byte"; return d }(),
	} {
		t.Run(name, func(t *testing.T) {
			_, err := d.Bytes()
			require.ErrorIs(t, err, award.ErrDocument)
		})
	}
}

func TestSignThenVerify(t *testing.T) {
	priv := seededKey("sign then verify")
	kid := award.KeyID(publicOf(priv), time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC))
	b := mustBytes(t, sampleAward())
	att, err := award.Sign(priv, kid, b)
	require.NoError(t, err)

	head, sig, ok := strings.Cut(att, "..")
	require.True(t, ok)
	header, err := base64.RawURLEncoding.DecodeString(head)
	require.NoError(t, err)
	require.Equal(t, `{"alg":"EdDSA","kid":"`+kid+`"}`, string(header))
	require.Len(t, sig, 86, "64 bytes, base64url without padding")

	got, err := award.Verify(b, att, jwksOf(t, kid, priv))
	require.NoError(t, err)
	require.Equal(t, award.Hash(b), got.AwardHash)
	require.Equal(t, kid, got.KeyID)
	require.Empty(t, cmp.Diff(sampleAward(), got.Award, cmpopts.EquateEmpty()))
}

// TestSignIsDeterministic: Ed25519 signs without randomness, so an award
// signed twice with one key has one attestation (a reissue cannot be told
// from the original by its signature, and the vectors are reproducible).
func TestSignIsDeterministic(t *testing.T) {
	priv := seededKey("deterministic")
	b := mustBytes(t, sampleAward())
	first, err := award.Sign(priv, "k1", b)
	require.NoError(t, err)
	second, err := award.Sign(priv, "k1", b)
	require.NoError(t, err)
	require.Equal(t, first, second)
	other, err := award.Sign(seededKey("another key"), "k1", b)
	require.NoError(t, err)
	require.NotEqual(t, first, other)
}

func TestSignRefuses(t *testing.T) {
	priv := seededKey("sign refuses")
	b := mustBytes(t, sampleAward())
	for name, tc := range map[string]struct {
		priv  ed25519.PrivateKey
		kid   string
		award []byte
		is    error
	}{
		"short key":                  {priv: priv[:32], kid: "k", award: b},
		"no kid":                     {priv: priv, kid: "", award: b},
		"kid with a quote":           {priv: priv, kid: `k"`, award: b},
		"kid of another key":         {priv: priv, kid: award.KeyID(publicOf(seededKey("other")), time.Now()), award: b},
		"not canonical":              {priv: priv, kid: "k", award: append([]byte(" "), b...), is: award.ErrNotCanonical},
		"not json":                   {priv: priv, kid: "k", award: []byte("award"), is: award.ErrNotCanonical},
		"canonical but not an award": {priv: priv, kid: "k", award: []byte(`{"schemaVersion":"pc-award-v1"}`), is: award.ErrDocument},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := award.Sign(tc.priv, tc.kid, tc.award)
			require.Error(t, err)
			if tc.is != nil {
				require.ErrorIs(t, err, tc.is)
			}
		})
	}
}

// TestOldKeysStayPublished: an award signed by a key that is no longer the
// current one verifies as long as the set still holds that key, which is
// why GET /api/awards/keys keeps every key ever used. Drop the old key and
// every award it signed stops verifying.
func TestOldKeysStayPublished(t *testing.T) {
	old, current := seededKey("2026 key"), seededKey("2027 key")
	oldKid := award.KeyID(publicOf(old), time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC))
	currentKid := award.KeyID(publicOf(current), time.Date(2027, 1, 4, 0, 0, 0, 0, time.UTC))
	b := mustBytes(t, sampleAward())
	att, err := award.Sign(old, oldKid, b)
	require.NoError(t, err)

	got, err := award.Verify(b, att, jwksOf(t, currentKid, current, oldKid, old))
	require.NoError(t, err)
	require.Equal(t, oldKid, got.KeyID)

	_, err = award.Verify(b, att, jwksOf(t, currentKid, current))
	require.ErrorIs(t, err, award.ErrUnknownKey)
}

// TestVerifyRefuses covers refusals beyond the published vectors: each
// fails with its step's error and no other.
func TestVerifyRefuses(t *testing.T) {
	priv := seededKey("verify refuses")
	b := mustBytes(t, sampleAward())
	att, err := award.Sign(priv, "k", b)
	require.NoError(t, err)
	set := jwksOf(t, "k", priv)
	head, sig, _ := strings.Cut(att, "..")
	enc := base64.RawURLEncoding.EncodeToString
	// signed re-signs b under an arbitrary header, as a faulty or hostile
	// signer would.
	signed := func(header string, payload []byte) string {
		h := enc([]byte(header))
		return h + ".." + enc(ed25519.Sign(priv, []byte(h+"."+enc(payload))))
	}
	sigBytes, err := base64.RawURLEncoding.DecodeString(sig)
	require.NoError(t, err)

	for name, tc := range map[string]struct {
		award []byte
		att   string
		jwks  []byte
		is    error
	}{
		"empty":                    {b, "", set, award.ErrAttestationFormat},
		"two parts":                {b, head + "." + sig, set, award.ErrAttestationFormat},
		"four parts":               {b, att + ".", set, award.ErrAttestationFormat},
		"no header":                {b, ".." + sig, set, award.ErrAttestationFormat},
		"no signature":             {b, head + "..", set, award.ErrAttestationFormat},
		"padded header":            {b, enc([]byte(`{"alg":"EdDSA","kid":"k1"}`)) + "=.." + sig, set, award.ErrHeader},
		"standard base64 header":   {b, strings.NewReplacer("-", "+", "_", "/").Replace(head) + "+.." + sig, set, award.ErrHeader},
		"header with whitespace":   {b, signed(`{"alg":"EdDSA", "kid":"k"}`, b), set, award.ErrHeader},
		"members reordered":        {b, signed(`{"kid":"k","alg":"EdDSA"}`, b), set, award.ErrHeader},
		"alg twice":                {b, signed(`{"alg":"none","alg":"EdDSA","kid":"k"}`, b), set, award.ErrHeader},
		"kid twice":                {b, signed(`{"alg":"EdDSA","kid":"k","kid":"k"}`, b), set, award.ErrHeader},
		"typ member":               {b, signed(`{"alg":"EdDSA","kid":"k","typ":"JOSE"}`, b), set, award.ErrHeader},
		"alg ES256":                {b, signed(`{"alg":"ES256","kid":"k"}`, b), set, award.ErrHeader},
		"alg Ed25519":              {b, signed(`{"alg":"Ed25519","kid":"k"}`, b), set, award.ErrHeader},
		"no kid":                   {b, signed(`{"alg":"EdDSA"}`, b), set, award.ErrHeader},
		"kid escaped":              {b, signed(`{"alg":"EdDSA","kid":"\u006b"}`, b), set, award.ErrHeader},
		"header not json":          {b, signed(`alg=EdDSA`, b), set, award.ErrHeader},
		"set not json":             {b, att, []byte(`{`), jwk.ErrKeySet},
		"set with a private key":   {b, att, []byte(strings.Replace(string(set), `"kid"`, `"d":"AAAA","kid"`, 1)), jwk.ErrKeySet},
		"empty set":                {b, att, []byte(`{"keys":[]}`), award.ErrUnknownKey},
		"signature padded":         {b, att + "==", set, award.ErrBadSignature},
		"signature short":          {b, head + ".." + enc(sigBytes[:63]), set, award.ErrBadSignature},
		"signature non-canonical":  {b, head + ".." + sig[:85] + string(sig[85]^1), set, award.ErrBadSignature},
		"other award's bytes":      {mustBytes(t, sampleConsentAward()), att, set, award.ErrBadSignature},
		"bytes with a newline":     {append(b, '\n'), att, set, award.ErrBadSignature},
		"signed with a newline":    {append(b, '\n'), signed(`{"alg":"EdDSA","kid":"k"}`, append(b, '\n')), set, award.ErrNotCanonical},
		"signed duplicate member":  {[]byte(`{"a":1,"a":1}`), signed(`{"alg":"EdDSA","kid":"k"}`, []byte(`{"a":1,"a":1}`)), set, award.ErrNotCanonical},
		"signed wrong member case": {bytesWithCase(b), signed(`{"alg":"EdDSA","kid":"k"}`, bytesWithCase(b)), set, award.ErrDocument},
		"signed unknown member":    {withMember(b, `"zzz":1`), signed(`{"alg":"EdDSA","kid":"k"}`, withMember(b, `"zzz":1`)), set, award.ErrDocument},
		"signed empty object":      {[]byte(`{}`), signed(`{"alg":"EdDSA","kid":"k"}`, []byte(`{}`)), set, award.ErrDocument},
		"signed array":             {[]byte(`[]`), signed(`{"alg":"EdDSA","kid":"k"}`, []byte(`[]`)), set, award.ErrDocument},
		"signed member missing":    {withoutMember(b, `"overridden":false,`), signed(`{"alg":"EdDSA","kid":"k"}`, withoutMember(b, `"overridden":false,`)), set, award.ErrDocument},
		"signed wrong type":        {replaced(b, `"overridden":false`, `"overridden":0`), signed(`{"alg":"EdDSA","kid":"k"}`, replaced(b, `"overridden":false`, `"overridden":0`)), set, award.ErrDocument},
		"signed empty corrects":    {replaced(b, `"environment"`, `"corrects":"","environment"`), signed(`{"alg":"EdDSA","kid":"k"}`, replaced(b, `"environment"`, `"corrects":"","environment"`)), set, award.ErrDocument},
		"signed null evaluation":   {replaced(b, `"externalCaseId"`, `"evaluation":null,"externalCaseId"`), signed(`{"alg":"EdDSA","kid":"k"}`, replaced(b, `"externalCaseId"`, `"evaluation":null,"externalCaseId"`)), set, award.ErrDocument},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := award.Verify(tc.award, tc.att, tc.jwks)
			require.ErrorIs(t, err, tc.is, "error: %v", err)
			for _, other := range []error{award.ErrAttestationFormat, award.ErrHeader, award.ErrUnknownKey, award.ErrBadSignature, award.ErrNotCanonical, award.ErrDocument, jwk.ErrKeySet} {
				if other != tc.is {
					require.NotErrorIs(t, err, other)
				}
			}
		})
	}
}

func replaced(b []byte, old, new string) []byte {
	if !strings.Contains(string(b), old) {
		panic("no " + old)
	}
	return []byte(strings.Replace(string(b), old, new, 1))
}

// withMember adds a member at the end of the top-level object (members
// sorting after every award member keep the bytes canonical).
func withMember(b []byte, member string) []byte {
	return []byte(string(b[:len(b)-1]) + "," + member + "}")
}

func withoutMember(b []byte, member string) []byte { return replaced(b, member, "") }

// bytesWithCase renames outcome to Outcome: encoding/json would match it
// case-insensitively; the award refuses it. It stays canonical: "O" sorts
// before every lowercase name.
func bytesWithCase(b []byte) []byte {
	s := replaced(b, `"outcome":"claim_partially_upheld",`, "")
	return []byte(`{"Outcome":"claim_partially_upheld",` + string(s[1:]))
}

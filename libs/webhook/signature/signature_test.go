package signature_test

import (
	"crypto/ed25519"
	"crypto/sha256"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/webhook/signature"
)

func testSigner(t testing.TB, env signature.Environment) *signature.Signer {
	t.Helper()
	seed := sha256.Sum256([]byte(t.Name()))
	priv := ed25519.NewKeyFromSeed(seed[:])
	kid, err := signature.NewKeyID(env, time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC), priv.Public().(ed25519.PublicKey))
	require.NoError(t, err)
	s, err := signature.NewSigner(kid, priv)
	require.NoError(t, err)
	return s
}

func TestSignThenVerify(t *testing.T) {
	s := testSigner(t, signature.Live)
	body := []byte(caseEvent("evt_1", signature.SchemaVersion, 1))
	at := time.Date(2026, 11, 23, 10, 0, 0, 987_654_321, time.FixedZone("CET", 3600))
	h, err := s.Sign(body, "evt_1", signature.Recipient{EndpointID: "we_a"}, at)
	require.NoError(t, err)
	require.Equal(t, "2026-11-23T09:00:00.987Z", h.EventTimestamp, "UTC, truncated to milliseconds")
	require.Equal(t, signature.SignatureVersion, h.SignatureVersion)
	require.Equal(t, signature.SchemaVersion, h.SchemaVersion)
	require.Equal(t, "we_a", h.EndpointID)
	require.Equal(t, "false", h.Test)

	hdr := h.HTTPHeader()
	require.Len(t, hdr, 9)
	keys := signature.KeySet{s.KeyID(): s.PublicKey()}
	got, err := signature.Verify(hdr, body, "we_a", keys.Lookup, at.Add(time.Minute), 0)
	require.NoError(t, err)
	require.Equal(t, signature.Verified{EventID: "evt_1", KeyID: s.KeyID(), Timestamp: time.Date(2026, 11, 23, 9, 0, 0, 987_000_000, time.UTC), EndpointID: "we_a"}, got)

	_, err = signature.Verify(hdr, body, "we_a", keys.Lookup, at.Add(time.Minute), 30*time.Second)
	require.Equal(t, signature.ReasonTimestampWindow, signature.ReasonOf(err), "a tolerance narrower than the default is honoured")
}

// TestASignatureBindsItsRecipient is item 4 of "Security, round 2": a
// delivery signed for one endpoint verifies at that endpoint's receiver
// only, and whether it is a test event cannot be changed or stripped.
func TestASignatureBindsItsRecipient(t *testing.T) {
	s := testSigner(t, signature.Sandbox)
	keys := signature.KeySet{s.KeyID(): s.PublicKey()}
	body := []byte(caseEvent("evt_1", signature.SchemaVersion, 1))
	at := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	forB, err := s.Sign(body, "evt_1", signature.Recipient{EndpointID: "we_b", Test: true}, at)
	require.NoError(t, err)
	require.Equal(t, "true", forB.Test)

	got, err := signature.Verify(forB.HTTPHeader(), body, "we_b", keys.Lookup, at, 0)
	require.NoError(t, err, "B's receiver accepts it")
	require.True(t, got.Test, "and knows it is a test event")

	for name, c := range map[string]struct {
		receiver string
		edit     func(http.Header)
		want     signature.Reason
	}{
		"replayed to A's receiver":                   {"we_a", func(http.Header) {}, signature.ReasonRecipientMismatch},
		"replayed to a receiver that names no id":    {"", func(http.Header) {}, signature.ReasonRecipientMismatch},
		"replayed to A with A's id in the header":    {"we_a", func(h http.Header) { h.Set(signature.HeaderEndpointID, "we_a") }, signature.ReasonBadSignature},
		"the test flag turned into a case fact":      {"we_b", func(h http.Header) { h.Set(signature.HeaderTest, "false") }, signature.ReasonBadSignature},
		"the test flag stripped":                     {"we_b", func(h http.Header) { h.Del(signature.HeaderTest) }, signature.ReasonHeaderMissing},
		"the endpoint id stripped":                   {"we_b", func(h http.Header) { h.Del(signature.HeaderEndpointID) }, signature.ReasonHeaderMissing},
		"a test flag other than true or false":       {"we_b", func(h http.Header) { h.Set(signature.HeaderTest, "yes") }, signature.ReasonHeaderFormat},
		"an endpoint id outside the id alphabet":     {"we_b", func(h http.Header) { h.Set(signature.HeaderEndpointID, "we b") }, signature.ReasonHeaderFormat},
		"endpoint ids are compared exactly, by case": {"WE_B", func(http.Header) {}, signature.ReasonRecipientMismatch},
	} {
		t.Run(name, func(t *testing.T) {
			h := forB.HTTPHeader()
			c.edit(h)
			_, err := signature.Verify(h, body, c.receiver, keys.Lookup, at, 0)
			require.Equal(t, c.want, signature.ReasonOf(err), "error: %v", err)
		})
	}

	_, err = s.Sign(body, "evt_1", signature.Recipient{}, at)
	require.Error(t, err, "nothing is signed for no recipient")
}

func TestSignRefusesWhatReceiversRefuse(t *testing.T) {
	s := testSigner(t, signature.Sandbox)
	at := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	for name, c := range map[string]struct {
		body, eventID string
		at            time.Time
	}{
		"bad event id":      {caseEvent("evt 1", signature.SchemaVersion, 1), "evt 1", at},
		"id differs":        {caseEvent("evt_1", signature.SchemaVersion, 1), "evt_2", at},
		"schema differs":    {caseEvent("evt_1", "case-event-v1", 1), "evt_1", at},
		"repeated member":   {`{"schemaVersion":"case-event-v2","eventId":"evt_1","eventId":"evt_1"}`, "evt_1", at},
		"not an object":     {`[]`, "evt_1", at},
		"year out of range": {caseEvent("evt_1", signature.SchemaVersion, 1), "evt_1", time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := s.Sign([]byte(c.body), c.eventID, signature.Recipient{EndpointID: "we_a"}, c.at)
			require.Error(t, err)
		})
	}
}

func TestNewSignerRefusesBadInput(t *testing.T) {
	_, priv, err := ed25519.GenerateKey(nil)
	require.NoError(t, err)
	_, err = signature.NewSigner("", priv)
	require.Error(t, err)
	_, err = signature.NewSigner(strings.Repeat("k", 161), priv)
	require.Error(t, err)
	_, err = signature.NewSigner("kid", priv[:32])
	require.Error(t, err)
}

func TestParseTimestamp(t *testing.T) {
	ok := []string{"2026-11-23T10:15:28.123Z", "2028-02-29T00:00:00.000Z", "0001-01-01T00:00:00.000Z", "9999-12-31T23:59:59.999Z"}
	for _, s := range ok {
		got, err := signature.ParseTimestamp(s)
		require.NoError(t, err, s)
		require.Equal(t, s, signature.FormatTimestamp(got))
	}
	bad := []string{"", "2026-11-23T10:15:28Z", "2026-11-23T10:15:28.123+00:00", "2026-11-23T10:15:28.1234Z",
		"2027-02-29T00:00:00.000Z", "2026-11-23T10:15:60.000Z", "2026-13-01T00:00:00.000Z", "+2026-11-23T10:15:28.123Z",
		"2026-11-23T10:15:28.123Z ", "２026-11-23T10:15:28.123Z"}
	for _, s := range bad {
		_, err := signature.ParseTimestamp(s)
		require.ErrorIs(t, err, signature.ErrTimestampFormat, "%q", s)
	}
}

func TestVerifyKeepsTheLookupError(t *testing.T) {
	s := testSigner(t, signature.Sandbox)
	body := []byte(caseEvent("evt_1", signature.SchemaVersion, 1))
	now := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	h, err := s.Sign(body, "evt_1", signature.Recipient{EndpointID: "we_a"}, now)
	require.NoError(t, err)

	_, err = signature.Verify(h.HTTPHeader(), body, "we_a", signature.KeySet{}.Lookup, now, 0)
	require.Equal(t, signature.ReasonUnknownKey, signature.ReasonOf(err))
	require.ErrorIs(t, err, signature.ErrUnknownKey)

	unreachable := errors.New("jwks: connection refused")
	_, err = signature.Verify(h.HTTPHeader(), body, "we_a", func(string) (ed25519.PublicKey, error) { return nil, unreachable }, now, 0)
	require.Equal(t, signature.ReasonUnknownKey, signature.ReasonOf(err))
	require.ErrorIs(t, err, unreachable)
	require.NotErrorIs(t, err, signature.ErrUnknownKey, "a caller can tell an unreachable key source from an unknown key")

	var e *signature.Error
	require.ErrorAs(t, err, &e)
	require.Equal(t, signature.HeaderKeyID, e.Header)
	require.Equal(t, signature.Reason(""), signature.ReasonOf(errors.New("other")))
	require.Equal(t, signature.Reason(""), signature.ReasonOf(nil))
}

func TestVerifyReportsTheFirstFailingStep(t *testing.T) {
	s := testSigner(t, signature.Sandbox)
	body := []byte(caseEvent("evt_1", signature.SchemaVersion, 1))
	now := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	h, err := s.Sign(body, "evt_1", signature.Recipient{EndpointID: "we_a"}, now.Add(-time.Hour))
	require.NoError(t, err)
	hdr := h.HTTPHeader()
	hdr.Set(signature.HeaderSignatureVersion, "v0")
	hdr.Set(signature.HeaderKeyID, "bad key")
	// Stale, wrong version and a bad key id: header_format comes first.
	_, err = signature.Verify(hdr, []byte("tampered"), "we_a", signature.KeySet{}.Lookup, now, 0)
	require.Equal(t, signature.ReasonHeaderFormat, signature.ReasonOf(err))
	hdr.Del(signature.HeaderSignature)
	_, err = signature.Verify(hdr, body, "we_a", signature.KeySet{}.Lookup, now, 0)
	require.Equal(t, signature.ReasonHeaderMissing, signature.ReasonOf(err))
}

func TestHeadersApplyReplaces(t *testing.T) {
	dst := http.Header{}
	dst.Add("X-Pc-Event-Id", "old")
	dst.Add("X-Pc-Event-Id", "older")
	signature.Headers{EventID: "new"}.Apply(dst)
	require.Equal(t, []string{"new"}, dst.Values(signature.HeaderEventID))
}

func TestKeyID(t *testing.T) {
	pub, _, err := ed25519.GenerateKey(nil)
	require.NoError(t, err)
	created := time.Date(2026, 11, 23, 23, 30, 0, 0, time.FixedZone("x", -3600))
	kid, err := signature.NewKeyID(signature.Live, created, pub)
	require.NoError(t, err)
	require.True(t, signature.ValidID(kid))
	require.True(t, strings.HasPrefix(kid, "pcwh_live_2026-11-24_"), kid)
	parsed, err := signature.ParseKeyID(kid)
	require.NoError(t, err)
	require.Equal(t, signature.Live, parsed.Environment)
	require.Equal(t, time.Date(2026, 11, 24, 0, 0, 0, 0, time.UTC), parsed.Created)
	require.True(t, parsed.Matches(pub))
	other, _, err := ed25519.GenerateKey(nil)
	require.NoError(t, err)
	require.False(t, parsed.Matches(other))

	_, err = signature.NewKeyID("staging", created, pub)
	require.Error(t, err)
	for _, bad := range []string{"pcwh_prod_2026-11-23_0123456789ab", "pcwh_live_2026-13-23_0123456789ab", "pcwh_live_2026-11-23_0123456789AB", "pcwh_live_2026-11-23_0123"} {
		_, err := signature.ParseKeyID(bad)
		require.Error(t, err, bad)
	}
}

// TestJWKS covers the webhook names of the key set code, which lives in
// libs/jwk (and is tested there): a signer's key round-trips, and a
// refusal is still a signature.ErrKeySet.
func TestJWKS(t *testing.T) {
	s := testSigner(t, signature.Sandbox)
	data, err := signature.MarshalJWKS(s.JWK())
	require.NoError(t, err)
	require.JSONEq(t, `{"keys":[{"kty":"OKP","crv":"Ed25519","x":"`+s.JWK().X+`","kid":"`+s.KeyID()+`","use":"sig","alg":"EdDSA"}]}`, string(data))
	set, err := signature.ParseJWKS(data)
	require.NoError(t, err)
	require.Equal(t, signature.KeySet{s.KeyID(): s.PublicKey()}, set)

	empty, err := signature.MarshalJWKS()
	require.NoError(t, err)
	require.JSONEq(t, `{"keys":[]}`, string(empty))

	x := s.JWK().X
	for name, doc := range map[string]string{
		"rsa":          `{"keys":[{"kty":"RSA","crv":"Ed25519","x":"` + x + `","kid":"k"}]}`,
		"private part": `{"keys":[{"kty":"OKP","crv":"Ed25519","x":"` + x + `","d":"` + x + `","kid":"k"}]}`,
		"bad kid":      `{"keys":[{"kty":"OKP","crv":"Ed25519","x":"` + x + `","kid":"a b"}]}`,
	} {
		t.Run(name, func(t *testing.T) {
			_, err := signature.ParseJWKS([]byte(doc))
			require.ErrorIs(t, err, signature.ErrKeySet)
		})
	}
	_, err = signature.MarshalJWKS(signature.JWK{Kty: "RSA"})
	require.ErrorIs(t, err, signature.ErrKeySet)
	_, err = set.Lookup("pcwh_sandbox_2026-11-23_000000000000")
	require.ErrorIs(t, err, signature.ErrUnknownKey)
}

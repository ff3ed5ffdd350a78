package award_test

import (
	"bytes"
	"crypto/ed25519"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/award"
	"github.com/pcourt/pcourt/libs/jwk"
)

var update = flag.Bool("update", false, "rewrite testdata/vectors.json from the generator")

const vectorsPath = "testdata/vectors.json"

// vectorsFile is the JSON shape of testdata/vectors.json.
type vectorsFile struct {
	Description string `json:"description"`
	// Steps names the verification steps in order; a refused vector's
	// reason is one of them.
	Steps   []string    `json:"steps"`
	Keys    []vectorKey `json:"keys"`
	JWKS    jwk.JWKS    `json:"jwks"`
	Vectors []vector    `json:"vectors"`
}

// vectorKey is one fixed test key. Published keys are in the file's jwks.
type vectorKey struct {
	Name         string `json:"name"`
	KeyID        string `json:"keyId"`
	SeedHex      string `json:"seedHex"`
	PublicKeyHex string `json:"publicKeyHex"`
	Published    bool   `json:"published"`
}

// vector is one award and attestation, and the verdict every verifier
// must reach against the file's jwks.
type vector struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	// Award is the award's bytes as text, for reading; AwardBase64 is
	// authoritative.
	Award       string `json:"award"`
	AwardBase64 string `json:"awardBase64"`
	Attestation string `json:"attestation"`
	// Header is the attestation's protected header, decoded, for reading.
	Header string `json:"header"`
	Expect string `json:"expect"`
	// AwardHash and KeyID are what an accepted vector establishes.
	AwardHash string `json:"awardHash,omitempty"`
	KeyID     string `json:"keyId,omitempty"`
	// Reason is the step a refused vector fails at.
	Reason string `json:"reason,omitempty"`
}

// The steps of award.Verify in order, as the vectors name them.
var steps = []struct {
	name string
	err  error
}{
	{"attestation_format", award.ErrAttestationFormat},
	{"header", award.ErrHeader},
	{"unknown_key", award.ErrUnknownKey},
	{"bad_signature", award.ErrBadSignature},
	{"not_canonical", award.ErrNotCanonical},
	{"document", award.ErrDocument},
}

func stepError(t testing.TB, name string) error {
	t.Helper()
	for _, s := range steps {
		if s.name == name {
			return s.err
		}
	}
	t.Fatalf("no step %q", name)
	return nil
}

type testKey struct {
	name      string
	kid       string
	seed      []byte
	priv      ed25519.PrivateKey
	published bool
}

// newTestKey makes a vector key. Its seed is published with the vectors,
// so its kid says so: no one can take it for a deployment's key (whose
// kids are pcaw_<yyyymmdd>_…) and trust it.
func newTestKey(name string, published bool) testKey {
	seed := sha256.Sum256([]byte("pcourt award vectors " + name))
	return testKey{
		name:      name,
		kid:       "award-vector-key-" + strings.ToLower(name) + ".seed-is-public.not-a-real-key",
		seed:      seed[:],
		priv:      ed25519.NewKeyFromSeed(seed[:]),
		published: published,
	}
}

var b64 = base64.RawURLEncoding

// jws builds an attestation by hand from any header and signature: the
// vectors need what Sign refuses to make.
func jws(header string, sig []byte) string {
	return b64.EncodeToString([]byte(header)) + ".." + b64.EncodeToString(sig)
}

// edSign signs payload under header with k, the way Sign does but without
// its checks.
func edSign(k testKey, header string, payload []byte) string {
	h := b64.EncodeToString([]byte(header))
	return h + ".." + b64.EncodeToString(ed25519.Sign(k.priv, []byte(h+"."+b64.EncodeToString(payload))))
}

func headerOf(kid string) string { return `{"alg":"EdDSA","kid":"` + kid + `"}` }

// buildVectors makes the vectors file. Everything in it is deterministic.
func buildVectors(t testing.TB) vectorsFile {
	t.Helper()
	// Key B is the older key, no longer current but still published; key
	// A the current one; key C was never published.
	keyA, keyB, keyC := newTestKey("A", true), newTestKey("B", true), newTestKey("C", false)
	awardBytes := mustBytes(t, sampleAward())
	signedA, err := award.Sign(keyA.priv, keyA.kid, awardBytes)
	require.NoError(t, err)
	signedB, err := award.Sign(keyB.priv, keyB.kid, awardBytes)
	require.NoError(t, err)
	signedC, err := award.Sign(keyC.priv, keyC.kid, awardBytes)
	require.NoError(t, err)

	var vs []vector
	add := func(name, desc string, awardBytes []byte, attestation, expect, reason string) {
		head, _, _ := strings.Cut(attestation, ".")
		header, _ := b64.DecodeString(head)
		v := vector{
			Name: name, Description: desc,
			Award: string(awardBytes), AwardBase64: base64.StdEncoding.EncodeToString(awardBytes),
			Attestation: attestation, Header: string(header), Expect: expect, Reason: reason,
		}
		if expect == "accept" {
			v.AwardHash = award.Hash(awardBytes)
			var h struct{ Kid string }
			require.NoError(t, json.Unmarshal(header, &h))
			v.KeyID = h.Kid
		}
		vs = append(vs, v)
	}
	accept := func(name, desc string, b []byte, att string) { add(name, desc, b, att, "accept", "") }
	refuse := func(name, desc, reason string, b []byte, att string) { add(name, desc, b, att, "refuse", reason) }

	accept("accept_current_key", "An award signed by key A, the current key.", awardBytes, signedA)
	accept("accept_older_key", "The same award signed by key B, an older key that is no longer current but stays published: every award ever issued verifies forever.", awardBytes, signedB)
	consentBytes := mustBytes(t, sampleConsentAward())
	signedConsent, err := award.Sign(keyA.priv, keyA.kid, consentBytes)
	require.NoError(t, err)
	accept("accept_consent_award", "A consent award (outcome settled_by_consent) signed by key A: the sides' settlement recorded by the reviewer, with no adjudicator; its settlement.termsDigest is the SHA-256 of the RFC 8785 bytes of {remedies, text} of its own remedies and settlement text.", consentBytes, signedConsent)

	refuse("attached_payload", "Key A's attestation with the award's bytes put in the middle part (a JWS with an attached payload).", "attestation_format",
		awardBytes, strings.Replace(signedA, "..", "."+b64.EncodeToString(awardBytes)+".", 1))
	refuse("two_parts", "Key A's attestation as header.signature, without the empty middle part.", "attestation_format",
		awardBytes, strings.Replace(signedA, "..", ".", 1))
	hs256 := headerOf(keyA.kid)
	hs256 = strings.Replace(hs256, "EdDSA", "HS256", 1)
	h := b64.EncodeToString([]byte(hs256))
	mac := hmac.New(sha256.New, keyA.priv.Public().(ed25519.PublicKey))
	mac.Write([]byte(h + "." + b64.EncodeToString(awardBytes)))
	refuse("alg_hs256", "alg HS256 with an HMAC keyed with key A's public key (the algorithm confusion attack).", "header",
		awardBytes, jws(hs256, mac.Sum(nil)))
	refuse("alg_none", "alg none, with key A's Ed25519 signature over the signing input of that header.", "header",
		awardBytes, edSign(keyA, `{"alg":"none","kid":"`+keyA.kid+`"}`, awardBytes))
	refuse("b64_false", "An unencoded payload (RFC 7797: b64 false, crit b64), signed by key A over header.payload with the raw bytes.", "header",
		awardBytes, func() string {
			header := `{"alg":"EdDSA","b64":false,"crit":["b64"],"kid":"` + keyA.kid + `"}`
			h := b64.EncodeToString([]byte(header))
			return h + ".." + b64.EncodeToString(ed25519.Sign(keyA.priv, append([]byte(h+"."), awardBytes...)))
		}())
	refuse("header_extra_member", "A typ member besides alg and kid, signed by key A.", "header",
		awardBytes, edSign(keyA, `{"alg":"EdDSA","kid":"`+keyA.kid+`","typ":"JOSE"}`, awardBytes))
	refuse("key_not_in_set", "Signed by key C, whose kid is not in the JWK set.", "unknown_key",
		awardBytes, signedC)
	refuse("wrong_kid", "Signed by key A but naming key B's kid.", "bad_signature",
		awardBytes, edSign(keyA, headerOf(keyB.kid), awardBytes))
	tampered := bytes.Replace(awardBytes, []byte(`"amountMinor":4250`), []byte(`"amountMinor":9250`), 1)
	require.NotEqual(t, awardBytes, tampered)
	refuse("tampered_byte", "Key A's attestation of the award, with one byte of the award changed (amountMinor 4250 to 9250; still canonical).", "bad_signature",
		tampered, signedA)
	refuse("bytes_reformatted", "Key A's attestation of the award, with the award re-indented (same JSON value, other bytes).", "bad_signature",
		indent(t, awardBytes), signedA)
	refuse("non_canonical", "The award re-indented and signed by key A as it is: the signature holds, the bytes are not RFC 8785 canonical.", "not_canonical",
		indent(t, awardBytes), edSign(keyA, headerOf(keyA.kid), indent(t, awardBytes)))
	otherSchema := bytes.Replace(awardBytes, []byte(`"schemaVersion":"pc-award-v1"`), []byte(`"schemaVersion":"pc-award-v2"`), 1)
	refuse("schema_version", "Canonical bytes with schemaVersion pc-award-v2, signed by key A.", "document",
		otherSchema, edSign(keyA, headerOf(keyA.kid), otherSchema))
	nullList := bytes.Replace(awardBytes, []byte(`"tools":[]`), []byte(`"tools":null`), 1)
	refuse("null_list", "Canonical bytes with null where a list belongs (tribunal.configuration.tools), signed by key A.", "document",
		nullList, edSign(keyA, headerOf(keyA.kid), nullList))

	otherTerms := bytes.Replace(consentBytes, []byte(`"amountMinor":2500`), []byte(`"amountMinor":2600`), 1)
	require.NotEqual(t, consentBytes, otherTerms)
	refuse("consent_terms_mismatch", "The consent award with its payment raised from 2500 to 2600 and signed by key A as it is: the signature holds, but settlement.termsDigest is no longer the digest of the award's remedies and text.", "document",
		otherTerms, edSign(keyA, headerOf(keyA.kid), otherTerms))

	f := vectorsFile{
		Description: "Test vectors of award attestations: compact JWS with a detached payload (RFC 7515 appendix F), EdDSA over Ed25519 (RFC 8037). " +
			"For each vector, verify the award's exact bytes (awardBase64) and its attestation against jwks, following the steps in order (docs/awards.md, \"Verifying an award\"); " +
			"an accepted vector must verify with its awardHash (the lowercase hex SHA-256 of the bytes) and keyId, a refused one must fail at the named step. " +
			"The keys' seeds are published here on purpose: never trust them outside tests. " +
			"Generated by libs/award (go test -run TestVectors -update).",
		Vectors: vs,
	}
	for _, s := range steps {
		f.Steps = append(f.Steps, s.name)
	}
	for _, k := range []testKey{keyA, keyB, keyC} {
		pub := k.priv.Public().(ed25519.PublicKey)
		f.Keys = append(f.Keys, vectorKey{Name: k.name, KeyID: k.kid, SeedHex: hex.EncodeToString(k.seed), PublicKeyHex: hex.EncodeToString(pub), Published: k.published})
	}
	// The older key last: a set lists keys in no meaningful order.
	f.JWKS.Keys = []jwk.JWK{
		jwk.NewJWK(keyA.kid, keyA.priv.Public().(ed25519.PublicKey)),
		jwk.NewJWK(keyB.kid, keyB.priv.Public().(ed25519.PublicKey)),
	}
	return f
}

func indent(t testing.TB, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	require.NoError(t, json.Indent(&buf, b, "", "  "))
	return buf.Bytes()
}

func encodeVectors(t testing.TB, f vectorsFile) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	require.NoError(t, enc.Encode(f))
	return buf.Bytes()
}

func loadVectors(t testing.TB) vectorsFile {
	t.Helper()
	data, err := os.ReadFile(vectorsPath)
	require.NoError(t, err)
	var f vectorsFile
	require.NoError(t, json.Unmarshal(data, &f))
	return f
}

// TestVectors rewrites testdata/vectors.json with -update; otherwise it
// checks that the file is what the generator makes (the published vectors
// never drift from the code), then verifies every vector: accepted ones
// verify to their awardHash and kid, refused ones fail at exactly the
// named step.
func TestVectors(t *testing.T) {
	want := encodeVectors(t, buildVectors(t))
	if *update {
		require.NoError(t, os.WriteFile(vectorsPath, want, 0o644))
	}
	got, err := os.ReadFile(vectorsPath)
	require.NoError(t, err)
	require.Equal(t, string(want), string(got), "%s is stale: run go test -run TestVectors -update", vectorsPath)

	f := loadVectors(t)
	set, err := json.Marshal(f.JWKS)
	require.NoError(t, err)
	seen := map[string]bool{}
	reasons := map[string]bool{}
	for _, v := range f.Vectors {
		t.Run(v.Name, func(t *testing.T) {
			require.False(t, seen[v.Name], "vector names are unique")
			seen[v.Name] = true
			b, err := base64.StdEncoding.DecodeString(v.AwardBase64)
			require.NoError(t, err)
			require.Equal(t, v.Award, string(b), "award and awardBase64 agree")

			got, err := award.Verify(b, v.Attestation, set)
			switch v.Expect {
			case "accept":
				require.NoError(t, err)
				require.Equal(t, v.AwardHash, got.AwardHash)
				require.Equal(t, v.KeyID, got.KeyID)
			case "refuse":
				require.ErrorIs(t, err, stepError(t, v.Reason))
				for _, s := range steps {
					if s.name != v.Reason {
						require.NotErrorIs(t, err, s.err, "fails at %s only", v.Reason)
					}
				}
				reasons[v.Reason] = true
			default:
				t.Fatalf("expect %q", v.Expect)
			}
		})
	}
	for _, s := range steps {
		require.True(t, reasons[s.name], "no vector fails at %s", s.name)
	}
}

// TestDocsWorkedExample keeps docs/awards.md equal to the vectors: the
// steps in the order Verify checks them, and the first vector's header,
// attestation, key and awardHash.
func TestDocsWorkedExample(t *testing.T) {
	doc, err := os.ReadFile("../../docs/awards.md")
	if err != nil {
		t.Skipf("docs/awards.md is not beside this module (outside a full checkout): %v", err)
	}
	text := string(doc)
	at := 0
	for i, s := range steps {
		j := strings.Index(text, fmt.Sprintf("%d. **`%s`**", i+1, s.name))
		require.Greater(t, j, at, "step %d, %s, in its place", i+1, s.name)
		at = j
	}
	f := loadVectors(t)
	v := f.Vectors[0]
	require.Equal(t, "accept_current_key", v.Name)
	for _, want := range []string{
		"\n" + v.Header + "\n",
		"\n" + v.Attestation + "\n",
		"`" + f.JWKS.Keys[0].X + "`",
		"`" + v.AwardHash + "`",
		fmt.Sprintf("award's %d bytes", len(v.Award)),
	} {
		require.True(t, strings.Contains(text, want), "docs/awards.md lacks %q", want)
	}
}

package signature_test

import (
	"crypto/ed25519"
	"crypto/sha256"
	"net/http"
	"testing"
	"time"

	"github.com/pcourt/pcourt/libs/webhook/signature"
)

// FuzzVerify feeds arbitrary header values and bodies to Verify: it never
// panics, always names a known reason when it refuses, and accepts only what
// the key really signed.
func FuzzVerify(f *testing.F) {
	seed := sha256.Sum256([]byte("fuzz"))
	priv := ed25519.NewKeyFromSeed(seed[:])
	s, err := signature.NewSigner("pcwh_sandbox_fuzz", priv)
	if err != nil {
		f.Fatal(err)
	}
	keys := signature.KeySet{s.KeyID(): s.PublicKey()}
	now := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	body := []byte(caseEvent("evt_1", signature.SchemaVersion, 1))
	h, err := s.Sign(body, "evt_1", signature.Recipient{EndpointID: "we_fuzz"}, now)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(body, h.ContentDigest, h.EventID, h.EventTimestamp, h.KeyID, h.Signature, h.EndpointID, h.Test)
	f.Add([]byte(`{"eventId":"a","eventId":"a"}`), "sha-256=::", "", "2026-02-30T00:00:00.000Z", "k", "ed25519=:==:", "we_other", "True")
	known := map[signature.Reason]bool{}
	for _, r := range signature.Reasons() {
		known[r] = true
	}
	f.Fuzz(func(t *testing.T, body []byte, digest, eventID, ts, keyID, sig, endpointID, test string) {
		hdr := signature.Headers{
			ContentDigest: digest, EventID: eventID, EventTimestamp: ts, KeyID: keyID,
			SchemaVersion: signature.SchemaVersion, SignatureVersion: signature.SignatureVersion, Signature: sig,
			EndpointID: endpointID, Test: test,
		}.HTTPHeader()
		got, err := signature.Verify(hdr, body, "we_fuzz", keys.Lookup, now, 0)
		if err != nil {
			if !known[signature.ReasonOf(err)] {
				t.Fatalf("refusal without a known reason: %v", err)
			}
			return
		}
		if got.EventID != eventID || got.KeyID != keyID || got.EndpointID != "we_fuzz" || endpointID != "we_fuzz" {
			t.Fatalf("verified %+v from headers %v", got, hdr)
		}
		in := signature.CanonicalInput(eventID, ts, keyID, endpointID, test, digest)
		if !ed25519.Verify(s.PublicKey(), in, mustSig(t, sig)) {
			t.Fatalf("accepted a signature that does not verify")
		}
	})
}

func mustSig(t *testing.T, header string) []byte {
	t.Helper()
	b := mustB64(header[len("ed25519=:") : len(header)-1])
	return b
}

// TestVerifyMatchesHeaderNamesCaseInsensitively covers headers built by
// hand, with names net/http would not have canonicalized.
func TestVerifyMatchesHeaderNamesCaseInsensitively(t *testing.T) {
	f := loadVectors(t)
	keys, err := signature.ParseJWKS(mustJSON(t, f.JWKS))
	if err != nil {
		t.Fatal(err)
	}
	v := f.Vectors[0]
	hdr := http.Header{}
	for _, kv := range v.Headers {
		hdr[kv[0]] = []string{kv[1]} // lower-case keys, as another stack might build them
	}
	now, _ := signature.ParseTimestamp(v.Now)
	if _, err := signature.Verify(hdr, []byte(v.Body), f.EndpointID, keys.Lookup, now, 0); err != nil {
		t.Fatal(err)
	}
	hdr.Add(signature.HeaderEventID, v.Headers[1][1]) // a second line under the canonical name
	if _, err := signature.Verify(hdr, []byte(v.Body), f.EndpointID, keys.Lookup, now, 0); signature.ReasonOf(err) != signature.ReasonHeaderFormat {
		t.Fatalf("two lines under two spellings of one name: %v", err)
	}
}

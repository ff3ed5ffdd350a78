package award_test

// This file imports nothing of libs/award or libs/jwk: it verifies the
// published vectors by following the steps of docs/awards.md with the
// standard library's Ed25519, base64 and SHA-256 only (encoding/json reads
// the vectors file and the JWK set), to show that the documented steps are
// enough to write a verifier. Step 5 (the bytes are RFC 8785 canonical)
// needs an RFC 8785 library and is left out here; step 6 is reading the
// document.

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
)

var kidForm = regexp.MustCompile(`^[A-Za-z0-9._:-]{1,160}$`)

// verifyByTheDocs returns the awardHash and kid of a verified award, or
// the name of the step that refused it.
func verifyByTheDocs(award []byte, attestation string, jwks []byte) (awardHash, kid string, err error) {
	b64 := base64.RawURLEncoding.Strict()
	// 1. Three parts, the middle one empty.
	parts := strings.Split(attestation, ".")
	if len(parts) != 3 || parts[0] == "" || parts[1] != "" || parts[2] == "" {
		return "", "", errors.New("attestation_format")
	}
	// 2. The header is exactly {"alg":"EdDSA","kid":"<kid>"}.
	header, err := b64.DecodeString(parts[0])
	if err != nil {
		return "", "", errors.New("header")
	}
	kid, ok := strings.CutPrefix(string(header), `{"alg":"EdDSA","kid":"`)
	kid, ok2 := strings.CutSuffix(kid, `"}`)
	if !ok || !ok2 || !kidForm.MatchString(kid) {
		return "", "", errors.New("header")
	}
	// 3. The JWK set holds the kid: an OKP Ed25519 key, x 32 bytes.
	var set struct {
		Keys []struct{ Kty, Crv, X, Kid string }
	}
	if err := json.Unmarshal(jwks, &set); err != nil {
		return "", "", fmt.Errorf("key set: %v", err)
	}
	var pub ed25519.PublicKey
	for _, k := range set.Keys {
		if k.Kid != kid {
			continue
		}
		x, err := b64.DecodeString(k.X)
		if k.Kty != "OKP" || k.Crv != "Ed25519" || err != nil || len(x) != ed25519.PublicKeySize {
			return "", "", errors.New("key set: not an Ed25519 key")
		}
		pub = x
	}
	if pub == nil {
		return "", "", errors.New("unknown_key")
	}
	// 4. The signature verifies over BASE64URL(header) "." BASE64URL(award).
	sig, err := b64.DecodeString(parts[2])
	if err != nil || len(sig) != ed25519.SignatureSize {
		return "", "", errors.New("bad_signature")
	}
	input := parts[0] + "." + base64.RawURLEncoding.EncodeToString(award)
	if !ed25519.Verify(pub, []byte(input), sig) {
		return "", "", errors.New("bad_signature")
	}
	// The awardHash: SHA-256 of exactly the bytes, lowercase hex.
	return fmt.Sprintf("%x", sha256.Sum256(award)), kid, nil
}

func TestVectorsVerifyByTheDocsAlone(t *testing.T) {
	data, err := os.ReadFile("testdata/vectors.json")
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		JWKS    json.RawMessage
		Vectors []struct {
			Name, AwardBase64, Attestation, Expect, AwardHash, KeyID, Reason string
		}
	}
	if err := json.Unmarshal(data, &f); err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, v := range f.Vectors {
		award, err := base64.StdEncoding.DecodeString(v.AwardBase64)
		if err != nil {
			t.Fatal(err)
		}
		hash, kid, err := verifyByTheDocs(award, v.Attestation, f.JWKS)
		switch {
		case v.Expect == "accept":
			if err != nil || hash != v.AwardHash || kid != v.KeyID {
				t.Errorf("%s: got %s %s %v, want %s %s", v.Name, hash, kid, err, v.AwardHash, v.KeyID)
			}
			checked++
		case v.Reason == "not_canonical" || v.Reason == "document":
			// Steps 5 and 6 read the bytes; this check stops at step 4.
			if err != nil {
				t.Errorf("%s: refused at %v before the bytes are read", v.Name, err)
			}
		default:
			if err == nil || err.Error() != v.Reason {
				t.Errorf("%s: got %v, want %s", v.Name, err, v.Reason)
			}
			checked++
		}
	}
	if checked < 2 {
		t.Fatalf("only %d vectors checked", checked)
	}
}

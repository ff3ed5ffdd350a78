package award

import (
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/pcourt/pcourt/libs/jwk"
)

// An award's attestation is a compact JWS with a detached payload (RFC 7515
// appendix F), signed with EdDSA over Ed25519 (RFC 8037):
//
//	BASE64URL(header) + ".." + BASE64URL(signature)
//
// The protected header is exactly the canonical JSON
// {"alg":"EdDSA","kid":"<kid>"}; the signing input is
// BASE64URL(header) + "." + BASE64URL(award bytes); base64url is without
// padding. The payload, the award's bytes, travels apart: it is the json
// artifact itself.

// The errors of Verify, one per step, in the order Verify checks them.
// Each refusal wraps exactly one of them (errors.Is).
var (
	// ErrAttestationFormat: the attestation is not three parts separated
	// by dots with an empty middle one (a detached payload) and non-empty
	// outer ones. An attestation carrying its payload is refused: the
	// award's bytes are the json artifact, not a copy inside the JWS.
	ErrAttestationFormat = errors.New("award attestation is not a compact JWS with a detached payload")
	// ErrHeader: the protected header is not base64url without padding of
	// exactly {"alg":"EdDSA","kid":"<kid>"}, kid being 1 to 160 of
	// A-Z a-z 0-9 . _ : -. Any other alg (none, HS256, …), crit, b64 or
	// other member, and any other spelling of the JSON, is refused.
	ErrHeader = errors.New("award attestation header is not exactly {\"alg\":\"EdDSA\",\"kid\":…}")
	// ErrUnknownKey: the JWK set does not hold the header's kid. A set that
	// does not parse fails at this step too, with an error wrapping
	// jwk.ErrKeySet instead.
	ErrUnknownKey = errors.New("award signing key is not in the JWK set")
	// ErrBadSignature: the signature part is not base64url without padding
	// of 64 bytes, or does not verify with the kid's key over the signing
	// input.
	ErrBadSignature = errors.New("award signature does not verify")
	// ErrNotCanonical: the award's bytes are not RFC 8785 canonical JSON
	// (canonicalising them gives other bytes, or they are not I-JSON).
	ErrNotCanonical = errors.New("award bytes are not RFC 8785 canonical JSON")
	// ErrDocument: the bytes are not exactly an award document of
	// SchemaAward: a member missing, unknown or of the wrong type, or null
	// where a list belongs (decoding and writing them again with
	// Document.Bytes must give the same bytes).
	ErrDocument = errors.New("award bytes are not a pc-award-v1 document")
)

// algEdDSA is the header's only alg.
const algEdDSA = "EdDSA"

var b64 = base64.RawURLEncoding

// header returns the protected header of kid: its canonical JSON. A valid
// kid needs no escaping, so the bytes are fixed but for the kid.
func header(kid string) []byte {
	return []byte(`{"alg":"` + algEdDSA + `","kid":"` + kid + `"}`)
}

// Sign returns the attestation of an award's bytes: a compact JWS with a
// detached payload, signed with priv under kid. Ed25519 is deterministic:
// the same key and bytes always give the same attestation.
//
// Sign refuses to sign what every verifier would refuse: a kid that is not
// 1 to 160 of A-Z a-z 0-9 . _ : -, a kid of the form KeyID makes that does
// not name priv's public key, and bytes that are not a canonical award
// document (see Verify's last two steps).
func Sign(priv ed25519.PrivateKey, kid string, award []byte) (string, error) {
	if _, err := decodeDocument(award); err != nil {
		return "", fmt.Errorf("signing an award: %w", err)
	}
	return SignDetached(priv, kid, award)
}

// SignDetached signs any payload the award keys attest (an award's bytes,
// once Sign checked them; a record bundle's manifest) in the award's JWS
// form; VerifyDetached checks it.
func SignDetached(priv ed25519.PrivateKey, kid string, payload []byte) (string, error) {
	if len(priv) != ed25519.PrivateKeySize {
		return "", fmt.Errorf("signing: want an Ed25519 private key of %d bytes, got %d", ed25519.PrivateKeySize, len(priv))
	}
	if !jwk.ValidKeyID(kid) {
		return "", fmt.Errorf("signing: kid %q: want 1 to 160 of A-Z a-z 0-9 . _ : -", kid)
	}
	if p, err := ParseKeyID(kid); err == nil && !p.Matches(priv.Public().(ed25519.PublicKey)) {
		return "", fmt.Errorf("signing: kid %s names another key", kid)
	}
	h := b64.EncodeToString(header(kid))
	sig := ed25519.Sign(priv, signingInput(h, payload))
	return h + ".." + b64.EncodeToString(sig), nil
}

// signingInput returns ASCII(BASE64URL(header) + "." + BASE64URL(payload)).
func signingInput(encodedHeader string, payload []byte) []byte {
	in := make([]byte, 0, len(encodedHeader)+1+b64.EncodedLen(len(payload)))
	in = append(in, encodedHeader...)
	in = append(in, '.')
	return b64.AppendEncode(in, payload)
}

// Verified is what a successful verification establishes.
type Verified struct {
	// AwardHash is Hash of the award's bytes: the award's identity.
	AwardHash string
	// KeyID is the kid of the key that signed it.
	KeyID string
	// Award is the document the bytes hold.
	Award Document
}

// Verify checks an award offline, with nothing but its bytes (the json
// artifact, exactly as served), its attestation and the published JWK set
// (GET /api/awards/keys, which keeps every key ever used). It checks, in
// this order, and refuses at the first step that fails with an error
// wrapping that step's sentinel:
//
//  1. ErrAttestationFormat: three parts, the middle one empty (detached).
//  2. ErrHeader: the first part decodes to exactly {"alg":"EdDSA","kid":"<kid>"}.
//  3. ErrUnknownKey: the JWK set holds kid (jwk.ErrKeySet if it does not parse).
//  4. ErrBadSignature: the third part is the Ed25519 signature, by kid's
//     key, of BASE64URL(header) + "." + BASE64URL(award bytes).
//  5. ErrNotCanonical: the award bytes are RFC 8785 canonical.
//  6. ErrDocument: they are exactly a Document of SchemaAward.
//
// The signature is checked before the bytes are read as JSON, so nothing
// unsigned is ever parsed as an award.
func Verify(awardBytes []byte, attestation string, jwks []byte) (Verified, error) {
	kid, err := VerifyDetached(awardBytes, attestation, jwks)
	if err != nil {
		return Verified{}, err
	}
	doc, err := decodeDocument(awardBytes)
	if err != nil {
		return Verified{}, err
	}
	return Verified{AwardHash: Hash(awardBytes), KeyID: kid, Award: doc}, nil
}

// VerifyDetached checks steps 1 to 4 of Verify for any payload the award
// keys sign (an award's bytes, a record bundle's manifest) and returns the
// id of the key that signed it.
func VerifyDetached(payload []byte, attestation string, jwks []byte) (string, error) {
	parts := strings.Split(attestation, ".")
	if len(parts) != 3 || parts[1] != "" || parts[0] == "" || parts[2] == "" {
		return "", fmt.Errorf("%w: want BASE64URL(header)..BASE64URL(signature)", ErrAttestationFormat)
	}
	kid, err := parseHeader(parts[0])
	if err != nil {
		return "", err
	}
	keys, err := jwk.ParseJWKS(jwks)
	if err != nil {
		return "", fmt.Errorf("award key set: %w", err)
	}
	pub, err := keys.Lookup(kid)
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrUnknownKey, err)
	}
	sig, err := b64.Strict().DecodeString(parts[2])
	if err != nil || len(sig) != ed25519.SignatureSize || b64.EncodeToString(sig) != parts[2] {
		return "", fmt.Errorf("%w: the signature part is not base64url without padding of %d bytes", ErrBadSignature, ed25519.SignatureSize)
	}
	if !ed25519.Verify(pub, signingInput(parts[0], payload), sig) {
		return "", fmt.Errorf("%w: key %s", ErrBadSignature, kid)
	}
	return kid, nil
}

// parseHeader returns the kid of an encoded protected header that is
// exactly the header Sign writes. The header's bytes are compared whole,
// not parsed and checked member by member: then no parser's way with
// repeated names, case or unknown members can make it say anything else.
func parseHeader(encoded string) (string, error) {
	raw, err := b64.Strict().DecodeString(encoded)
	if err != nil || b64.EncodeToString(raw) != encoded {
		return "", fmt.Errorf("%w: not base64url without padding", ErrHeader)
	}
	kid, ok := strings.CutPrefix(string(raw), `{"alg":"`+algEdDSA+`","kid":"`)
	if ok {
		kid, ok = strings.CutSuffix(kid, `"}`)
	}
	if ok && jwk.ValidKeyID(kid) {
		return kid, nil
	}
	return "", fmt.Errorf("%w: %s", ErrHeader, describeHeader(raw))
}

// describeHeader says what is wrong with a refused header, for the error.
func describeHeader(raw []byte) string {
	var h map[string]any
	if err := json.Unmarshal(raw, &h); err != nil {
		return "not a JSON object"
	}
	if alg, ok := h["alg"]; !ok || alg != algEdDSA {
		return fmt.Sprintf("alg %v, want %s", alg, algEdDSA)
	}
	var others []string
	for name := range h {
		if name != "alg" && name != "kid" {
			others = append(others, name)
		}
	}
	if len(others) > 0 {
		slices.Sort(others)
		return fmt.Sprintf("members %q: want alg and kid only", others)
	}
	if kid, ok := h["kid"].(string); !ok || !jwk.ValidKeyID(kid) {
		return fmt.Sprintf("kid %v: want 1 to 160 of A-Z a-z 0-9 . _ : -", h["kid"])
	}
	return "not the canonical JSON {\"alg\":\"EdDSA\",\"kid\":\"<kid>\"}"
}

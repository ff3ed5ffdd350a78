// Package jwk reads and writes the platform's published verification keys:
// Ed25519 public keys as JSON Web Keys (RFC 7517) of key type OKP (RFC
// 8037), and JWK sets of them. It knows no other key type: every set the
// platform publishes (the webhook keys, the award keys) holds Ed25519
// keys only, so a set holding anything else is the wrong document and is
// refused whole.
//
// A key must have a kid, 1 to 160 of A-Z a-z 0-9 . _ : - (the platform's
// key ids all have this form), unique in its set: verifiers find a key by
// the kid a signature names. Old keys stay in a set after rotation so that
// everything they signed still verifies.
package jwk

import (
	"bytes"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
)

// The values of the members this package writes and accepts.
const (
	KeyTypeOKP = "OKP"
	// CurveEd25519 is the crv of an Ed25519 key (RFC 8037).
	CurveEd25519 = "Ed25519"
	// UseSignature is the only use a key may name.
	UseSignature = "sig"
	// AlgEdDSA is the only alg a key may name (RFC 8037).
	AlgEdDSA = "EdDSA"
	// MaxKeyIDLength is the longest kid.
	MaxKeyIDLength = 160
)

var (
	// ErrKeySet is wrapped by every error of ParseJWKS, MarshalJWKS and
	// JWK.PublicKey: the key or the set is not one this package accepts.
	ErrKeySet = errors.New("invalid JWK set")
	// ErrUnknownKey is wrapped by KeySet.Lookup's error for a kid the set
	// does not hold.
	ErrUnknownKey = errors.New("unknown key id")
)

var kidPattern = regexp.MustCompile(`^[A-Za-z0-9._:-]{1,160}$`)

// ValidKeyID reports whether s may be a kid: 1 to 160 of A-Z a-z 0-9 . _ : -.
func ValidKeyID(s string) bool { return kidPattern.MatchString(s) }

// JWK is the JSON shape of one published Ed25519 verification key.
type JWK struct {
	Kty string `json:"kty"`
	Crv string `json:"crv"`
	// X is the 32-byte public key, base64url without padding.
	X   string `json:"x"`
	Kid string `json:"kid"`
	Use string `json:"use,omitempty"`
	Alg string `json:"alg,omitempty"`
	// D would be the private key: a key holding one is refused, so a set
	// published by mistake with its private parts never verifies anything.
	D string `json:"d,omitempty"`
}

// JWKS is the JSON shape of a published JWK set.
type JWKS struct {
	Keys []JWK `json:"keys"`
}

// NewJWK returns the JWK of pub under kid, with use sig and alg EdDSA.
func NewJWK(kid string, pub ed25519.PublicKey) JWK {
	return JWK{
		Kty: KeyTypeOKP,
		Crv: CurveEd25519,
		X:   base64.RawURLEncoding.EncodeToString(pub),
		Kid: kid,
		Use: UseSignature,
		Alg: AlgEdDSA,
	}
}

// PublicKey checks the JWK strictly and returns its key: a valid kid, kty
// OKP, crv Ed25519, no private part d, use sig and alg EdDSA when present,
// and x the canonical base64url without padding of exactly 32 bytes.
func (k JWK) PublicKey() (ed25519.PublicKey, error) {
	if !ValidKeyID(k.Kid) {
		return nil, fmt.Errorf("%w: kid %q: want 1 to 160 of A-Z a-z 0-9 . _ : -", ErrKeySet, k.Kid)
	}
	if k.Kty != KeyTypeOKP {
		return nil, fmt.Errorf("%w: key %s: kty %q, want %s", ErrKeySet, k.Kid, k.Kty, KeyTypeOKP)
	}
	if k.Crv != CurveEd25519 {
		return nil, fmt.Errorf("%w: key %s: crv %q, want %s", ErrKeySet, k.Kid, k.Crv, CurveEd25519)
	}
	if k.D != "" {
		return nil, fmt.Errorf("%w: key %s: holds a private key", ErrKeySet, k.Kid)
	}
	if k.Use != "" && k.Use != UseSignature {
		return nil, fmt.Errorf("%w: key %s: use %q, want %s", ErrKeySet, k.Kid, k.Use, UseSignature)
	}
	if k.Alg != "" && k.Alg != AlgEdDSA {
		return nil, fmt.Errorf("%w: key %s: alg %q, want %s", ErrKeySet, k.Kid, k.Alg, AlgEdDSA)
	}
	x, err := base64.RawURLEncoding.Strict().DecodeString(k.X)
	if err != nil || len(x) != ed25519.PublicKeySize || base64.RawURLEncoding.EncodeToString(x) != k.X {
		return nil, fmt.Errorf("%w: key %s: x must be base64url without padding of %d bytes", ErrKeySet, k.Kid, ed25519.PublicKeySize)
	}
	return ed25519.PublicKey(x), nil
}

// KeySet is a set of verification keys by kid.
type KeySet map[string]ed25519.PublicKey

// Lookup returns the key of kid, or an error wrapping ErrUnknownKey.
func (s KeySet) Lookup(kid string) (ed25519.PublicKey, error) {
	k, ok := s[kid]
	if !ok {
		return nil, fmt.Errorf("%w: %q", ErrUnknownKey, kid)
	}
	return k, nil
}

// ParseJWKS parses a published JWK set strictly: one JSON object with a
// keys array, every key valid (see JWK.PublicKey), no kid twice, and no
// object repeating a member name (two parsers taking different copies of
// a repeated kid or x would map ids to keys differently). Member names
// match exactly; members this package does not know are ignored, as RFC
// 7517 asks. One bad key refuses the whole set.
func ParseJWKS(data []byte) (KeySet, error) {
	doc, err := members(data)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrKeySet, err)
	}
	rawKeys, ok := doc["keys"]
	if !ok {
		return nil, fmt.Errorf("%w: no keys member", ErrKeySet)
	}
	var keys []json.RawMessage
	if err := json.Unmarshal(rawKeys, &keys); err != nil || keys == nil {
		return nil, fmt.Errorf("%w: keys is not an array", ErrKeySet)
	}
	set := make(KeySet, len(keys))
	for i, raw := range keys {
		k, err := decodeJWK(raw)
		if err != nil {
			return nil, fmt.Errorf("%w: key %d: %v", ErrKeySet, i, err)
		}
		pub, err := k.PublicKey()
		if err != nil {
			return nil, err
		}
		if _, dup := set[k.Kid]; dup {
			return nil, fmt.Errorf("%w: kid %s appears twice", ErrKeySet, k.Kid)
		}
		set[k.Kid] = pub
	}
	return set, nil
}

// MarshalJWKS returns the JSON of a set holding keys, in the given order.
// It refuses a set ParseJWKS would refuse.
func MarshalJWKS(keys ...JWK) ([]byte, error) {
	if keys == nil {
		keys = []JWK{}
	}
	seen := make(map[string]bool, len(keys))
	for _, k := range keys {
		if _, err := k.PublicKey(); err != nil {
			return nil, err
		}
		if seen[k.Kid] {
			return nil, fmt.Errorf("%w: kid %s appears twice", ErrKeySet, k.Kid)
		}
		seen[k.Kid] = true
	}
	return json.Marshal(JWKS{Keys: keys})
}

// decodeJWK reads one key object by its exact member names; each member
// it knows must be a string, and a private member d must be absent (even
// empty).
func decodeJWK(raw json.RawMessage) (JWK, error) {
	m, err := members(raw)
	if err != nil {
		return JWK{}, err
	}
	if _, ok := m["d"]; ok {
		return JWK{}, errors.New("holds a private key (member d)")
	}
	var k JWK
	for _, f := range []struct {
		name string
		dst  *string
	}{{"kty", &k.Kty}, {"crv", &k.Crv}, {"x", &k.X}, {"kid", &k.Kid}, {"use", &k.Use}, {"alg", &k.Alg}} {
		v, ok := m[f.name]
		if !ok {
			continue
		}
		if err := json.Unmarshal(v, f.dst); err != nil || bytes.Equal(v, []byte("null")) {
			return JWK{}, fmt.Errorf("member %s is not a string", f.name)
		}
	}
	return k, nil
}

// members reads data as exactly one JSON object and returns its members,
// refusing a member name that appears twice.
func members(data []byte) (map[string]json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, errors.New("not a JSON object")
	}
	out := map[string]json.RawMessage{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		name := tok.(string) // object keys are always strings
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		if _, dup := out[name]; dup {
			return nil, fmt.Errorf("member %q appears twice", name)
		}
		out[name] = v
	}
	if _, err := dec.Token(); err != nil { // the closing brace
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("data after the JSON object")
	}
	return out, nil
}

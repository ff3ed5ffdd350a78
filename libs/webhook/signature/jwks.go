package signature

import (
	"bytes"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
)

// ErrKeySet is wrapped by the errors of ParseJWKS and JWK.PublicKey.
var ErrKeySet = errors.New("invalid webhook JWKS")

// JWK is the JSON shape of one published Ed25519 verification key (RFC 8037).
type JWK struct {
	Kty string `json:"kty"`
	Crv string `json:"crv"`
	// X is the 32-byte public key, base64url without padding.
	X   string `json:"x"`
	Kid string `json:"kid"`
	Use string `json:"use,omitempty"`
	Alg string `json:"alg,omitempty"`
	// D would be a private key: a published set holding one is refused.
	D string `json:"d,omitempty"`
}

// JWKS is the JSON shape of GET /api/webhooks/keys.
type JWKS struct {
	Keys []JWK `json:"keys"`
}

// NewJWK returns the JWK of pub under keyID.
func NewJWK(keyID string, pub ed25519.PublicKey) JWK {
	return JWK{
		Kty: "OKP",
		Crv: "Ed25519",
		X:   base64.RawURLEncoding.EncodeToString(pub),
		Kid: keyID,
		Use: "sig",
		Alg: "EdDSA",
	}
}

// PublicKey checks the JWK strictly and returns its key: kty OKP, crv
// Ed25519, x canonical base64url without padding of 32 bytes, a valid kid,
// use sig and alg EdDSA when present, and no private part.
func (k JWK) PublicKey() (ed25519.PublicKey, error) {
	if !ValidID(k.Kid) {
		return nil, fmt.Errorf("%w: kid %q: want 1 to 160 of A-Z a-z 0-9 . _ : -", ErrKeySet, k.Kid)
	}
	if k.Kty != "OKP" {
		return nil, fmt.Errorf("%w: key %s: kty %q, want OKP", ErrKeySet, k.Kid, k.Kty)
	}
	if k.Crv != "Ed25519" {
		return nil, fmt.Errorf("%w: key %s: crv %q, want Ed25519", ErrKeySet, k.Kid, k.Crv)
	}
	if k.D != "" {
		return nil, fmt.Errorf("%w: key %s: holds a private key", ErrKeySet, k.Kid)
	}
	if k.Use != "" && k.Use != "sig" {
		return nil, fmt.Errorf("%w: key %s: use %q, want sig", ErrKeySet, k.Kid, k.Use)
	}
	if k.Alg != "" && k.Alg != "EdDSA" {
		return nil, fmt.Errorf("%w: key %s: alg %q, want EdDSA", ErrKeySet, k.Kid, k.Alg)
	}
	x, err := base64.RawURLEncoding.Strict().DecodeString(k.X)
	if err != nil || len(x) != ed25519.PublicKeySize || base64.RawURLEncoding.EncodeToString(x) != k.X {
		return nil, fmt.Errorf("%w: key %s: x must be base64url without padding of %d bytes", ErrKeySet, k.Kid, ed25519.PublicKeySize)
	}
	return ed25519.PublicKey(x), nil
}

// ParseJWKS parses a published key set strictly: a JSON object with a keys
// array, every key valid (see JWK.PublicKey), no kid twice. One bad key
// refuses the whole set: the publisher only ever publishes Ed25519 keys, so a
// different key means the wrong document.
func ParseJWKS(data []byte) (KeySet, error) {
	var doc struct {
		Keys *[]json.RawMessage `json:"keys"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrKeySet, err)
	}
	if doc.Keys == nil {
		return nil, fmt.Errorf("%w: no keys member", ErrKeySet)
	}
	set := make(KeySet, len(*doc.Keys))
	for i, raw := range *doc.Keys {
		var k JWK
		dec := json.NewDecoder(bytes.NewReader(raw))
		if err := dec.Decode(&k); err != nil {
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

// MarshalJWKS returns the JSON of a key set holding keys, in the given order.
func MarshalJWKS(keys ...JWK) ([]byte, error) {
	if keys == nil {
		keys = []JWK{}
	}
	for _, k := range keys {
		if _, err := k.PublicKey(); err != nil {
			return nil, err
		}
	}
	return json.Marshal(JWKS{Keys: keys})
}

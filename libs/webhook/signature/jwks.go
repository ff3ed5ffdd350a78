package signature

import (
	"crypto/ed25519"

	"github.com/pcourt/pcourt/libs/jwk"
)

// The verification keys of GET /api/webhooks/keys are a JWK set of
// Ed25519 keys; package jwk reads and writes them (for awards' keys too).
// These names keep the webhook API as it was.

// ErrKeySet is wrapped by the errors of ParseJWKS and JWK.PublicKey: it is
// jwk.ErrKeySet.
var ErrKeySet = jwk.ErrKeySet

// JWK is the JSON shape of one published Ed25519 verification key (RFC 8037).
type JWK = jwk.JWK

// JWKS is the JSON shape of GET /api/webhooks/keys.
type JWKS = jwk.JWKS

// KeySet is a set of verification keys by key id. Its Lookup method is a
// KeyLookup for Verify, whose error for a key id it does not hold wraps
// ErrUnknownKey.
type KeySet = jwk.KeySet

// NewJWK returns the JWK of pub under keyID.
func NewJWK(keyID string, pub ed25519.PublicKey) JWK { return jwk.NewJWK(keyID, pub) }

// ParseJWKS parses a published key set strictly (see jwk.ParseJWKS): one
// bad key refuses the whole set.
func ParseJWKS(data []byte) (KeySet, error) { return jwk.ParseJWKS(data) }

// MarshalJWKS returns the JSON of a key set holding keys, in the given order.
func MarshalJWKS(keys ...JWK) ([]byte, error) { return jwk.MarshalJWKS(keys...) }

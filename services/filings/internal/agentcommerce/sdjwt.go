package agentcommerce

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/big"
	"strings"
)

// SDJWT is an SD-JWT (RFC 9901) after its checks: the issuer-signed JWT's
// header, the claims with every disclosure put in place, and what was
// proven about it.
type SDJWT struct {
	Header map[string]any
	// Claims are the payload with the disclosed claims in place and the
	// _sd, _sd_alg and array-digest entries removed. Numbers are
	// json.Number.
	Claims map[string]any
	// IssuerVerified says the issuer's signature was checked against the
	// JWK the request carried; false when the request carried none.
	IssuerVerified bool
	// KeyBound says a key binding JWT was present and verified with the
	// cnf.jwk of the claims, over this presentation (sd_hash).
	KeyBound bool
}

// ParseSDJWT checks an SD-JWT in compact serialization,
// <issuer-jwt>~<disclosure>~…~<kb-jwt or nothing>, in this order (the
// first failure is returned; field names the request member):
//
//  1. invalid_mandate: not the compact form (no "~", an empty disclosure,
//     as a delegated chain's "~~" has), a part that is not base64url
//     without padding, a JWT that is not three parts, a header that is not
//     a JSON object with a supported alg (ES256, ES384, EdDSA) and a typ
//     (…sd-jwt for the issuer JWT, kb+jwt for the key binding JWT), a
//     payload that is not a JSON object, an _sd_alg other than sha-256, a
//     disclosure that is not [salt, name, value] or [salt, value];
//  2. mandate_digest_mismatch: a disclosure whose digest no _sd entry or
//     array element of the payload (or of another disclosure) references,
//     a digest referenced twice, or a key binding JWT whose sd_hash is not
//     the digest of the presentation;
//  3. mandate_signature_invalid: the issuer signature does not verify with
//     issuer (when given), or the key binding JWT's does not verify with
//     the claims' cnf.jwk.
//
// A key binding JWT needs cnf.jwk in the claims (invalid_mandate without).
func ParseSDJWT(field, compact string, issuer *JWK) (SDJWT, error) {
	bad := func(format string, args ...any) (SDJWT, error) {
		return SDJWT{}, refuse(CodeInvalidMandate, field, format, args...)
	}
	parts := strings.Split(compact, "~")
	if len(parts) < 2 {
		return bad("is not an SD-JWT in compact form: <issuer-jwt>~<disclosures>~<key binding jwt>")
	}
	issuerJWT, disclosures, kbJWT := parts[0], parts[1:len(parts)-1], parts[len(parts)-1]
	header, payload, err := decodeJWT(issuerJWT)
	if err != nil {
		return bad("issuer JWT: %v", err)
	}
	if typ, _ := header["typ"].(string); !strings.HasSuffix(strings.ToLower(typ), "sd-jwt") {
		return bad("issuer JWT: header typ must name an SD-JWT (…+sd-jwt), not %q", clip(typ))
	}
	if alg, present := payload["_sd_alg"]; present && alg != "sha-256" {
		return bad("_sd_alg must be sha-256 (the only hash this service computes), not %v", alg)
	}
	byDigest := map[string][]any{}
	for i, d := range disclosures {
		if d == "" {
			return bad("disclosure %d is empty: a delegated mandate chain (\"~~\") is not accepted, present the closed mandate as one SD-JWT", i)
		}
		raw, err := b64(d)
		if err != nil {
			return bad("disclosure %d: %v", i, err)
		}
		var arr []any
		if err := decodeJSON(raw, &arr); err != nil || (len(arr) != 2 && len(arr) != 3) {
			return bad("disclosure %d is not a JSON array [salt, name, value] or [salt, value]", i)
		}
		if _, ok := arr[0].(string); !ok {
			return bad("disclosure %d: the salt must be a string", i)
		}
		if len(arr) == 3 {
			name, ok := arr[1].(string)
			if !ok || name == "_sd" || name == "..." || name == "_sd_alg" {
				return bad("disclosure %d: the claim name must be a string other than _sd, ... and _sd_alg", i)
			}
		}
		digest := digestOf(d)
		if _, dup := byDigest[digest]; dup {
			return SDJWT{}, refuse(CodeDigestMismatch, field, "disclosure %d repeats another disclosure", i)
		}
		byDigest[digest] = arr
	}
	used := map[string]bool{}
	claims, err := disclose(payload, byDigest, used)
	if err != nil {
		return SDJWT{}, refuse(CodeDigestMismatch, field, "%v", err)
	}
	for digest := range byDigest {
		if !used[digest] {
			return SDJWT{}, refuse(CodeDigestMismatch, field, "disclosure with digest %s is not referenced by any _sd entry: it was not issued with this JWT", digest)
		}
	}
	out := SDJWT{Header: header, Claims: claims.(map[string]any)}
	if issuer != nil {
		if err := verifyJWS(issuerJWT, header, *issuer); err != nil {
			return SDJWT{}, refuse(CodeSignatureInvalid, field, "issuer signature: %v", err)
		}
		out.IssuerVerified = true
	}
	if kbJWT != "" {
		if err := checkKeyBinding(field, compact[:len(compact)-len(kbJWT)], kbJWT, out.Claims); err != nil {
			return SDJWT{}, err
		}
		out.KeyBound = true
	}
	return out, nil
}

// checkKeyBinding verifies the key binding JWT kb of presentation (the
// SD-JWT up to and including the last "~"): its header, its sd_hash and
// its signature under the claims' cnf.jwk.
func checkKeyBinding(field, presentation, kb string, claims map[string]any) error {
	header, payload, err := decodeJWT(kb)
	if err != nil {
		return refuse(CodeInvalidMandate, field, "key binding JWT: %v", err)
	}
	if typ, _ := header["typ"].(string); typ != "kb+jwt" {
		return refuse(CodeInvalidMandate, field, "key binding JWT: header typ must be kb+jwt, not %q", clip(typ))
	}
	if _, ok := payload["iat"].(json.Number); !ok {
		return refuse(CodeInvalidMandate, field, "key binding JWT: iat must be a number")
	}
	for _, member := range []string{"aud", "nonce", "sd_hash"} {
		if s, ok := payload[member].(string); !ok || s == "" {
			return refuse(CodeInvalidMandate, field, "key binding JWT: %s must be a non-empty string", member)
		}
	}
	if payload["sd_hash"] != digestOf(presentation) {
		return refuse(CodeDigestMismatch, field, "key binding JWT: sd_hash is not the SHA-256 of the presented SD-JWT")
	}
	cnf, _ := claims["cnf"].(map[string]any)
	jwkRaw, ok := cnf["jwk"].(map[string]any)
	if !ok {
		return refuse(CodeInvalidMandate, field, "a key binding JWT needs the holder's key in the claims' cnf.jwk")
	}
	key, err := jwkFromMap(jwkRaw)
	if err != nil {
		return refuse(CodeInvalidMandate, field, "cnf.jwk: %v", err)
	}
	if err := verifyJWS(kb, header, key); err != nil {
		return refuse(CodeSignatureInvalid, field, "key binding JWT: %v", err)
	}
	return nil
}

// disclose walks v, replacing each _sd digest with its claim and each
// {"...": digest} array element with its value, recursively (a disclosed
// value may hold digests of its own). An array element whose digest has
// no disclosure is left out, as the holder chose not to disclose it.
func disclose(v any, byDigest map[string][]any, used map[string]bool) (any, error) {
	switch t := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, val := range t {
			if k == "_sd" || k == "_sd_alg" {
				continue
			}
			next, err := disclose(val, byDigest, used)
			if err != nil {
				return nil, err
			}
			out[k] = next
		}
		sd, present := t["_sd"]
		if !present {
			return out, nil
		}
		digests, ok := sd.([]any)
		if !ok {
			return nil, fmt.Errorf("_sd must be an array of digests")
		}
		for _, dv := range digests {
			digest, ok := dv.(string)
			if !ok {
				return nil, fmt.Errorf("_sd must be an array of digest strings")
			}
			arr, found := byDigest[digest]
			if !found {
				continue // a claim the holder did not disclose
			}
			if used[digest] {
				return nil, fmt.Errorf("digest %s is referenced twice", digest)
			}
			used[digest] = true
			if len(arr) != 3 {
				return nil, fmt.Errorf("digest %s in _sd names an array-element disclosure", digest)
			}
			name := arr[1].(string)
			if _, clash := out[name]; clash {
				return nil, fmt.Errorf("disclosed claim %q is also in the payload", name)
			}
			val, err := disclose(arr[2], byDigest, used)
			if err != nil {
				return nil, err
			}
			out[name] = val
		}
		return out, nil
	case []any:
		out := []any{}
		for _, el := range t {
			if m, ok := el.(map[string]any); ok && len(m) == 1 {
				if dv, ok := m["..."]; ok {
					digest, _ := dv.(string)
					arr, found := byDigest[digest]
					if !found {
						continue
					}
					if used[digest] {
						return nil, fmt.Errorf("digest %s is referenced twice", digest)
					}
					used[digest] = true
					if len(arr) != 2 {
						return nil, fmt.Errorf("digest %s in an array names an object-property disclosure", digest)
					}
					val, err := disclose(arr[1], byDigest, used)
					if err != nil {
						return nil, err
					}
					out = append(out, val)
					continue
				}
			}
			next, err := disclose(el, byDigest, used)
			if err != nil {
				return nil, err
			}
			out = append(out, next)
		}
		return out, nil
	}
	return v, nil
}

// decodeJWT splits a compact JWS into its header and payload objects.
func decodeJWT(jwt string) (map[string]any, map[string]any, error) {
	segs := strings.Split(jwt, ".")
	if len(segs) != 3 {
		return nil, nil, fmt.Errorf("must be three base64url parts joined by \".\"")
	}
	var header, payload map[string]any
	for i, dst := range []*map[string]any{&header, &payload} {
		raw, err := b64(segs[i])
		if err != nil {
			return nil, nil, err
		}
		if err := decodeJSON(raw, dst); err != nil || *dst == nil {
			return nil, nil, fmt.Errorf("part %d is not a JSON object", i+1)
		}
	}
	if _, err := b64(segs[2]); err != nil || segs[2] == "" {
		return nil, nil, fmt.Errorf("the signature is not base64url")
	}
	alg, _ := header["alg"].(string)
	if _, ok := algorithms[alg]; !ok {
		return nil, nil, fmt.Errorf("header alg must be ES256, ES384 or EdDSA, not %q", clip(alg))
	}
	return header, payload, nil
}

// algorithms are the JWS algorithms verified here, with the key each needs.
var algorithms = map[string]struct{ kty, crv string }{
	"ES256": {"EC", "P-256"},
	"ES384": {"EC", "P-384"},
	"EdDSA": {"OKP", "Ed25519"},
}

// verifyJWS checks jwt's signature over its first two parts with key.
func verifyJWS(jwt string, header map[string]any, key JWK) error {
	alg := header["alg"].(string) // decodeJWT checked it
	want := algorithms[alg]
	if key.Kty != want.kty || key.Crv != want.crv {
		return fmt.Errorf("alg %s needs a %s %s key, the key is %s %s", alg, want.kty, want.crv, clip(key.Kty), clip(key.Crv))
	}
	i := strings.LastIndexByte(jwt, '.')
	signingInput, sig := []byte(jwt[:i]), mustB64(jwt[i+1:])
	switch alg {
	case "EdDSA":
		x, err := b64(key.X)
		if err != nil || len(x) != ed25519.PublicKeySize {
			return fmt.Errorf("the key's x is not a 32-byte Ed25519 key")
		}
		if !ed25519.Verify(ed25519.PublicKey(x), signingInput, sig) {
			return fmt.Errorf("the signature does not verify")
		}
		return nil
	default:
		curve, size := elliptic.P256(), 32
		var digest []byte
		if alg == "ES384" {
			curve, size = elliptic.P384(), 48
			h := sha512.Sum384(signingInput)
			digest = h[:]
		} else {
			h := sha256.Sum256(signingInput)
			digest = h[:]
		}
		x, errX := b64(key.X)
		y, errY := b64(key.Y)
		if errX != nil || errY != nil || len(x) != size || len(y) != size {
			return fmt.Errorf("the key's x and y are not %d-byte coordinates", size)
		}
		pub, err := ecdsa.ParseUncompressedPublicKey(curve, append(append([]byte{4}, x...), y...))
		if err != nil {
			return fmt.Errorf("the key is not a point of %s", key.Crv)
		}
		if len(sig) != 2*size {
			return fmt.Errorf("the signature is not %d bytes (r || s)", 2*size)
		}
		r, s := new(big.Int).SetBytes(sig[:size]), new(big.Int).SetBytes(sig[size:])
		if !ecdsa.Verify(pub, digest, r, s) {
			return fmt.Errorf("the signature does not verify")
		}
		return nil
	}
}

// JWK is a public key as a request or a cnf claim carries it: EC P-256 or
// P-384 (x, y), or OKP Ed25519 (x).
type JWK struct {
	Kty string `json:"kty"`
	Crv string `json:"crv"`
	X   string `json:"x"`
	Y   string `json:"y,omitempty"`
	Kid string `json:"kid,omitempty"`
	Alg string `json:"alg,omitempty"`
	Use string `json:"use,omitempty"`
}

func jwkFromMap(m map[string]any) (JWK, error) {
	var k JWK
	for member, dst := range map[string]*string{"kty": &k.Kty, "crv": &k.Crv, "x": &k.X, "y": &k.Y} {
		if v, present := m[member]; present {
			s, ok := v.(string)
			if !ok {
				return JWK{}, fmt.Errorf("%s must be a string", member)
			}
			*dst = s
		}
	}
	if k.Kty == "" || k.Crv == "" || k.X == "" {
		return JWK{}, fmt.Errorf("needs kty, crv and x")
	}
	return k, nil
}

// digestOf is the SD-JWT digest of s: base64url of SHA-256 of its ASCII bytes.
func digestOf(s string) string {
	sum := sha256.Sum256([]byte(s))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// b64 decodes base64url without padding, refusing anything else.
func b64(s string) ([]byte, error) {
	b, err := base64.RawURLEncoding.Strict().DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("not base64url without padding")
	}
	return b, nil
}

func mustB64(s string) []byte {
	b, _ := b64(s)
	return b
}

// decodeJSON decodes one JSON value, numbers as json.Number.
func decodeJSON(b []byte, dst any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(dst); err != nil {
		return err
	}
	if dec.More() {
		return fmt.Errorf("data after the JSON value")
	}
	return nil
}

// clip shortens a caller's value for a problem detail.
func clip(s string) string {
	if len(s) > 64 {
		return s[:64] + "…"
	}
	return s
}

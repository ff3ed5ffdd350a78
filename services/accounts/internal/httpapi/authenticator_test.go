package httpapi_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"testing"

	"github.com/go-webauthn/webauthn/protocol/webauthncbor"
	"github.com/go-webauthn/webauthn/protocol/webauthncose"
	"github.com/stretchr/testify/require"
)

// softKey is a passkey in the test process: a P-256 key and a discoverable
// credential, answering WebAuthn options as an authenticator and a browser
// would (authenticator data, attestation object with the "none" format,
// client data, ES256 signature), so the handler tests can walk every
// ceremony, and every way to spoil one, without a browser. The Chromium
// walk (browser_test.go) does the same with the browser's own virtual
// authenticator.
type softKey struct {
	rpID       string
	origin     string
	id         []byte
	key        *ecdsa.PrivateKey
	userHandle []byte
	count      uint32
	// What the next answer spoils, for the refusals.
	clientOrigin string // another origin in the client data
	noUV         bool   // user verification not done
	countBack    bool   // the counter repeated instead of moved on
}

func newSoftKey(t testing.TB, rpID, origin string) *softKey {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	id := make([]byte, 32)
	_, _ = rand.Read(id)
	return &softKey{rpID: rpID, origin: origin, id: id, key: key, count: 1}
}

var b64 = base64.RawURLEncoding

const (
	flagUP = 0x01
	flagUV = 0x04
	flagAT = 0x40
)

func (k *softKey) flags() byte {
	if k.noUV {
		return flagUP
	}
	return flagUP | flagUV
}

func (k *softKey) clientData(t testing.TB, typ, challenge string) []byte {
	t.Helper()
	origin := k.origin
	if k.clientOrigin != "" {
		origin = k.clientOrigin
	}
	b, err := json.Marshal(map[string]any{"type": typ, "challenge": challenge, "origin": origin, "crossOrigin": false})
	require.NoError(t, err)
	return b
}

func (k *softKey) authData(flags byte, attested []byte) []byte {
	rp := sha256.Sum256([]byte(k.rpID))
	out := append(rp[:], flags)
	out = binary.BigEndian.AppendUint32(out, k.count)
	return append(out, attested...)
}

// options reads the challenge (and a creation's user handle) out of a
// ceremony's options as the server answered them.
type options struct {
	PublicKey struct {
		Challenge string `json:"challenge"`
		User      struct {
			ID string `json:"id"`
		} `json:"user"`
	} `json:"publicKey"`
}

// create answers creation options with a new credential.
func (k *softKey) create(t testing.TB, opts options) map[string]any {
	t.Helper()
	handle, err := b64.DecodeString(opts.PublicKey.User.ID)
	require.NoError(t, err)
	k.userHandle = handle
	cose, err := webauthncbor.Marshal(webauthncose.EC2PublicKeyData{
		PublicKeyData: webauthncose.PublicKeyData{KeyType: int64(webauthncose.EllipticKey), Algorithm: int64(webauthncose.AlgES256)},
		Curve:         1, XCoord: k.key.X.FillBytes(make([]byte, 32)), YCoord: k.key.Y.FillBytes(make([]byte, 32)),
	})
	require.NoError(t, err)
	attested := make([]byte, 16) // a zero AAGUID
	attested = binary.BigEndian.AppendUint16(attested, uint16(len(k.id)))
	attested = append(append(attested, k.id...), cose...)
	att, err := webauthncbor.Marshal(struct {
		Fmt      string         `cbor:"fmt"`
		AttStmt  map[string]any `cbor:"attStmt"`
		AuthData []byte         `cbor:"authData"`
	}{"none", map[string]any{}, k.authData(k.flags()|flagAT, attested)})
	require.NoError(t, err)
	return map[string]any{
		"id": b64.EncodeToString(k.id), "rawId": b64.EncodeToString(k.id), "type": "public-key",
		"authenticatorAttachment": "platform", "clientExtensionResults": map[string]any{},
		"response": map[string]any{
			"clientDataJSON":    b64.EncodeToString(k.clientData(t, "webauthn.create", opts.PublicKey.Challenge)),
			"attestationObject": b64.EncodeToString(att), "transports": []string{"internal"},
		},
	}
}

// get answers request options with an assertion of the credential, its
// counter moved on (unless countBack).
func (k *softKey) get(t testing.TB, opts options) map[string]any {
	t.Helper()
	if !k.countBack {
		k.count++
	}
	authData := k.authData(k.flags(), nil)
	clientData := k.clientData(t, "webauthn.get", opts.PublicKey.Challenge)
	cdHash := sha256.Sum256(clientData)
	digest := sha256.Sum256(append(append([]byte(nil), authData...), cdHash[:]...))
	sig, err := ecdsa.SignASN1(rand.Reader, k.key, digest[:])
	require.NoError(t, err)
	return map[string]any{
		"id": b64.EncodeToString(k.id), "rawId": b64.EncodeToString(k.id), "type": "public-key",
		"authenticatorAttachment": "platform", "clientExtensionResults": map[string]any{},
		"response": map[string]any{
			"clientDataJSON": b64.EncodeToString(clientData), "authenticatorData": b64.EncodeToString(authData),
			"signature": b64.EncodeToString(sig), "userHandle": b64.EncodeToString(k.userHandle),
		},
	}
}

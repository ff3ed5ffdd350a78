package signature

import (
	"crypto/ed25519"
	"fmt"
	"net/http"
	"time"
)

// Headers are the nine headers of one signed delivery attempt: the seven of
// the spec, the endpoint id it is signed for and the test flag.
type Headers struct {
	ContentDigest    string
	EventID          string
	EventTimestamp   string
	KeyID            string
	SchemaVersion    string
	SignatureVersion string
	Signature        string
	EndpointID       string
	Test             string // "true" or "false"
}

// Apply sets the nine headers on dst, replacing any earlier values.
func (h Headers) Apply(dst http.Header) {
	dst.Set(HeaderContentDigest, h.ContentDigest)
	dst.Set(HeaderEventID, h.EventID)
	dst.Set(HeaderEventTimestamp, h.EventTimestamp)
	dst.Set(HeaderKeyID, h.KeyID)
	dst.Set(HeaderSchemaVersion, h.SchemaVersion)
	dst.Set(HeaderSignatureVersion, h.SignatureVersion)
	dst.Set(HeaderSignature, h.Signature)
	dst.Set(HeaderEndpointID, h.EndpointID)
	dst.Set(HeaderTest, h.Test)
}

// HTTPHeader returns the nine headers as a new http.Header.
func (h Headers) HTTPHeader() http.Header {
	dst := make(http.Header, len(SignedHeaderNames))
	h.Apply(dst)
	return dst
}

// CanonicalInput returns the bytes the signature covers.
func (h Headers) CanonicalInput() []byte {
	return CanonicalInput(h.EventID, h.EventTimestamp, h.KeyID, h.EndpointID, h.Test, h.ContentDigest)
}

// Recipient is what a signature binds besides the body: the endpoint the
// delivery is sent to, and whether the event is a test.
type Recipient struct {
	// EndpointID is the id of the partner's endpoint (we_…), which its
	// receiver is configured with.
	EndpointID string
	// Test marks a test event, made up on the partner's request: no case
	// fact stands behind it.
	Test bool
}

// Signer signs deliveries with one Ed25519 key of one environment.
type Signer struct {
	keyID string
	key   ed25519.PrivateKey
}

// NewSigner returns a signer for key, published under keyID. The key id must
// be a valid id (see ValidID); it should follow the format of NewKeyID.
func NewSigner(keyID string, key ed25519.PrivateKey) (*Signer, error) {
	if !ValidID(keyID) {
		return nil, fmt.Errorf("signer key id %q: want 1 to 160 of A-Z a-z 0-9 . _ : -", keyID)
	}
	if len(key) != ed25519.PrivateKeySize {
		return nil, fmt.Errorf("signer key %s: want an Ed25519 private key of %d bytes, got %d", keyID, ed25519.PrivateKeySize, len(key))
	}
	return &Signer{keyID: keyID, key: key}, nil
}

// KeyID returns the id the signer's public key is published under.
func (s *Signer) KeyID() string { return s.keyID }

// PublicKey returns the verification key to publish.
func (s *Signer) PublicKey() ed25519.PublicKey { return s.key.Public().(ed25519.PublicKey) }

// JWK returns the verification key as a JWK for the published JWKS.
func (s *Signer) JWK() JWK { return NewJWK(s.keyID, s.PublicKey()) }

// Sign signs one delivery attempt of body to one recipient at the instant
// at (each attempt is signed afresh with its own timestamp). It refuses to
// sign what every receiver would refuse: an invalid event id or endpoint
// id, a body that is not a strict JSON object with schemaVersion
// case-event-v2 and eventId equal to eventID, or an instant outside years
// 0000 to 9999.
func (s *Signer) Sign(body []byte, eventID string, to Recipient, at time.Time) (Headers, error) {
	if !ValidID(eventID) {
		return Headers{}, fmt.Errorf("signing event %q: want an event id of 1 to 160 of A-Z a-z 0-9 . _ : -", eventID)
	}
	if !ValidID(to.EndpointID) {
		return Headers{}, fmt.Errorf("signing event %s for endpoint %q: want an endpoint id of 1 to 160 of A-Z a-z 0-9 . _ : -", eventID, to.EndpointID)
	}
	ident, err := readBodyIdentity(body)
	if err != nil {
		return Headers{}, fmt.Errorf("signing event %s: %w", eventID, err)
	}
	if ident.schemaVersion != SchemaVersion {
		return Headers{}, fmt.Errorf("signing event %s: body schemaVersion %q, want %s", eventID, ident.schemaVersion, SchemaVersion)
	}
	if ident.eventID != eventID {
		return Headers{}, fmt.Errorf("signing event %s: body eventId is %q", eventID, ident.eventID)
	}
	ts := FormatTimestamp(at)
	if _, err := ParseTimestamp(ts); err != nil {
		return Headers{}, fmt.Errorf("signing event %s: %w", eventID, err)
	}
	h := Headers{
		ContentDigest:    ContentDigest(body),
		EventID:          eventID,
		EventTimestamp:   ts,
		KeyID:            s.keyID,
		SchemaVersion:    SchemaVersion,
		SignatureVersion: SignatureVersion,
		EndpointID:       to.EndpointID,
		Test:             TestFlag(to.Test),
	}
	h.Signature = formatSignatureHeader(ed25519.Sign(s.key, h.CanonicalInput()))
	return h, nil
}

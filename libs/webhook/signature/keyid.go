package signature

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
	"time"
)

// Environment is where a key signs: sandbox or live. A sandbox key never
// signs a live delivery and the other way round.
type Environment string

// The environments.
const (
	Sandbox Environment = "sandbox"
	Live    Environment = "live"
)

// Valid reports whether e is sandbox or live.
func (e Environment) Valid() bool { return e == Sandbox || e == Live }

// KeyID is a parsed key id of the form
//
//	pcwh_<environment>_<YYYY-MM-DD>_<fingerprint>
//
// environment is sandbox or live; the date is the UTC day the key was
// created; fingerprint is the first 6 bytes of the SHA-256 of the 32-byte
// public key, in 12 lowercase hex digits. Example:
// pcwh_sandbox_2026-11-23_3f9a0c51d2e7. The form stays inside the spec's
// 1..160 of A-Z a-z 0-9 . _ : -, names the environment at a glance in logs,
// sorts by age, and ties the id to its key. Receivers need not parse it:
// the JWKS maps ids to keys.
type KeyID struct {
	Environment Environment
	Created     time.Time
	Fingerprint string
}

var keyIDPattern = regexp.MustCompile(`^pcwh_(sandbox|live)_([0-9]{4}-[0-9]{2}-[0-9]{2})_([0-9a-f]{12})$`)

// NewKeyID returns the key id of pub, created on the UTC day of created in
// environment env.
func NewKeyID(env Environment, created time.Time, pub ed25519.PublicKey) (string, error) {
	if !env.Valid() {
		return "", fmt.Errorf("key id environment %q: want sandbox or live", env)
	}
	if len(pub) != ed25519.PublicKeySize {
		return "", fmt.Errorf("key id: want an Ed25519 public key of %d bytes, got %d", ed25519.PublicKeySize, len(pub))
	}
	return fmt.Sprintf("pcwh_%s_%s_%s", env, created.UTC().Format(time.DateOnly), Fingerprint(pub)), nil
}

// Fingerprint returns the 12 lowercase hex digits that end a key id of pub.
func Fingerprint(pub ed25519.PublicKey) string {
	sum := sha256.Sum256(pub)
	return hex.EncodeToString(sum[:6])
}

// ParseKeyID parses a key id made by NewKeyID.
func ParseKeyID(s string) (KeyID, error) {
	m := keyIDPattern.FindStringSubmatch(s)
	if m == nil {
		return KeyID{}, fmt.Errorf("key id %q: want pcwh_<sandbox|live>_<YYYY-MM-DD>_<12 hex>", s)
	}
	created, err := time.Parse(time.DateOnly, m[2])
	if err != nil {
		return KeyID{}, fmt.Errorf("key id %q: %w", s, err)
	}
	return KeyID{Environment: Environment(m[1]), Created: created, Fingerprint: m[3]}, nil
}

// Matches reports whether the id's fingerprint is that of pub.
func (k KeyID) Matches(pub ed25519.PublicKey) bool {
	return len(pub) == ed25519.PublicKeySize && Fingerprint(pub) == k.Fingerprint
}

package award

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
	"time"
)

// keyIDDate is the Go layout of the date in a key id.
const keyIDDate = "20060102"

var keyIDPattern = regexp.MustCompile(`^pcaw_([0-9]{8})_([0-9a-f]{16})$`)

// KeyID returns the key id of an award signing key:
//
//	pcaw_<yyyymmdd>_<fingerprint>
//
// The date is the UTC day the key was created, so ids sort by age; the
// fingerprint is the first 8 bytes of the SHA-256 of the 32 public key
// bytes, in 16 lowercase hex digits, so an id names one key. Example:
// pcaw_20261123_3f9a0c51d2e76b18. A verifier need not parse it: the JWK
// set maps ids to keys.
func KeyID(pub ed25519.PublicKey, created time.Time) string {
	return "pcaw_" + created.UTC().Format(keyIDDate) + "_" + fingerprint(pub)
}

func fingerprint(pub ed25519.PublicKey) string {
	sum := sha256.Sum256(pub)
	return hex.EncodeToString(sum[:8])
}

// KeyIDParts is a parsed key id.
type KeyIDParts struct {
	// Created is midnight UTC of the day the key was created.
	Created time.Time
	// Fingerprint is the id's 16 hex digits.
	Fingerprint string
}

// Matches reports whether the id names pub.
func (p KeyIDParts) Matches(pub ed25519.PublicKey) bool {
	return len(pub) == ed25519.PublicKeySize && fingerprint(pub) == p.Fingerprint
}

// ParseKeyID parses a key id of the form KeyID makes: a real date, and
// the fingerprint in lowercase.
func ParseKeyID(s string) (KeyIDParts, error) {
	m := keyIDPattern.FindStringSubmatch(s)
	if m == nil {
		return KeyIDParts{}, fmt.Errorf("award key id %q: want pcaw_<yyyymmdd>_<16 lowercase hex>", s)
	}
	created, err := time.Parse(keyIDDate, m[1])
	if err != nil || created.Format(keyIDDate) != m[1] {
		return KeyIDParts{}, fmt.Errorf("award key id %q: %s is not a date", s, m[1])
	}
	return KeyIDParts{Created: created, Fingerprint: m[2]}, nil
}

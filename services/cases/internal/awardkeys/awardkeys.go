// Package awardkeys is the award signing keyring: the Ed25519 key that
// signs new awards and the published set of every key that ever signed
// one. An award must verify forever, so a key's public half is written to
// Redis before the key signs anything, and never removed: rotating the
// signing key (a new key file in the mounted Secret, a restart) adds to
// the set; GET /api/awards/keys serves all of it.
package awardkeys

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/pcourt/pcourt/libs/award"
	"github.com/pcourt/pcourt/libs/jwk"
)

// publishedKey is the Redis hash of every published key: kid → its JWK.
// It lives under the service's own prefix and is never trimmed.
const publishedKey = "pc:cases:award-keys"

// Ring signs awards with its current key and publishes every key.
type Ring struct {
	rdb     redis.UniversalClient
	kid     string
	private ed25519.PrivateKey
}

// Config says where the signing key comes from.
type Config struct {
	// Dir holds the signing keys as <kid>.seed files (the 32-byte seed in
	// hex); the file with the greatest kid (its date, then fingerprint)
	// signs. The other files stay published like every key ever used.
	Dir string
	// DevEphemeral makes a fresh key at start, for development: it is
	// published like any other, so awards it signed keep verifying after
	// the restart that replaces it.
	DevEphemeral bool
}

// Load reads the signing key, publishes every key it holds, and returns
// the ring.
func Load(ctx context.Context, rdb redis.UniversalClient, cfg Config, now time.Time) (*Ring, error) {
	keys, err := read(cfg, now)
	if err != nil {
		return nil, err
	}
	for _, k := range keys {
		if err := publish(ctx, rdb, k.kid, k.private.Public().(ed25519.PublicKey)); err != nil {
			return nil, err
		}
	}
	current := slices.MaxFunc(keys, func(a, b key) int { return strings.Compare(a.kid, b.kid) })
	return &Ring{rdb: rdb, kid: current.kid, private: current.private}, nil
}

type key struct {
	kid     string
	private ed25519.PrivateKey
}

func read(cfg Config, now time.Time) ([]key, error) {
	if cfg.DevEphemeral {
		pub, priv, err := ed25519.GenerateKey(rand.Reader)
		if err != nil {
			return nil, err
		}
		return []key{{award.KeyID(pub, now), priv}}, nil
	}
	if cfg.Dir == "" {
		return nil, errors.New("award signing keys: a key directory (AWARD_SIGNING_KEYS_DIR) is required")
	}
	entries, err := os.ReadDir(cfg.Dir)
	if err != nil {
		return nil, fmt.Errorf("award signing keys: %w", err)
	}
	var keys []key
	for _, e := range entries {
		kid, ok := strings.CutSuffix(e.Name(), ".seed")
		if !ok || e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		raw, err := os.ReadFile(filepath.Join(cfg.Dir, e.Name()))
		if err != nil {
			return nil, fmt.Errorf("award signing key %s: %w", kid, err)
		}
		seed, err := hex.DecodeString(strings.TrimSpace(string(raw)))
		if err != nil || len(seed) != ed25519.SeedSize {
			return nil, fmt.Errorf("award signing key %s: want a 32-byte seed in hex", kid)
		}
		priv := ed25519.NewKeyFromSeed(seed)
		parts, err := award.ParseKeyID(kid)
		if err != nil {
			return nil, fmt.Errorf("award signing key %s: %w", kid, err)
		}
		if !parts.Matches(priv.Public().(ed25519.PublicKey)) {
			return nil, fmt.Errorf("award signing key %s: the key id's fingerprint is not this key's", kid)
		}
		keys = append(keys, key{kid, priv})
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("award signing keys: no <kid>.seed file in %s", cfg.Dir)
	}
	return keys, nil
}

// publish records a key's public half, once; a kid already published with
// another key is refused, so a kid always names one key.
func publish(ctx context.Context, rdb redis.UniversalClient, kid string, pub ed25519.PublicKey) error {
	b, err := json.Marshal(jwk.NewJWK(kid, pub))
	if err != nil {
		return err
	}
	one := string(b)
	if err := rdb.HSetNX(ctx, publishedKey, kid, one).Err(); err != nil {
		return fmt.Errorf("publishing award key %s: %w", kid, err)
	}
	stored, err := rdb.HGet(ctx, publishedKey, kid).Result()
	if err != nil {
		return fmt.Errorf("publishing award key %s: %w", kid, err)
	}
	if stored != one {
		return fmt.Errorf("award key %s is published with another public key", kid)
	}
	return nil
}

// Sign signs an award's json bytes with the current key.
func (r *Ring) Sign(awardJSON []byte) (string, string, error) {
	att, err := award.Sign(r.private, r.kid, awardJSON)
	return r.kid, att, err
}

// SignDetached signs any other payload the award keys attest (a record
// bundle's manifest) with the current key.
func (r *Ring) SignDetached(payload []byte) (string, string, error) {
	att, err := award.SignDetached(r.private, r.kid, payload)
	return r.kid, att, err
}

// JWKS is the published set: every key that ever signed, ordered by kid.
func (r *Ring) JWKS(ctx context.Context) ([]byte, error) {
	all, err := r.rdb.HGetAll(ctx, publishedKey).Result()
	if err != nil {
		return nil, fmt.Errorf("reading the award keys: %w", err)
	}
	kids := make([]string, 0, len(all))
	for kid := range all {
		kids = append(kids, kid)
	}
	slices.Sort(kids)
	var keys []jwk.JWK
	for _, kid := range kids {
		var k jwk.JWK
		if err := json.Unmarshal([]byte(all[kid]), &k); err != nil {
			return nil, fmt.Errorf("award key %s: %w", kid, err)
		}
		keys = append(keys, k)
	}
	return jwk.MarshalJWKS(keys...)
}

// Package keys is the webhook signing keyring: Ed25519 keys of each
// environment loaded from files (a mounted Secret), their rotation states,
// the signer of the moment and the public keys to publish.
//
// Rotation follows the key id dates. A key created on day D becomes active
// at D + LeadTime; until then it is next: published but not signing, so
// receivers that cache the JWKS (max-age 300 s) learn it before its first
// signature. When a newer key activates, the older one is retired: no longer
// signing, still published for RetiredGrace, derived from the retry
// schedule (GraceAfter), so that it stays published until its last
// signature is outside every retry.
//
// Live holds the ring of the moment and reloads it from the key directory,
// so a key file added or removed (a rotated Secret) takes effect without a
// restart.
package keys

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/pcourt/pcourt/libs/webhook/signature"
)

// State is where a key is in its rotation.
type State string

// The states.
const (
	Next    State = "next"    // published, not yet signing
	Active  State = "active"  // signing new attempts
	Retired State = "retired" // published until its grace ends, never signing
	Expired State = "expired" // past its grace: neither published nor signing
)

// Key is one signing key. It never prints its private part.
type Key struct {
	ID          string
	Environment signature.Environment
	ActivatesAt time.Time
	private     ed25519.PrivateKey
}

// Public returns the verification key.
func (k Key) Public() ed25519.PublicKey { return k.private.Public().(ed25519.PublicKey) }

// String names the key by id only.
func (k Key) String() string { return k.ID }

// LogValue keeps the private key out of logs.
func (k Key) LogValue() slog.Value {
	return slog.GroupValue(slog.String("kid", k.ID), slog.Time("activatesAt", k.ActivatesAt))
}

// Config configures rotation.
type Config struct {
	LeadTime     time.Duration // from a key's creation day to its activation
	RetiredGrace time.Duration // how long a superseded key stays published
}

// JWKSMaxAge is how long receivers may cache GET /api/webhooks/keys.
const JWKSMaxAge = 5 * time.Minute

// GraceAfter is how long a superseded key stays published given the
// longest span of a delivery's retries (dispatch.Config.RetryHorizon): the
// key's last signature is made when its successor activates, so it stays
// published while any retry that signature began can still run, plus the
// receivers' timestamp tolerance and JWKS cache lifetime. With the default
// schedule that is about 6 days.
func GraceAfter(retryHorizon time.Duration) time.Duration {
	return retryHorizon + signature.DefaultTolerance + JWKSMaxAge
}

// DefaultConfig is a 48-hour lead and the grace GraceAfter derives from
// retryHorizon.
func DefaultConfig(retryHorizon time.Duration) Config {
	return Config{LeadTime: 48 * time.Hour, RetiredGrace: GraceAfter(retryHorizon)}
}

// Validate refuses a lead shorter than twice the JWKS cache lifetime and
// a grace shorter than retryHorizon allows.
func (c Config) Validate(retryHorizon time.Duration) error {
	var errs []error
	if c.LeadTime < 2*JWKSMaxAge {
		errs = append(errs, errors.New("key lead time must be at least 10m (the JWKS is cached for 5m)"))
	}
	if least := GraceAfter(retryHorizon); c.RetiredGrace < least {
		errs = append(errs, fmt.Errorf("retired key grace must be at least %s (the retry horizon %s, receiver tolerance and JWKS cache)", least, retryHorizon))
	}
	return errors.Join(errs...)
}

// Ring is the keyring of both environments. It is immutable after loading.
type Ring struct {
	cfg  Config
	keys map[signature.Environment][]Key // by ActivatesAt, then id
}

// New builds a ring from keys.
func New(cfg Config, keys ...Key) (*Ring, error) {
	r := &Ring{cfg: cfg, keys: map[signature.Environment][]Key{}}
	seen := map[string]bool{}
	for _, k := range keys {
		if seen[k.ID] {
			return nil, fmt.Errorf("signing key %s appears twice", k.ID)
		}
		seen[k.ID] = true
		r.keys[k.Environment] = append(r.keys[k.Environment], k)
	}
	for env := range r.keys {
		slices.SortFunc(r.keys[env], func(a, b Key) int {
			if c := a.ActivatesAt.Compare(b.ActivatesAt); c != 0 {
				return c
			}
			return strings.Compare(a.ID, b.ID)
		})
	}
	return r, nil
}

// stateOf returns the state of the i-th key of ks at now.
func (r *Ring) stateOf(ks []Key, i int, now time.Time) State {
	if now.Before(ks[i].ActivatesAt) {
		return Next
	}
	if i+1 < len(ks) && !now.Before(ks[i+1].ActivatesAt) {
		if now.Before(ks[i+1].ActivatesAt.Add(r.cfg.RetiredGrace)) {
			return Retired
		}
		return Expired
	}
	return Active
}

// Status is a key's id and state, for logs and admin views.
type Status struct {
	ID    string
	State State
}

// States lists every key of env with its state at now.
func (r *Ring) States(env signature.Environment, now time.Time) []Status {
	ks := r.keys[env]
	out := make([]Status, len(ks))
	for i, k := range ks {
		out[i] = Status{ID: k.ID, State: r.stateOf(ks, i, now)}
	}
	return out
}

// ErrNoActiveKey is an environment with no key active at the moment.
var ErrNoActiveKey = errors.New("no active signing key")

// Signer returns the signer of env at now: its active key.
func (r *Ring) Signer(env signature.Environment, now time.Time) (*signature.Signer, error) {
	ks := r.keys[env]
	for i := len(ks) - 1; i >= 0; i-- {
		if r.stateOf(ks, i, now) == Active {
			return signature.NewSigner(ks[i].ID, ks[i].private)
		}
	}
	return nil, fmt.Errorf("%w for %s", ErrNoActiveKey, env)
}

// Published returns the JWKs of env (both environments when env is empty)
// that are next, active or retired at now.
func (r *Ring) Published(env signature.Environment, now time.Time) []signature.JWK {
	var out []signature.JWK
	for _, e := range []signature.Environment{signature.Live, signature.Sandbox} {
		if env != "" && env != e {
			continue
		}
		ks := r.keys[e]
		for i, k := range ks {
			if r.stateOf(ks, i, now) != Expired {
				out = append(out, signature.NewJWK(k.ID, k.Public()))
			}
		}
	}
	return out
}

// FromSeed makes a key from its 32-byte seed and id; the id must be in the
// pcwh_<env>_<date>_<fingerprint> form and match the key.
func FromSeed(cfg Config, id string, seed []byte) (Key, error) {
	if len(seed) != ed25519.SeedSize {
		return Key{}, fmt.Errorf("signing key %s: want a %d-byte seed", id, ed25519.SeedSize)
	}
	return fromPrivate(cfg, id, ed25519.NewKeyFromSeed(seed))
}

func fromPrivate(cfg Config, id string, priv ed25519.PrivateKey) (Key, error) {
	kid, err := signature.ParseKeyID(id)
	if err != nil {
		return Key{}, fmt.Errorf("signing key file %s: %w", id, err)
	}
	if !kid.Matches(priv.Public().(ed25519.PublicKey)) {
		return Key{}, fmt.Errorf("signing key %s: the fingerprint does not match the key", id)
	}
	return Key{ID: id, Environment: kid.Environment, ActivatesAt: kid.Created.Add(cfg.LeadTime), private: priv}, nil
}

// LoadDir reads every key file of dir: <kid>.pem holding a PKCS#8 Ed25519
// private key, or <kid>.seed holding the 32-byte seed in hex or base64.
// Other files, and the ..data links of a mounted Secret, are skipped.
func LoadDir(cfg Config, dir string) ([]Key, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("reading signing keys: %w", err)
	}
	var keys []Key
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, ".") || e.IsDir() {
			continue
		}
		ext := filepath.Ext(name)
		id := strings.TrimSuffix(name, ext)
		if ext != ".pem" && ext != ".seed" {
			continue
		}
		raw, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return nil, fmt.Errorf("reading signing key %s: %w", id, err)
		}
		var k Key
		if ext == ".pem" {
			k, err = parsePEM(cfg, id, raw)
		} else {
			k, err = parseSeed(cfg, id, raw)
		}
		if err != nil {
			return nil, err
		}
		keys = append(keys, k)
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("no signing key files (<kid>.pem or <kid>.seed) in %s", dir)
	}
	return keys, nil
}

func parsePEM(cfg Config, id string, raw []byte) (Key, error) {
	block, _ := pem.Decode(raw)
	if block == nil || block.Type != "PRIVATE KEY" {
		return Key{}, fmt.Errorf("signing key %s: want a PEM PRIVATE KEY block", id)
	}
	parsed, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		return Key{}, fmt.Errorf("signing key %s: %w", id, err)
	}
	priv, ok := parsed.(ed25519.PrivateKey)
	if !ok {
		return Key{}, fmt.Errorf("signing key %s: not an Ed25519 key", id)
	}
	return fromPrivate(cfg, id, priv)
}

func parseSeed(cfg Config, id string, raw []byte) (Key, error) {
	text := strings.TrimSpace(string(raw))
	seed, err := hex.DecodeString(text)
	if err != nil {
		if seed, err = base64.StdEncoding.DecodeString(text); err != nil {
			return Key{}, fmt.Errorf("signing key %s: the seed is neither hex nor base64", id)
		}
	}
	return FromSeed(cfg, id, seed)
}

// Ephemeral makes a fresh key per environment, active from now, for
// development only: nothing outside this process can verify it tomorrow.
func Ephemeral(now time.Time) ([]Key, error) {
	var out []Key
	for _, env := range []signature.Environment{signature.Sandbox, signature.Live} {
		pub, priv, err := ed25519.GenerateKey(rand.Reader)
		if err != nil {
			return nil, err
		}
		id, err := signature.NewKeyID(env, now, pub)
		if err != nil {
			return nil, err
		}
		out = append(out, Key{ID: id, Environment: env, ActivatesAt: now, private: priv})
	}
	return out, nil
}

// MarshalPEM encodes a private key as a PKCS#8 PEM file body, for the admin
// tool and tests that write key files.
func MarshalPEM(priv ed25519.PrivateKey) ([]byte, error) {
	der, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), nil
}

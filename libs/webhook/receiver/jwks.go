package receiver

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/pcourt/pcourt/libs/webhook/signature"
)

// KeySource returns the verification key of a key id. A key source that
// knows no such key returns an error wrapping signature.ErrUnknownKey; any
// other error means it could not tell (the handler then answers 503, so the
// sender retries).
type KeySource interface {
	Lookup(ctx context.Context, keyID string) (ed25519.PublicKey, error)
}

// StaticKeys is a KeySource over a fixed key set.
type StaticKeys signature.KeySet

// Lookup returns the key of keyID.
func (s StaticKeys) Lookup(_ context.Context, keyID string) (ed25519.PublicKey, error) {
	return signature.KeySet(s).Lookup(keyID)
}

// JWKSConfig tunes a JWKSCache. The zero value of a field takes its default.
type JWKSConfig struct {
	// Client fetches the key set; http.DefaultClient with a 10 s timeout by default.
	Client *http.Client
	// MinRefreshInterval is the least time between two fetches, whatever
	// asks for them (an unknown key id, an expired set, a failed fetch);
	// 30 s by default. It keeps a stream of forged key ids from turning the
	// receiver into a load on the key endpoint.
	MinRefreshInterval time.Duration
	// DefaultMaxAge is how long a set is fresh when the response has no
	// Cache-Control max-age; 5 min by default.
	DefaultMaxAge time.Duration
	// MaxMaxAge caps the response's max-age; 24 h by default.
	MaxMaxAge time.Duration
	// Now is the clock; time.Now by default.
	Now func() time.Time
}

func (c JWKSConfig) withDefaults() JWKSConfig {
	if c.Client == nil {
		c.Client = &http.Client{Timeout: 10 * time.Second}
	}
	if c.MinRefreshInterval <= 0 {
		c.MinRefreshInterval = 30 * time.Second
	}
	if c.DefaultMaxAge <= 0 {
		c.DefaultMaxAge = 5 * time.Minute
	}
	if c.MaxMaxAge <= 0 {
		c.MaxMaxAge = 24 * time.Hour
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	return c
}

// maxJWKSBytes bounds the key set document.
const maxJWKSBytes = 1 << 20

// JWKSCache is a KeySource over the published key set
// (GET {base_url}/api/webhooks/keys). It fetches on first use, keeps the set
// for the response's max-age, fetches again when the set has expired or a
// delivery names a key id it does not hold (a rotation), never more often
// than MinRefreshInterval, and keeps serving the last good set when a fetch
// fails. It is safe for concurrent use; concurrent misses share one fetch.
type JWKSCache struct {
	url string
	cfg JWKSConfig

	fetchMu sync.Mutex // held during a fetch, so that misses queue behind it

	mu        sync.RWMutex
	keys      signature.KeySet
	expires   time.Time
	lastFetch time.Time
	lastErr   error
}

// NewJWKSCache returns a cache of the key set at url.
func NewJWKSCache(url string, cfg JWKSConfig) (*JWKSCache, error) {
	if !strings.HasPrefix(url, "https://") && !strings.HasPrefix(url, "http://") {
		return nil, fmt.Errorf("jwks url %q: want an http or https URL", url)
	}
	return &JWKSCache{url: url, cfg: cfg.withDefaults()}, nil
}

// Lookup returns the key of keyID, fetching the set when it is missing,
// expired, or does not hold keyID (at most once per MinRefreshInterval).
func (c *JWKSCache) Lookup(ctx context.Context, keyID string) (ed25519.PublicKey, error) {
	key, fresh, ok := c.cached(keyID)
	if ok && fresh {
		return key, nil
	}
	fetchErr := c.refresh(ctx)
	if k, _, ok := c.cached(keyID); ok {
		return k, nil
	}
	if fetchErr != nil {
		return nil, fmt.Errorf("key %s: fetching %s: %w", keyID, c.url, fetchErr)
	}
	c.mu.RLock()
	everFetched, lastErr := c.keys != nil, c.lastErr
	c.mu.RUnlock()
	if !everFetched {
		return nil, fmt.Errorf("key %s: no key set fetched yet from %s: %w", keyID, c.url, lastErr)
	}
	return nil, fmt.Errorf("%w: %q is not in the key set of %s", signature.ErrUnknownKey, keyID, c.url)
}

// cached returns the key from the current set, and whether the set is fresh.
func (c *JWKSCache) cached(keyID string) (ed25519.PublicKey, bool, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	k, ok := c.keys[keyID]
	return k, c.keys != nil && c.cfg.Now().Before(c.expires), ok
}

// refresh fetches the set unless one was fetched (or tried) within
// MinRefreshInterval. It returns the error of a fetch it made.
func (c *JWKSCache) refresh(ctx context.Context) error {
	c.fetchMu.Lock()
	defer c.fetchMu.Unlock()
	now := c.cfg.Now()
	c.mu.RLock()
	recent := !c.lastFetch.IsZero() && now.Sub(c.lastFetch) < c.cfg.MinRefreshInterval
	c.mu.RUnlock()
	if recent {
		return nil
	}
	keys, maxAge, err := c.fetch(ctx)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.lastFetch = now
	c.lastErr = err
	if err != nil {
		return err
	}
	c.keys = keys
	c.expires = now.Add(maxAge)
	return nil
}

func (c *JWKSCache) fetch(ctx context.Context) (signature.KeySet, time.Duration, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.url, nil)
	if err != nil {
		return nil, 0, err
	}
	req.Header.Set("Accept", "application/jwk-set+json, application/json")
	resp, err := c.cfg.Client.Do(req)
	if err != nil {
		return nil, 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, 0, fmt.Errorf("status %s", resp.Status)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxJWKSBytes+1))
	if err != nil {
		return nil, 0, err
	}
	if len(data) > maxJWKSBytes {
		return nil, 0, errors.New("key set larger than 1 MiB")
	}
	keys, err := signature.ParseJWKS(data)
	if err != nil {
		return nil, 0, err
	}
	return keys, c.maxAge(resp.Header), nil
}

// maxAge reads Cache-Control max-age (less the Age header); no-store or
// no-cache make the set stale at once (it is still used, and fetched again
// at most once per MinRefreshInterval).
func (c *JWKSCache) maxAge(h http.Header) time.Duration {
	age := c.cfg.DefaultMaxAge
	for _, d := range strings.Split(h.Get("Cache-Control"), ",") {
		d = strings.ToLower(strings.TrimSpace(d))
		switch {
		case d == "no-store" || d == "no-cache":
			return 0
		case strings.HasPrefix(d, "max-age="):
			if n, err := strconv.ParseInt(strings.Trim(d[len("max-age="):], `"`), 10, 64); err == nil && n >= 0 {
				age = time.Duration(min(n, int64(c.cfg.MaxMaxAge/time.Second))) * time.Second
			}
		}
	}
	if n, err := strconv.ParseInt(h.Get("Age"), 10, 64); err == nil && n > 0 {
		age -= time.Duration(n) * time.Second
	}
	return min(max(age, 0), c.cfg.MaxMaxAge)
}

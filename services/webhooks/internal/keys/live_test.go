package keys_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/hex"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/webhook/signature"
	"github.com/pcourt/pcourt/services/webhooks/internal/keys"
)

// syncBuffer is a log sink the watcher and the test share.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}
func (s *syncBuffer) String() string { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

func published(l *keys.Live, env signature.Environment, at time.Time) []string {
	var out []string
	for _, k := range l.Published(env, at) {
		out = append(out, k.Kid)
	}
	return out
}

// A rotation is a file added to the directory: the running service
// publishes it at the next reload, signs with it after its lead time, and
// drops the old key when its file goes; a broken directory changes nothing.
func TestLiveKeysReloadWithoutRestart(t *testing.T) {
	dir := t.TempDir()
	cfg := keys.DefaultConfig(horizon)
	old, oldPriv := writeKey(t, dir, signature.Live, "2026-11-01", ".pem")
	var logs syncBuffer
	live, err := keys.NewLive(cfg, dir, slog.New(slog.NewJSONHandler(&logs, nil)))
	require.NoError(t, err)
	now := day("2026-11-23")
	assert.Equal(t, []string{old}, published(live, signature.Live, now))

	newID, newPriv := writeKey(t, dir, signature.Live, "2026-11-23", ".pem")
	changed, err := live.Reload(now)
	require.NoError(t, err)
	require.True(t, changed)
	assert.Equal(t, []string{old, newID}, published(live, signature.Live, now), "published before it signs")
	s, err := live.Signer(signature.Live, now)
	require.NoError(t, err)
	assert.Equal(t, old, s.KeyID(), "the old key signs through the new one's lead time")
	s, err = live.Signer(signature.Live, now.Add(cfg.LeadTime))
	require.NoError(t, err)
	assert.Equal(t, newID, s.KeyID(), "the new key signs after its lead time")
	tl := live.Ring().Timelines(signature.Live)
	require.Len(t, tl, 2)
	assert.Equal(t, now.Add(cfg.LeadTime), tl[0].RetiredAt)
	assert.Equal(t, now.Add(cfg.LeadTime+keys.GraceAfter(horizon)), tl[0].ExpiresAt, "retired once the retry horizon has passed")

	changed, err = live.Reload(now)
	require.NoError(t, err)
	assert.False(t, changed, "the same files change nothing")

	require.NoError(t, os.WriteFile(filepath.Join(dir, "pcwh_live_2026-11-24_000000000000.pem"), []byte("half written"), 0o600))
	_, err = live.Reload(now)
	require.Error(t, err)
	assert.Equal(t, []string{old, newID}, published(live, signature.Live, now), "a broken directory keeps the loaded keys")
	require.NoError(t, os.Remove(filepath.Join(dir, "pcwh_live_2026-11-24_000000000000.pem")))

	// The watcher picks the removal up by itself.
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- live.Watch(ctx, 10*time.Millisecond) }()
	require.NoError(t, os.Remove(filepath.Join(dir, old+".pem")))
	require.Eventually(t, func() bool { return len(published(live, signature.Live, now)) == 1 }, 5*time.Second, 10*time.Millisecond,
		"the watcher did not drop the removed key")
	cancel()
	require.NoError(t, <-done)
	assert.Equal(t, []string{newID}, published(live, signature.Live, now))

	out := logs.String()
	assert.Contains(t, out, newID)
	assert.Contains(t, out, "webhook signing key removed")
	for _, priv := range []ed25519.PrivateKey{oldPriv, newPriv} {
		assert.NotContains(t, out, hex.EncodeToString(priv.Seed()), "no private key in the logs")
	}
}

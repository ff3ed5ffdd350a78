package legacyuse_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/auth"
	"github.com/pcourt/pcourt/libs/auth/authtest"
	"github.com/pcourt/pcourt/libs/redistest"
	"github.com/pcourt/pcourt/services/compat-edge/internal/legacyuse"
	"github.com/pcourt/pcourt/services/compat-edge/internal/store"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// Identify is what the edge's main wires: the credential store's cached
// lookup by hash.
func identify(creds *auth.Store) func(context.Context, string) (string, error) {
	return func(ctx context.Context, hash string) (string, error) {
		cred, err := creds.AuthenticateHash(ctx, hash)
		if errors.Is(err, auth.ErrInvalidCredential) {
			return "", legacyuse.ErrUnknownCredential
		}
		return cred.PublicID, err
	}
}

func run(t *testing.T, r *legacyuse.Recorder) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	return func() {
		cancel()
		require.NoError(t, <-done)
	}
}

func TestRecordsPerCredentialAndRoute(t *testing.T) {
	ctx := context.Background()
	rdb := redistest.NewClient(t)
	creds := auth.NewStore(rdb, auth.DefaultStoreConfig())
	token, cred := authtest.Mint(t, creds, auth.RoleClaimantAgent)
	_, revoked := authtest.Mint(t, creds, auth.RoleClaimantAgent)
	require.NoError(t, creds.Revoke(ctx, revoked.PublicID))
	st := store.New(rdb)

	cfg := legacyuse.DefaultConfig()
	cfg.FlushInterval = time.Hour // only the shutdown flush writes
	r := legacyuse.New(cfg, identify(creds), st.AddUses, quiet)
	stop := run(t, r)
	t0 := time.Date(2026, 2, 1, 12, 0, 0, 0, time.UTC)
	answer, read := "/api/v2/cases/{caseId}/answer", "/api/v2/cases/{caseId}"
	r.Record(legacyuse.Hit{TokenHash: auth.HashToken(token), Route: answer, At: t0.Add(time.Minute)})
	r.Record(legacyuse.Hit{TokenHash: auth.HashToken(token), Route: answer, At: t0})
	r.Record(legacyuse.Hit{TokenHash: auth.HashToken(token), Route: answer, At: t0.Add(2 * time.Minute)})
	r.Record(legacyuse.Hit{TokenHash: auth.HashToken(token), Route: read, At: t0})
	r.Record(legacyuse.Hit{Route: read, At: t0})
	r.Record(legacyuse.Hit{TokenHash: auth.HashToken("pc_sbx_unknown"), Route: read, At: t0})
	stop()

	uses, err := st.Uses(ctx, cred.PublicID)
	require.NoError(t, err)
	for i := range uses {
		uses[i].Days = nil // read back for the last 30 days, which t0 is not in
	}
	require.Equal(t, []store.Use{
		{Subject: cred.PublicID, Route: read, First: t0, Last: t0, Count: 1},
		{Subject: cred.PublicID, Route: answer, First: t0, Last: t0.Add(2 * time.Minute), Count: 3},
	}, uses)
	subjects, err := st.Subjects(ctx)
	require.NoError(t, err)
	require.Equal(t, []string{store.Anonymous, cred.PublicID}, subjects, "no entry for unknown or revoked bearers")
	require.Zero(t, r.Dropped())
}

func TestAFullBufferDropsAndCounts(t *testing.T) {
	cfg := legacyuse.Config{Buffer: 2, FlushInterval: time.Hour, MaxPending: 10}
	r := legacyuse.New(cfg, nil, nil, quiet) // no worker: the buffer fills
	for range 5 {
		r.Record(legacyuse.Hit{Route: "/api/v2/rules/current", At: time.Now()})
	}
	require.Equal(t, int64(3), r.Dropped(), "the request path never waits")
}

func TestMaxPendingBoundsWhatIsHeld(t *testing.T) {
	var written []store.Use
	cfg := legacyuse.Config{Buffer: 16, FlushInterval: time.Hour, MaxPending: 2}
	r := legacyuse.New(cfg, nil, func(_ context.Context, u []store.Use) error { written = append(written, u...); return nil }, quiet)
	for _, route := range []string{"/a", "/b", "/c", "/a"} {
		r.Record(legacyuse.Hit{Route: route, At: time.Now()})
	}
	run(t, r)()
	require.Len(t, written, 2)
	require.Equal(t, int64(1), r.Dropped(), "a third distinct pair is dropped; a known one still counts")
}

// A failed write is kept and written at a later flush.
func TestAFailedWriteIsRetried(t *testing.T) {
	ctx := context.Background()
	st := store.New(redistest.NewClient(t))
	var failures atomic.Int32
	failures.Store(2)
	write := func(ctx context.Context, u []store.Use) error {
		if failures.Add(-1) >= 0 {
			return errors.New("redis unavailable")
		}
		return st.AddUses(ctx, u)
	}
	cfg := legacyuse.Config{Buffer: 16, FlushInterval: 5 * time.Millisecond, MaxPending: 10}
	r := legacyuse.New(cfg, nil, write, quiet)
	stop := run(t, r)
	defer stop()
	t0 := time.Date(2026, 2, 1, 12, 0, 0, 0, time.UTC)
	r.Record(legacyuse.Hit{Route: "/api/v2/rules/current", At: t0})
	require.Eventually(t, func() bool {
		uses, err := st.Uses(ctx, store.Anonymous)
		return err == nil && len(uses) == 1 && uses[0].Count == 1
	}, 5*time.Second, 5*time.Millisecond)
	require.LessOrEqual(t, failures.Load(), int32(-1), "written only after the failures")
}

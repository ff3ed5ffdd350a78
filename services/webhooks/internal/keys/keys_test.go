package keys_test

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/webhook/signature"
	"github.com/pcourt/pcourt/services/webhooks/internal/dispatch"
	"github.com/pcourt/pcourt/services/webhooks/internal/keys"
)

// horizon is the default schedule's retry horizon.
var horizon = dispatch.DefaultConfig().RetryHorizon()

func day(s string) time.Time {
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		panic(err)
	}
	return t
}

// writeKey writes a key file for env created on date and returns its id.
func writeKey(t *testing.T, dir string, env signature.Environment, date, ext string) (string, ed25519.PrivateKey) {
	t.Helper()
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	require.NoError(t, err)
	id, err := signature.NewKeyID(env, day(date), pub)
	require.NoError(t, err)
	body := []byte(hex.EncodeToString(priv.Seed()) + "\n")
	if ext == ".pem" {
		body, err = keys.MarshalPEM(priv)
		require.NoError(t, err)
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, id+ext), body, 0o600))
	return id, priv
}

func TestRotationStates(t *testing.T) {
	dir := t.TempDir()
	cfg := keys.DefaultConfig(horizon)
	require.NoError(t, cfg.Validate(horizon))
	old, _ := writeKey(t, dir, signature.Live, "2026-11-01", ".pem")
	cur, _ := writeKey(t, dir, signature.Live, "2026-11-10", ".seed")
	next, _ := writeKey(t, dir, signature.Live, "2026-11-23", ".pem")
	sbx, _ := writeKey(t, dir, signature.Sandbox, "2026-11-01", ".seed")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "README"), []byte("ignored"), 0o600))
	require.NoError(t, os.Mkdir(filepath.Join(dir, "..data"), 0o700))

	loaded, err := keys.LoadDir(cfg, dir)
	require.NoError(t, err)
	ring, err := keys.New(cfg, loaded...)
	require.NoError(t, err)

	now := day("2026-11-23").Add(12 * time.Hour)
	assert.Equal(t, []keys.Status{{old, keys.Expired}, {cur, keys.Active}, {next, keys.Next}}, ring.States(signature.Live, now))
	s, err := ring.Signer(signature.Live, now)
	require.NoError(t, err)
	assert.Equal(t, cur, s.KeyID())

	kids := func(env signature.Environment, at time.Time) []string {
		var out []string
		for _, k := range ring.Published(env, at) {
			out = append(out, k.Kid)
		}
		return out
	}
	assert.Equal(t, []string{cur, next}, kids(signature.Live, now))
	assert.Equal(t, []string{cur, next, sbx}, kids("", now))

	later := day("2026-11-26")
	s, err = ring.Signer(signature.Live, later)
	require.NoError(t, err)
	assert.Equal(t, next, s.KeyID(), "the next key activates after its lead time")
	assert.Equal(t, []string{cur, next}, kids(signature.Live, later), "the superseded key stays published")
	assert.Equal(t, []string{next}, kids(signature.Live, day("2026-12-04")), "until its grace ends")

	_, err = ring.Signer(signature.Sandbox, day("2026-11-02"))
	assert.ErrorIs(t, err, keys.ErrNoActiveKey, "no sandbox key is active before its lead time")
}

func TestLoadRefusesMisnamedAndBrokenFiles(t *testing.T) {
	cfg := keys.DefaultConfig(horizon)
	for name, setup := range map[string]func(dir string){
		"fingerprint of another key": func(dir string) {
			id, _ := writeKey(t, dir, signature.Live, "2026-11-01", ".seed")
			_, priv, _ := ed25519.GenerateKey(rand.Reader)
			require.NoError(t, os.WriteFile(filepath.Join(dir, id+".seed"), []byte(hex.EncodeToString(priv.Seed())), 0o600))
		},
		"not a key id": func(dir string) {
			require.NoError(t, os.WriteFile(filepath.Join(dir, "mykey.seed"), bytes.Repeat([]byte("ab"), 32), 0o600))
		},
		"bad seed": func(dir string) {
			require.NoError(t, os.WriteFile(filepath.Join(dir, "pcwh_live_2026-11-01_000000000000.seed"), []byte("zz"), 0o600))
		},
		"bad pem": func(dir string) {
			require.NoError(t, os.WriteFile(filepath.Join(dir, "pcwh_live_2026-11-01_000000000000.pem"), []byte("nope"), 0o600))
		},
		"empty": func(string) {},
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			setup(dir)
			_, err := keys.LoadDir(cfg, dir)
			assert.Error(t, err)
		})
	}
}

func TestEphemeralKeysSignAtOnceAndNeverPrintThePrivateKey(t *testing.T) {
	now := time.Now()
	ks, err := keys.Ephemeral(now)
	require.NoError(t, err)
	ring, err := keys.New(keys.DefaultConfig(horizon), ks...)
	require.NoError(t, err)
	for _, env := range []signature.Environment{signature.Live, signature.Sandbox} {
		_, err := ring.Signer(env, now)
		require.NoError(t, err, env)
	}
	var buf bytes.Buffer
	slog.New(slog.NewJSONHandler(&buf, nil)).Info("keys", "key", ks[0])
	out := buf.String() + fmt.Sprint(ks[0]) + fmt.Sprintf("%v %+v", ks[0], ks[0])
	assert.Contains(t, out, ks[0].ID)
	// The %+v form of a struct would show unexported fields; String wins.
	assert.NotContains(t, out, hex.EncodeToString(ks[0].Public()))
}

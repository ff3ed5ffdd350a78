package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/webhook/signature"
	"github.com/pcourt/pcourt/services/webhooks/internal/dispatch"
	"github.com/pcourt/pcourt/services/webhooks/internal/keys"
)

func cli(t *testing.T, at time.Time, args ...string) (string, error) {
	t.Helper()
	var out bytes.Buffer
	err := run(context.Background(), args, func(string) string { return "" }, func() time.Time { return at }, &out)
	return out.String(), err
}

func TestRotateAndList(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "keys")
	first := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)
	out, err := cli(t, first, "rotate", "--dir", dir, "--env", "live")
	require.NoError(t, err)
	oldKid := regexp.MustCompile(`kid (pcwh_live_2026-11-01_[0-9a-f]{12})`).FindStringSubmatch(out)
	require.Len(t, oldKid, 2, out)
	assert.Contains(t, out, "signs from 2026-11-03T00:00:00Z", "its day plus the 48 h lead")

	second := time.Date(2026, 11, 23, 15, 0, 0, 0, time.UTC)
	out, err = cli(t, second, "rotate", "--dir", dir, "--env", "live")
	require.NoError(t, err)
	newKid := regexp.MustCompile(`kid (pcwh_live_2026-11-23_[0-9a-f]{12})`).FindStringSubmatch(out)
	require.Len(t, newKid, 2, out)
	grace := keys.GraceAfter(dispatch.DefaultConfig().RetryHorizon())
	retired := time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC)
	assert.Contains(t, out, oldKid[1]+" stops signing at 2026-11-25T00:00:00Z; remove its file after "+retired.Add(grace).Format(time.RFC3339))
	assert.NotContains(t, out, "PRIVATE KEY")

	info, err := os.Stat(filepath.Join(dir, newKid[1]+".pem"))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), info.Mode().Perm(), "the private key file is the owner's only")
	loaded, err := keys.LoadDir(keys.DefaultConfig(dispatch.DefaultConfig().RetryHorizon()), dir)
	require.NoError(t, err, "the service loads what the command wrote")
	require.Len(t, loaded, 2)

	_, err = cli(t, second.Add(time.Hour), "rotate", "--dir", dir, "--env", "live")
	require.Error(t, err, "one key per environment and day")
	_, err = cli(t, second, "rotate", "--dir", dir, "--env", "sandbox")
	require.NoError(t, err, "the other environment is separate")

	out, err = cli(t, second, "list", "--dir", dir)
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.Len(t, lines, 4, out)
	assert.Regexp(t, `^`+oldKid[1]+`\s+live\s+active\s+2026-11-03T00:00:00Z\s+2026-11-25T00:00:00Z\s+\S+Z$`, lines[1])
	assert.Regexp(t, `^`+newKid[1]+`\s+live\s+next\s+2026-11-25T00:00:00Z\s+-\s+-$`, lines[2])
	assert.Regexp(t, `^pcwh_sandbox_2026-11-23_[0-9a-f]{12}\s+sandbox\s+next\s`, lines[3])

	out, err = cli(t, retired.Add(grace+time.Second), "list", "--dir", dir)
	require.NoError(t, err)
	assert.Regexp(t, oldKid[1]+`\s+live\s+expired`, out, "past its grace the old key may go")
}

func TestRefusals(t *testing.T) {
	dir := t.TempDir()
	now := time.Now()
	for _, args := range [][]string{
		{},
		{"frobnicate", "--dir", dir},
		{"rotate", "--env", "live"},
		{"rotate", "--dir", dir, "--env", "staging"},
		{"list", "--dir", dir},
	} {
		_, err := cli(t, now, args...)
		require.Error(t, err, strings.Join(args, " "))
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "pcwh_live_2026-11-01_000000000000.pem"), []byte("broken"), 0o600))
	_, err := cli(t, now, "rotate", "--dir", dir, "--env", string(signature.Live))
	require.Error(t, err, "a directory the service could not load is not rotated further")
}

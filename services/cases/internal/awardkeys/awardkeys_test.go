package awardkeys_test

import (
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/award"
	"github.com/pcourt/pcourt/libs/redistest"
	"github.com/pcourt/pcourt/services/cases/internal/awardkeys"
)

// writeKey writes a <kid>.seed file made on day and returns its kid.
func writeKey(t *testing.T, dir, name string, day time.Time) string {
	t.Helper()
	seed := sha256.Sum256([]byte(name))
	pub := ed25519.NewKeyFromSeed(seed[:]).Public().(ed25519.PublicKey)
	kid := award.KeyID(pub, day)
	require.NoError(t, os.WriteFile(filepath.Join(dir, kid+".seed"), []byte(hex.EncodeToString(seed[:])+"\n"), 0o600))
	return kid
}

func testAward(t *testing.T) []byte {
	t.Helper()
	b, err := award.Document{SchemaVersion: award.SchemaAward, AwardID: "award:c:1", CaseID: "c", Outcome: award.OutcomeClaimDismissed, IssuedAt: "2026-11-27T10:00:00.000Z",
		Tribunal: award.Tribunal{Adjudicator: award.Member{MemberID: "ai", Kind: "autonomous_agent"}, ReviewerOpinion: "agree"}}.Bytes()
	require.NoError(t, err)
	return b
}

// The newest key signs; a rotation adds a key and the awards the old one
// signed keep verifying against the published set, even after the old key
// file is gone from the Secret.
func TestRotationKeepsEveryKeyPublished(t *testing.T) {
	ctx := context.Background()
	rdb := redistest.NewClient(t)
	dir := t.TempDir()
	oldKid := writeKey(t, dir, "old", time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC))

	ring, err := awardkeys.Load(ctx, rdb, awardkeys.Config{Dir: dir}, time.Now())
	require.NoError(t, err)
	body := testAward(t)
	kid, attestation, err := ring.Sign(body)
	require.NoError(t, err)
	require.Equal(t, oldKid, kid)

	require.NoError(t, os.Remove(filepath.Join(dir, oldKid+".seed")))
	newKid := writeKey(t, dir, "new", time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC))
	rotated, err := awardkeys.Load(ctx, rdb, awardkeys.Config{Dir: dir}, time.Now())
	require.NoError(t, err)
	kid, _, err = rotated.Sign(body)
	require.NoError(t, err)
	require.Equal(t, newKid, kid, "the new key signs")

	jwks, err := rotated.JWKS(ctx)
	require.NoError(t, err)
	v, err := award.Verify(body, attestation, jwks)
	require.NoError(t, err, "an award signed by the rotated-out key still verifies")
	require.Equal(t, oldKid, v.KeyID)
}

func TestAKeyDirectoryIsRequiredOutsideDevelopment(t *testing.T) {
	rdb := redistest.NewClient(t)
	_, err := awardkeys.Load(context.Background(), rdb, awardkeys.Config{Dir: t.TempDir()}, time.Now())
	require.ErrorContains(t, err, "no <kid>.seed file")
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "pcaw_20261101_0000000000000000.seed"), []byte("zz"), 0o600))
	_, err = awardkeys.Load(context.Background(), rdb, awardkeys.Config{Dir: dir}, time.Now())
	require.Error(t, err)
}

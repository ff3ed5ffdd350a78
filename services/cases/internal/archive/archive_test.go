package archive_test

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/services/cases/internal/archive"
	"github.com/pcourt/pcourt/services/cases/internal/procedure"
)

var closing = time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)

// A terminated case is closed at its termination and due once the
// retention after it has passed; a case whose procedure runs is never
// due; a retention of zero archives nothing.
func TestATerminatedCaseIsDueOnceItsRetentionHasPassed(t *testing.T) {
	terminated := procedure.Case{ID: "c1", Closed: procedure.StatusTerminated, ClosedAt: closing}
	at, closed := archive.ClosedAt(terminated)
	require.True(t, closed)
	require.Equal(t, closing, at)
	retention := 90 * 24 * time.Hour
	require.False(t, archive.Due(terminated, closing.Add(retention-time.Millisecond), retention))
	require.True(t, archive.Due(terminated, closing.Add(retention), retention))
	require.False(t, archive.Due(terminated, closing.Add(10*retention), 0), "a retention of zero switches archiving off")

	running := procedure.Case{ID: "c2", Stage: procedure.Stage{Kind: procedure.StageEvidence, Round: 1}}
	_, closed = archive.ClosedAt(running)
	require.False(t, closed)
	require.False(t, archive.Due(running, closing.Add(10*retention), retention))

	confirmed := procedure.Case{ID: "c3", Closed: procedure.StatusRecordConfirmed, ClosedAt: closing}
	_, closed = archive.ClosedAt(confirmed)
	require.False(t, closed, "a confirmed record awaits its decision")
}

func document() archive.Document {
	return archive.Document{
		Format: archive.Format, CaseID: "case-1", Tenant: "tenant-test", Environment: "sandbox", ClosedAt: closing,
		Case:      map[string]string{"record": `{"caseId":"case-1"}`, "status": "awarded", "version": "7", "seq": "2"},
		Docket:    []string{`{"eventId":"case-event:case-1:1","sequence":1}`, `{"eventId":"case-event:case-1:2","sequence":2}`},
		Documents: map[string][]byte{"abc": {0x25, 0x50, 0x44, 0x46, 0xff, 0x00}},
	}
}

// The same document always encodes to the same bytes, and decodes back
// whole, binary documents included, under the digest of those bytes.
func TestAnArchiveDocumentRoundTripsUnderItsDigest(t *testing.T) {
	b, digest, err := archive.Encode(document())
	require.NoError(t, err)
	again, digest2, err := archive.Encode(document())
	require.NoError(t, err)
	require.Equal(t, b, again)
	require.Equal(t, digest, digest2)
	require.Equal(t, archive.Digest(b), digest)

	d, err := archive.Decode(b, digest)
	require.NoError(t, err)
	require.Equal(t, document(), d)
}

// Bytes that are not the archive the tombstone names are refused.
func TestAnArchiveThatIsNotWhatTheTombstoneNamesIsRefused(t *testing.T) {
	b, digest, err := archive.Encode(document())
	require.NoError(t, err)
	changed := append([]byte{}, b...)
	changed[len(changed)-2] ^= 1
	_, err = archive.Decode(changed, digest)
	require.True(t, errors.Is(err, archive.ErrCorrupt), "%v", err)

	other := []byte(`{"format":"pcourt-case-archive-v0","caseId":"case-1","case":{"record":"{}"}}`)
	_, err = archive.Decode(other, archive.Digest(other))
	require.True(t, errors.Is(err, archive.ErrCorrupt), "an unknown format: %v", err)

	bad := document()
	bad.Docket = append(bad.Docket, "\xff")
	_, _, err = archive.Encode(bad)
	require.Error(t, err, "text that is not UTF-8 would be altered by JSON, so it is refused")
}

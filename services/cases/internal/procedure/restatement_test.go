package procedure_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/services/cases/internal/evidence"
	"github.com/pcourt/pcourt/services/cases/internal/procedure"
)

func TestFirstSentence(t *testing.T) {
	long := strings.Repeat("word ", 100)
	for _, tc := range []struct{ name, text, want string }{
		{"one sentence of several", "The invoice was never paid. Twelve tickets follow.", "The invoice was never paid."},
		{"a question ends it", "Was it delivered? No.", "Was it delivered?"},
		{"a dot inside a word does not", "Version 2.1 failed on day one. Then it recovered.", "Version 2.1 failed on day one."},
		{"white space collapses", "  Denied:\n\tthe API\n was provisioned.  ", "Denied: the API was provisioned."},
		{"no sentence end: the whole, clipped", "no end in sight", "no end in sight"},
		{"too long: 280 characters", long, strings.TrimSpace(long)[:procedure.RestatementMaxChars]},
		{"clipped by characters, not bytes", strings.Repeat("é", 300), strings.Repeat("é", procedure.RestatementMaxChars)},
		{"empty", "   ", ""},
	} {
		require.Equal(t, tc.want, procedure.FirstSentence(tc.text), tc.name)
	}
}

// The restatement restates every entry of the record in its order, beside
// the digest it was taken from, and is the same for the same record.
func TestTheRestatementIsADeterministicExtraction(t *testing.T) {
	c, _ := awaitingConfirmation(t)
	texts := map[string]string{digestA: "The claimant paid in full. It asks for a refund.", digestB: "Nothing was owed"}

	r, err := procedure.Restate(c, texts)
	require.NoError(t, err)
	require.Equal(t, c.RecordDigest(), r.RecordDigest)
	require.Equal(t, []procedure.RestatementEntry{
		{EntryID: "sub-c", Kind: "submission", Side: "claimant", Digest: digestA, Summary: "The claimant paid in full."},
		{EntryID: "sub-r", Kind: "submission", Side: "respondent", Digest: digestB, Summary: "Nothing was owed"},
	}, r.Entries)
	again, err := procedure.Restate(c, texts)
	require.NoError(t, err)
	require.Equal(t, r, again)

	// A disclosed exhibit is restated by its description; an undisclosed
	// one is not in the record.
	sum := strings.Repeat("ab", 32)
	c.Evidence.Exhibits = []evidence.Exhibit{
		{ID: "exh-1", Side: "respondent", SHA256: sum, Description: "  Delivery\nlog, March ", DisclosedAt: t0},
		{ID: "exh-2", Side: "claimant", SHA256: sum, Description: "kept back"},
	}
	r, err = procedure.Restate(c, texts)
	require.NoError(t, err)
	require.Len(t, r.Entries, 3)
	require.Equal(t, procedure.RestatementEntry{EntryID: "exh-1", Kind: "exhibit", Side: "respondent", Digest: sum, Summary: "Delivery log, March"}, r.Entries[2])
	require.Equal(t, c.RecordDigest(), r.RecordDigest)

	_, err = procedure.Restate(c, map[string]string{digestA: "only one"})
	require.ErrorIs(t, err, procedure.ErrRestatementText, "a text it cannot read is never summarised")
}

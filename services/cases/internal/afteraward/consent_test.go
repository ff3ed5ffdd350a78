package afteraward_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/services/cases/internal/afteraward"
)

// A consent award is final on its issue: nothing after it waits, and
// award_final goes to both sides and the tribunal.
func TestAConsentAwardIsFinalOnIssue(t *testing.T) {
	now := time.Date(2026, 11, 28, 9, 30, 0, 123456789, time.UTC)
	out := afteraward.FinalByConsent(afteraward.State{}, now)
	require.True(t, out.State.Final())
	require.Equal(t, "consent", out.State.FinalBy)
	require.Equal(t, now.Truncate(time.Millisecond), out.State.FinalAt)
	require.Len(t, out.Notes, 1)
	require.Equal(t, afteraward.EventAwardFinal, out.Notes[0].Type)
	require.Equal(t, afteraward.ToSides, out.Notes[0].Audience)
}

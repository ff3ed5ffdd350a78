package procedure_test

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/services/cases/internal/procedure"
)

// hostedCase is a case whose respondent names no partner: the hosted page
// serves it, with the one-time sign-in link filings showed once.
func hostedCase(t *testing.T) procedure.Case {
	t.Helper()
	in := opening(standardPlan(), false)
	in.Participants[1].PartnerID = ""
	in.Capabilities[procedure.CapabilityRespondentLogin] = digestA
	out, err := procedure.Open(in)
	require.NoError(t, err)
	return out.Case
}

func reissue(hash string) procedure.Act {
	return procedure.Act{Kind: procedure.ActReissueLogin, ParticipantID: "p-claim", LoginHash: hash}
}

func TestReissueLoginReplacesTheLinkAndTellsTheClaimantSide(t *testing.T) {
	c := hostedCase(t)
	out := decide(t, c, reissue(digestB), t0.Add(time.Minute))
	require.Equal(t, digestB, out.Case.Capabilities[procedure.CapabilityRespondentLogin], "the new link's hash replaces the old one")
	require.Equal(t, digestA, out.Case.Capabilities[procedure.CapabilityRespondentInvite], "the invitation is untouched")
	require.Equal(t, []time.Time{t0.Add(time.Minute)}, out.Case.LoginReissues)
	require.Equal(t, c.Status(), out.Case.Status(), "the case stays where it was")
	require.Equal(t, []procedure.EventType{procedure.EventRespondentLinkReissued}, types(out.Events))
	require.Equal(t, []procedure.Partner{claimantPartner}, out.Events[0].Recipients, "the claimant's partner delivers the link")
	require.False(t, out.Events[0].ActionRequired)
	require.Equal(t, digestA, c.Capabilities[procedure.CapabilityRespondentLogin], "the case decided on is not changed")
}

func TestReissueLoginForARespondentThatJoinedOnTheHostedPage(t *testing.T) {
	c := decide(t, hostedCase(t), procedure.Act{Kind: procedure.ActJoin, ParticipantID: "p-resp"}, t0).Case
	p, _ := c.Participant("p-resp")
	require.True(t, p.Hosted)
	out := decide(t, c, reissue(digestB), t0.Add(time.Minute))
	require.Equal(t, digestB, out.Case.Capabilities[procedure.CapabilityRespondentLogin])
}

func TestReissueLoginIsLimitedToThreeAnHour(t *testing.T) {
	c := hostedCase(t)
	at := t0.Add(time.Minute)
	for i := range procedure.MaxLoginReissues {
		c = decide(t, c, reissue(digestB), at.Add(time.Duration(i)*10*time.Minute)).Case
	}
	// The fourth within the hour of the first is refused, with when it fits.
	_, err := procedure.Decide(c, reissue(digestA), at.Add(59*time.Minute))
	require.ErrorIs(t, err, procedure.ErrLoginReissueLimited)
	require.ErrorContains(t, err, procedure.Timestamp(at.Add(time.Hour)))
	// An hour after the first, one more fits, and the case forgets the
	// reissues the window no longer counts.
	out := decide(t, c, reissue(digestA), at.Add(time.Hour))
	require.Equal(t, []time.Time{at.Add(10 * time.Minute), at.Add(20 * time.Minute), at.Add(time.Hour)}, out.Case.LoginReissues)
}

func TestReissueLoginRefusals(t *testing.T) {
	hosted := hostedCase(t)
	partnered := open(t, standardPlan(), false) // its respondent names partner-r
	joined := decide(t, hosted, procedure.Act{Kind: procedure.ActJoin, ParticipantID: "p-resp"}, t0).Case
	limited := hosted
	for i := range procedure.MaxLoginReissues {
		limited = decide(t, limited, reissue(digestB), t0.Add(time.Duration(i)*time.Minute)).Case
	}
	pending := decide(t, joined, procedure.Act{Kind: procedure.ActRequestTermination, ParticipantID: "p-claim", TerminationID: "term-1"}, t0).Case
	terminated := decide(t, pending, procedure.Act{Kind: procedure.ActConfirmTermination, ParticipantID: "p-resp", TerminationID: "term-1"}, t0).Case
	require.Equal(t, procedure.StatusTerminated, terminated.Status())

	tests := []struct {
		name string
		c    procedure.Case
		act  procedure.Act
		want error
	}{
		{"without a hash", hosted, reissue(""), procedure.ErrInvalidAct},
		{"with a malformed hash", hosted, reissue("ABC"), procedure.ErrInvalidAct},
		{"by the respondent", joined, procedure.Act{Kind: procedure.ActReissueLogin, ParticipantID: "p-resp", LoginHash: digestB}, procedure.ErrWrongSide},
		{"after the case ended", terminated, reissue(digestB), procedure.ErrCaseClosed},
		{"a respondent its partner acts for", partnered, reissue(digestB), procedure.ErrRespondentNotHosted},
		{"a fourth within the hour", limited, reissue(digestA), procedure.ErrLoginReissueLimited},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := procedure.Decide(tt.c, tt.act, t0.Add(30*time.Minute))
			require.ErrorIs(t, err, tt.want)
			var refusal *procedure.RefusalError
			require.True(t, errors.As(err, &refusal))
			require.NotEmpty(t, refusal.Detail)
			require.Empty(t, cmp.Diff(tt.c, out.Case), "a refusal hands the case back unchanged")
			require.Empty(t, out.Events)
		})
	}
}

// A person signed in on the hosted page with a platform account may link
// the invitation to the account as they join: from then on the account
// acts for the respondent, through its own sessions and tokens, and the
// hosted page's link is needed no more (it has no hosted respondent).
func TestAJoinOnTheHostedPageLinksTheInvitationToAnAccount(t *testing.T) {
	c := decide(t, hostedCase(t), procedure.Act{Kind: procedure.ActJoin, ParticipantID: "p-resp", BindAccountID: "acct_person1"}, t0).Case
	p, _ := c.Participant("p-resp")
	require.Equal(t, "acct_person1", p.AccountID)
	require.False(t, p.Hosted, "an account's participant is no hosted one")
	require.Empty(t, p.PartnerID)
	require.True(t, p.Joined())
	_, err := procedure.Decide(c, reissue(digestB), t0.Add(time.Minute))
	require.ErrorIs(t, err, procedure.ErrRespondentNotHosted, "no sign-in link is reissued for an account's participant")
}

func TestAnAccountIsLinkedOnlyByAnInvitedRespondentsJoin(t *testing.T) {
	partnered := open(t, standardPlan(), false) // its respondent names partner-r
	for name, tc := range map[string]struct {
		c   procedure.Case
		act procedure.Act
	}{
		"a respondent its partner acts for": {partnered, procedure.Act{Kind: procedure.ActJoin, ParticipantID: "p-resp", BindAccountID: "acct_person1"}},
		"with a partner to bind as well":    {hostedCase(t), procedure.Act{Kind: procedure.ActJoin, ParticipantID: "p-resp", BindAccountID: "acct_person1", BindPartnerID: "partner-r"}},
		"with a malformed account id":       {hostedCase(t), procedure.Act{Kind: procedure.ActJoin, ParticipantID: "p-resp", BindAccountID: "acct person"}},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := procedure.Decide(tc.c, tc.act, t0)
			require.ErrorIs(t, err, procedure.ErrInvalidAct)
		})
	}
}

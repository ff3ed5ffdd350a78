package procedure_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/services/cases/internal/procedure"
)

func appoint(participant, id, subject string) procedure.Act {
	return procedure.Act{Kind: procedure.ActAppointRepresentative, ParticipantID: participant, RepresentativeID: id, Subject: subject, Label: "Counsel " + id}
}

// A side appoints, changes and removes its representatives; every change
// is an event to both sides, and the record keeps who was appointed, by
// whom and when, removed ones included.
func TestASideAppointsChangesAndRemovesItsRepresentatives(t *testing.T) {
	c := open(t, standardPlan(), true)
	at := t0.Add(time.Hour)

	out := decide(t, c, appoint("p-resp", "rep_1", "credential:cred_r1"), at)
	require.Equal(t, []procedure.EventType{procedure.EventRepresentativeAppointed}, types(out.Events))
	require.Equal(t, []procedure.Partner{claimantPartner, respondentPartner}, out.Events[0].Recipients, "both sides learn who represents whom")
	require.False(t, out.Events[0].ActionRequired)
	require.Equal(t, []procedure.Representative{{ID: "rep_1", Side: procedure.Respondent, Subject: "credential:cred_r1", Label: "Counsel rep_1",
		AppointedBy: "p-resp", AppointedAt: at}}, out.Case.Representatives)
	require.Equal(t, c.Status(), out.Case.Status(), "representation moves no stage")
	require.NoError(t, out.Case.Validate())

	change := procedure.Act{Kind: procedure.ActChangeRepresentative, ParticipantID: "p-resp", RepresentativeID: "rep_1", Label: "Beta's counsel"}
	out = decide(t, out.Case, change, at.Add(time.Minute))
	require.Equal(t, []procedure.EventType{procedure.EventRepresentativeChanged}, types(out.Events))
	require.Equal(t, "Beta's counsel", out.Case.Representatives[0].Label)
	require.Equal(t, at.Add(time.Minute), out.Case.Representatives[0].ChangedAt)

	remove := procedure.Act{Kind: procedure.ActRemoveRepresentative, ParticipantID: "p-resp", RepresentativeID: "rep_1"}
	out = decide(t, out.Case, remove, at.Add(2*time.Minute))
	require.Equal(t, []procedure.EventType{procedure.EventRepresentativeRemoved}, types(out.Events))
	require.Empty(t, out.Case.ActiveRepresentatives())
	require.Equal(t, at.Add(2*time.Minute), out.Case.Representatives[0].RemovedAt, "a removal is kept, not erased")

	// The subject may be appointed again once removed, under a new id.
	out = decide(t, out.Case, appoint("p-resp", "rep_2", "credential:cred_r1"), at.Add(3*time.Minute))
	require.Len(t, out.Case.ActiveRepresentatives(), 1)
	require.NoError(t, out.Case.Validate())
}

// Every refusal of a representatives' act, in Decide's order, hands the
// case back unchanged.
func TestRepresentativeRefusals(t *testing.T) {
	base := open(t, standardPlan(), true)
	at := t0.Add(time.Hour)
	withRep := decide(t, base, appoint("p-resp", "rep_1", "principal:partner-r/agent-7"), at).Case
	removed := decide(t, withRep, procedure.Act{Kind: procedure.ActRemoveRepresentative, ParticipantID: "p-resp", RepresentativeID: "rep_1"}, at).Case
	full := base
	for i := range procedure.MaxRepresentativesPerSide {
		full = decide(t, full, appoint("p-claim", fmt.Sprintf("rep_c%d", i), fmt.Sprintf("credential:cred_c%d", i)), at).Case
	}
	terminated := decide(t, decide(t, base, procedure.Act{Kind: procedure.ActRequestTermination, ParticipantID: "p-claim", TerminationID: "term-1"}, at).Case,
		procedure.Act{Kind: procedure.ActConfirmTermination, ParticipantID: "p-resp", TerminationID: "term-1"}, at).Case
	notJoined := open(t, standardPlan(), false)

	for _, tc := range []struct {
		name string
		c    procedure.Case
		act  procedure.Act
		want error
	}{
		{"a subject that is neither a credential nor a partner's agent", base, appoint("p-resp", "rep_1", "org-beta"), procedure.ErrInvalidAct},
		{"a principal without its partner", base, appoint("p-resp", "rep_1", "principal:agent-7"), procedure.ErrInvalidAct},
		{"an empty label", base, procedure.Act{Kind: procedure.ActAppointRepresentative, ParticipantID: "p-resp", RepresentativeID: "rep_1", Subject: "credential:x"}, procedure.ErrInvalidAct},
		{"a label too long", base, procedure.Act{Kind: procedure.ActAppointRepresentative, ParticipantID: "p-resp", RepresentativeID: "rep_1", Subject: "credential:x", Label: strings.Repeat("a", 121)}, procedure.ErrInvalidAct},
		{"a label with a control character", base, procedure.Act{Kind: procedure.ActAppointRepresentative, ParticipantID: "p-resp", RepresentativeID: "rep_1", Subject: "credential:x", Label: "a\x00b"}, procedure.ErrInvalidAct},
		{"a change without a label", withRep, procedure.Act{Kind: procedure.ActChangeRepresentative, ParticipantID: "p-resp", RepresentativeID: "rep_1"}, procedure.ErrInvalidAct},
		{"no such participant", base, appoint("p-nobody", "rep_1", "credential:x"), procedure.ErrNotAParticipant},
		{"a respondent that has not joined", notJoined, appoint("p-resp", "rep_1", "credential:x"), procedure.ErrNotAParticipant},
		{"a terminated case", terminated, appoint("p-resp", "rep_1", "credential:x"), procedure.ErrCaseClosed},
		{"an id already used", withRep, appoint("p-resp", "rep_1", "credential:y"), procedure.ErrInvalidAct},
		{"a subject that represents a side already", withRep, appoint("p-resp", "rep_2", "principal:partner-r/agent-7"), procedure.ErrRepresentativeExists},
		{"the other side's representative for this side too", withRep, appoint("p-claim", "rep_2", "principal:partner-r/agent-7"), procedure.ErrRepresentativeExists},
		{"an eleventh representative", full, appoint("p-claim", "rep_x", "credential:cred_x"), procedure.ErrRepresentativeLimitReached},
		{"changing an unknown representative", withRep, procedure.Act{Kind: procedure.ActChangeRepresentative, ParticipantID: "p-resp", RepresentativeID: "rep_9", Label: "x"}, procedure.ErrRepresentativeNotFound},
		{"removing the other side's representative", withRep, procedure.Act{Kind: procedure.ActRemoveRepresentative, ParticipantID: "p-claim", RepresentativeID: "rep_1"}, procedure.ErrWrongSide},
		{"changing the other side's representative", withRep, procedure.Act{Kind: procedure.ActChangeRepresentative, ParticipantID: "p-claim", RepresentativeID: "rep_1", Label: "ours now"}, procedure.ErrWrongSide},
		{"removing a removed representative", removed, procedure.Act{Kind: procedure.ActRemoveRepresentative, ParticipantID: "p-resp", RepresentativeID: "rep_1"}, procedure.ErrRepresentativeNotFound},
		{"changing a removed representative", removed, procedure.Act{Kind: procedure.ActChangeRepresentative, ParticipantID: "p-resp", RepresentativeID: "rep_1", Label: "back"}, procedure.ErrRepresentativeNotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := tc.c
			out, err := procedure.Decide(tc.c, tc.act, at)
			require.ErrorIs(t, err, tc.want)
			require.Equal(t, before, out.Case)
			require.Empty(t, out.Events)
		})
	}
}

// A side keeps its representatives after the record closes and after the
// award; only a terminated case takes no more changes.
func TestRepresentationOutlivesTheRecord(t *testing.T) {
	c := open(t, standardPlan(), true)
	c.Closed, c.ClosedAt = procedure.StatusRecordConfirmed, t0
	out := decide(t, c, appoint("p-claim", "rep_1", "credential:cred_c"), t0.Add(time.Hour))
	require.Equal(t, []procedure.EventType{procedure.EventRepresentativeAppointed}, types(out.Events))
}

package draft_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/services/filings/internal/draft"
)

func permutations(ids []string) [][]string {
	if len(ids) <= 1 {
		return [][]string{append([]string(nil), ids...)}
	}
	var out [][]string
	for i, first := range ids {
		rest := append(append([]string(nil), ids[:i]...), ids[i+1:]...)
		for _, p := range permutations(rest) {
			out = append(out, append([]string{first}, p...))
		}
	}
	return out
}

func TestConfirmOpensOnTheLastConfirmationInAnyOrder(t *testing.T) {
	drafts := []struct {
		name string
		in   draft.PrepareInput
	}{
		{"two participants", twoParty()},
		{"three participants, one agent, two partners", threeParty()},
	}
	for _, dd := range drafts {
		var ids []string
		for _, p := range dd.in.Participants {
			ids = append(ids, p.ID)
		}
		for _, order := range permutations(ids) {
			t.Run(dd.name+"/"+strings.Join(order, ","), func(t *testing.T) {
				d := mustPrepare(t, dd.in)
				digest := d.Digest()
				for n, id := range order {
					now := fixedNow.Add(time.Duration(n+1) * time.Minute)
					out := confirm(t, d, id, now)
					now = now.Truncate(time.Millisecond) // what a draft keeps
					last := n == len(order)-1
					require.Equal(t, last, out.Opened, "opened after %s", id)
					require.Equal(t, last, out.Last, "last after %s", id)
					require.Equal(t, digest, out.Draft.Digest(), "confirming does not change the digest")

					c := confirmationOf(t, out.Draft, id)
					require.Equal(t, draft.ConfirmationConfirmed, c.Status)
					require.Equal(t, draft.MethodProtocolAct, c.Method)
					require.Equal(t, now, c.ConfirmedAt)
					require.Equal(t, "conf-ref-"+id, c.ConfirmationReference)
					p, _ := out.Draft.Participant(id)
					if p.AgentID != "" {
						require.Equal(t, p.AgentID, c.ActorID)
					} else {
						require.Equal(t, actorFor(t, d, id).CredentialID, c.ActorID)
					}
					if last {
						require.Equal(t, draft.StatusOpened, out.Draft.Status())
						require.Equal(t, now, out.Draft.OpenedAt())
					} else {
						require.Equal(t, draft.StatusAwaitingConfirmations, out.Draft.Status())
						require.True(t, out.Draft.OpenedAt().IsZero())
					}
					// The input draft is never changed.
					require.Equal(t, draft.ConfirmationPending, confirmationOf(t, d, id).Status)
					d = out.Draft
				}
				reread, err := roundTrip(d)
				require.NoError(t, err)
				require.True(t, d.Equal(reread), "the opened draft survives storage")
			})
		}
	}
}

// TestConfirmRefusals has one case per refusal code, each against an
// otherwise correct confirmation, and checks that the draft handed back is
// the draft handed in.
func TestConfirmRefusals(t *testing.T) {
	base := mustPrepare(t, threeParty())
	halfway := confirm(t, base, "p-claimant", fixedNow).Draft
	opened := func() draft.Draft {
		d := confirm(t, halfway, "p-respondent", fixedNow).Draft
		return confirm(t, d, "p-carrier", fixedNow).Draft
	}()
	initiatorOnly := func() draft.Draft {
		in := twoParty()
		in.ConfirmationMode = draft.ConfirmInitiatorOnly
		return mustPrepare(t, in)
	}()
	legacy := func() draft.Draft {
		in := threeParty()
		in.Legacy = true
		return mustPrepare(t, in)
	}()

	tests := []struct {
		name   string
		d      draft.Draft
		id     string
		mutate func(*draft.ConfirmRequest, *draft.Actor)
		now    time.Time
		code   draft.RefusalCode
		want   error
	}{
		{"method is not protocol_act", base, "p-claimant", func(r *draft.ConfirmRequest, _ *draft.Actor) { r.ConfirmationMethod = "click" }, fixedNow, draft.CodeInvalidConfirmation, draft.ErrInvalidConfirmation},
		{"reference missing", base, "p-claimant", func(r *draft.ConfirmRequest, _ *draft.Actor) { r.ConfirmationReference = "" }, fixedNow, draft.CodeInvalidConfirmation, draft.ErrInvalidConfirmation},
		{"reference with spaces", base, "p-claimant", func(r *draft.ConfirmRequest, _ *draft.Actor) { r.ConfirmationReference = "my ref" }, fixedNow, draft.CodeInvalidConfirmation, draft.ErrInvalidConfirmation},
		{"actor id missing", base, "p-claimant", func(r *draft.ConfirmRequest, _ *draft.Actor) { r.ActorID = "" }, fixedNow, draft.CodeInvalidConfirmation, draft.ErrInvalidConfirmation},
		{"digest in upper case", base, "p-claimant", func(r *draft.ConfirmRequest, _ *draft.Actor) { r.DraftDigest = strings.ToUpper(r.DraftDigest) }, fixedNow, draft.CodeInvalidConfirmation, draft.ErrInvalidConfirmation},
		{"digest short", base, "p-claimant", func(r *draft.ConfirmRequest, _ *draft.Actor) { r.DraftDigest = r.DraftDigest[:63] }, fixedNow, draft.CodeInvalidConfirmation, draft.ErrInvalidConfirmation},
		{"statement too long", base, "p-claimant", func(r *draft.ConfirmRequest, _ *draft.Actor) { r.ConfirmationStatement = strings.Repeat("x", 4097) }, fixedNow, draft.CodeInvalidConfirmation, draft.ErrInvalidConfirmation},
		{"other tenant", base, "p-claimant", func(_ *draft.ConfirmRequest, a *draft.Actor) { a.TenantID = "tn_other" }, fixedNow, draft.CodeDraftNotFound, draft.ErrDraftNotFound},
		{"other environment", base, "p-claimant", func(_ *draft.ConfirmRequest, a *draft.Actor) { a.Environment = "live" }, fixedNow, draft.CodeDraftNotFound, draft.ErrDraftNotFound},
		{"legacy route for a v2 draft", base, "p-claimant", func(_ *draft.ConfirmRequest, a *draft.Actor) { a.Route = draft.RouteLegacy }, fixedNow, draft.CodeWrongRouteFamily, draft.ErrWrongRouteFamily},
		{"v2 route for a legacy draft", legacy, "p-claimant", func(_ *draft.ConfirmRequest, a *draft.Actor) { a.Route = draft.RouteV2 }, fixedNow, draft.CodeWrongRouteFamily, draft.ErrWrongRouteFamily},
		{"unknown participant", base, "p-claimant", func(r *draft.ConfirmRequest, _ *draft.Actor) { r.ParticipantID = "p-nobody" }, fixedNow, draft.CodeNotAParticipant, draft.ErrNotAParticipant},
		{"credential of another partner", base, "p-carrier", func(_ *draft.ConfirmRequest, a *draft.Actor) { a.PartnerID = partner }, fixedNow, draft.CodeForbidden, draft.ErrForbidden},
		{"claimant agent for a respondent", base, "p-carrier", func(_ *draft.ConfirmRequest, a *draft.Actor) { a.Role = draft.RoleClaimantAgent }, fixedNow, draft.CodeForbidden, draft.ErrForbidden},
		{"respondent agent for a claimant", base, "p-claimant", func(_ *draft.ConfirmRequest, a *draft.Actor) { a.Role = draft.RoleRespondentAgent }, fixedNow, draft.CodeForbidden, draft.ErrForbidden},
		{"unknown role", base, "p-claimant", func(_ *draft.ConfirmRequest, a *draft.Actor) { a.Role = "admin" }, fixedNow, draft.CodeForbidden, draft.ErrForbidden},
		{"actor id is not the credential", base, "p-claimant", func(r *draft.ConfirmRequest, _ *draft.Actor) { r.ActorID = "cred_someone_else" }, fixedNow, draft.CodeActorMismatch, draft.ErrActorMismatch},
		{"actor id is not the participant's agent", base, "p-respondent", func(r *draft.ConfirmRequest, a *draft.Actor) { r.ActorID = a.CredentialID }, fixedNow, draft.CodeActorMismatch, draft.ErrActorMismatch},
		{"orchestrator for an agent_credential participant", base, "p-respondent", func(r *draft.ConfirmRequest, a *draft.Actor) {
			*a = orchestratorOf(partner)
		}, fixedNow, draft.CodeActorMismatch, draft.ErrActorMismatch},
		{"credential of another agent", base, "p-respondent", func(r *draft.ConfirmRequest, a *draft.Actor) { a.AgentID = "agt_other" }, fixedNow, draft.CodeActorMismatch, draft.ErrActorMismatch},
		{"principal is not the participant's", base, "p-claimant", func(r *draft.ConfirmRequest, _ *draft.Actor) { r.PrincipalID = "org:northwind-supplies" }, fixedNow, draft.CodePrincipalMismatch, draft.ErrPrincipalMismatch},
		{"draft already opened", opened, "p-claimant", nil, fixedNow, draft.CodeDraftAlreadyOpened, draft.ErrDraftAlreadyOpened},
		{"draft expired", base, "p-claimant", nil, base.ExpiresAt(), draft.CodeDraftExpired, draft.ErrDraftExpired},
		{"confirmation not required", initiatorOnly, "p-respondent", nil, fixedNow, draft.CodeNotRequired, draft.ErrNotRequired},
		{"already confirmed", halfway, "p-claimant", nil, fixedNow, draft.CodeAlreadyConfirmed, draft.ErrAlreadyConfirmed},
		{"digest of another draft", base, "p-claimant", func(r *draft.ConfirmRequest, _ *draft.Actor) { r.DraftDigest = strings.Repeat("0", 64) }, fixedNow, draft.CodeDigestMismatch, draft.ErrDigestMismatch},
		{"statement of another participant", base, "p-claimant", func(r *draft.ConfirmRequest, _ *draft.Actor) {
			r.ConfirmationStatement = statementOf(t, base, "p-carrier")
		}, fixedNow, draft.CodeStatementMismatch, draft.ErrStatementMismatch},
	}
	seen := map[draft.RefusalCode]bool{}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			actor := actorFor(t, tt.d, tt.id)
			req := requestFor(t, tt.d, tt.id, actor)
			if tt.mutate != nil {
				tt.mutate(&req, &actor)
			}
			out, err := draft.Confirm(tt.d, req, actor, tt.now)
			var refusal *draft.RefusalError
			require.ErrorAs(t, err, &refusal)
			require.Equal(t, tt.code, refusal.Code, "detail: %s", refusal.Detail)
			require.ErrorIs(t, err, tt.want)
			require.NotEmpty(t, refusal.Detail)
			require.False(t, out.Opened)
			require.False(t, out.Last)
			requireUnchanged(t, tt.d, out.Draft)
			seen[tt.code] = true
		})
	}
	for _, code := range []draft.RefusalCode{
		draft.CodeInvalidConfirmation, draft.CodeDraftNotFound, draft.CodeWrongRouteFamily, draft.CodeNotAParticipant,
		draft.CodeForbidden, draft.CodeActorMismatch, draft.CodePrincipalMismatch, draft.CodeDraftAlreadyOpened,
		draft.CodeDraftExpired, draft.CodeNotRequired, draft.CodeAlreadyConfirmed, draft.CodeDigestMismatch, draft.CodeStatementMismatch,
	} {
		require.True(t, seen[code], "no case for %s", code)
	}
}

func TestConfirmRefusesABadActor(t *testing.T) {
	d := mustPrepare(t, twoParty())
	actor := actorFor(t, d, "p-claimant")
	req := requestFor(t, d, "p-claimant", actor)
	for _, mutate := range []func(*draft.Actor){
		func(a *draft.Actor) { a.CredentialID = "" },
		func(a *draft.Actor) { a.Route = "" },
	} {
		a := actor
		mutate(&a)
		out, err := draft.Confirm(d, req, a, fixedNow)
		require.ErrorIs(t, err, draft.ErrInvalidActor)
		requireUnchanged(t, d, out.Draft)
	}
}

func TestConfirmExpiry(t *testing.T) {
	d := mustPrepare(t, twoParty())
	actor := actorFor(t, d, "p-claimant")
	req := requestFor(t, d, "p-claimant", actor)

	_, err := draft.Confirm(d, req, actor, d.ExpiresAt().Add(-time.Millisecond))
	require.NoError(t, err, "the last millisecond before expiry is in time")

	for _, at := range []time.Time{d.ExpiresAt(), d.ExpiresAt().Add(time.Nanosecond), d.ExpiresAt().Add(24 * time.Hour)} {
		out, err := draft.Confirm(d, req, actor, at)
		require.ErrorIs(t, err, draft.ErrDraftExpired, at)
		require.Contains(t, err.Error(), "expired at 2026-11-05T09:30:00.123Z")
		requireUnchanged(t, d, out.Draft)
	}
}

func TestConfirmRouteFamilies(t *testing.T) {
	prepared := map[draft.Route]draft.PrepareInput{}
	for _, r := range []draft.Route{draft.RouteLegacy, draft.RouteV2, draft.RouteCanonical} {
		in := twoParty()
		in.Legacy = r == draft.RouteLegacy
		in.Canonical = r == draft.RouteCanonical
		if in.Canonical {
			in.ClaimantAcceptanceIdentity = "acct:maria.lopez"
		}
		prepared[r] = in
	}
	tests := []struct {
		preparedOn, confirmedOn draft.Route
		ok                      bool
	}{
		{draft.RouteLegacy, draft.RouteLegacy, true},
		{draft.RouteLegacy, draft.RouteV2, false},
		{draft.RouteLegacy, draft.RouteCanonical, false},
		{draft.RouteV2, draft.RouteV2, true},
		{draft.RouteV2, draft.RouteCanonical, true},
		{draft.RouteV2, draft.RouteLegacy, false},
		{draft.RouteCanonical, draft.RouteCanonical, true},
		{draft.RouteCanonical, draft.RouteV2, true},
		{draft.RouteCanonical, draft.RouteLegacy, false},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("prepared on %s, confirmed on %s", tt.preparedOn, tt.confirmedOn), func(t *testing.T) {
			d := mustPrepare(t, prepared[tt.preparedOn])
			require.Equal(t, tt.preparedOn, d.PreparedVia())
			require.Equal(t, tt.preparedOn == draft.RouteLegacy, d.Legacy())
			require.Equal(t, tt.preparedOn == draft.RouteCanonical, d.Canonical())
			actor := actorFor(t, d, "p-claimant")
			actor.Route = tt.confirmedOn
			out, err := draft.Confirm(d, requestFor(t, d, "p-claimant", actor), actor, fixedNow)
			if tt.ok {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, draft.ErrWrongRouteFamily)
			if tt.preparedOn == draft.RouteLegacy {
				require.Contains(t, err.Error(), "POST /api/v2/filings/"+testIDs.draftID+"/confirm")
			} else {
				require.Contains(t, err.Error(), "POST /api/filings/"+testIDs.draftID+"/confirmations")
			}
			requireUnchanged(t, d, out.Draft)
		})
	}
}

func TestRouteDoesNotChangeTheDigest(t *testing.T) {
	v2 := mustPrepare(t, twoParty())
	in := twoParty()
	in.Legacy = true
	require.Equal(t, v2.Digest(), mustPrepare(t, in).Digest(), "the route is not a term of the draft")
}

func TestConfirmStatementMustBeExact(t *testing.T) {
	d := mustPrepare(t, twoParty())
	actor := actorFor(t, d, "p-claimant")
	statement := statementOf(t, d, "p-claimant")
	flip := func(i int) string {
		b := []byte(statement)
		b[i] ^= 0x01
		return string(b)
	}
	variants := map[string]string{
		"first byte":            flip(0),
		"a middle byte":         flip(len(statement) / 2),
		"last byte":             flip(len(statement) - 1),
		"a byte of the digest":  strings.Replace(statement, d.Digest(), d.Digest()[:63]+"x", 1),
		"trailing space":        statement + " ",
		"trailing newline":      statement + "\n",
		"leading space":         " " + statement,
		"double space":          strings.Replace(statement, " confirm", "  confirm", 1),
		"without the full stop": strings.TrimSuffix(statement, "."),
		"upper-cased":           strings.ToUpper(statement),
		"curly comma":           strings.Replace(statement, ",", "\uFF0C", 1),
		"non-breaking space":    strings.Replace(statement, " ", "\u00a0", 1),
		"another draft's":       strings.Replace(statement, testIDs.draftID, "dr_other", 1),
	}
	for name, v := range variants {
		t.Run(name, func(t *testing.T) {
			require.NotEqual(t, statement, v)
			req := requestFor(t, d, "p-claimant", actor)
			req.ConfirmationStatement = v
			out, err := draft.Confirm(d, req, actor, fixedNow)
			require.ErrorIs(t, err, draft.ErrStatementMismatch)
			requireUnchanged(t, d, out.Draft)
		})
	}
	req := requestFor(t, d, "p-claimant", actor)
	_, err := draft.Confirm(d, req, actor, fixedNow)
	require.NoError(t, err, "the exact statement is accepted")
}

func TestAgentsConfirmOnlyForTheirSide(t *testing.T) {
	d := mustPrepare(t, twoParty())
	for _, tt := range []struct {
		participant string
		side        draft.Side
		ok          bool
	}{
		{"p-claimant", draft.SideClaimant, true},
		{"p-claimant", draft.SideRespondent, false},
		{"p-respondent", draft.SideRespondent, true},
		{"p-respondent", draft.SideClaimant, false},
	} {
		actor := agentOf(partner, tt.side, "")
		out, err := draft.Confirm(d, requestFor(t, d, tt.participant, actor), actor, fixedNow)
		if tt.ok {
			require.NoError(t, err)
			require.Equal(t, actor.CredentialID, confirmationOf(t, out.Draft, tt.participant).ActorID)
			continue
		}
		require.ErrorIs(t, err, draft.ErrForbidden)
	}
}

func TestPartnerCredentialParticipantWithAnAgentID(t *testing.T) {
	in := twoParty()
	in.Participants[1].AgentID = "agt_resp"
	d := mustPrepare(t, in)

	// An orchestrator may confirm, declaring the participant's agent id.
	orch := orchestratorOf(partner)
	req := requestFor(t, d, "p-respondent", orch)
	require.Equal(t, "agt_resp", req.ActorID)
	_, err := draft.Confirm(d, req, orch, fixedNow)
	require.NoError(t, err)

	// Declaring the credential instead is an actor mismatch.
	req.ActorID = orch.CredentialID
	_, err = draft.Confirm(d, req, orch, fixedNow)
	require.ErrorIs(t, err, draft.ErrActorMismatch)

	// The agent's own credential works; another agent's does not.
	own := agentOf(partner, draft.SideRespondent, "agt_resp")
	_, err = draft.Confirm(d, requestFor(t, d, "p-respondent", own), own, fixedNow)
	require.NoError(t, err)
	other := agentOf(partner, draft.SideRespondent, "agt_else")
	_, err = draft.Confirm(d, requestFor(t, d, "p-respondent", other), other, fixedNow)
	require.ErrorIs(t, err, draft.ErrActorMismatch)
}

func TestRefusalErrorMatching(t *testing.T) {
	err := error(&draft.RefusalError{Code: draft.CodeDigestMismatch, Detail: "stale"})
	require.ErrorIs(t, err, draft.ErrDigestMismatch)
	require.NotErrorIs(t, err, draft.ErrStatementMismatch)
	require.ErrorIs(t, fmt.Errorf("confirming draft dr_1: %w", err), draft.ErrDigestMismatch)
	require.Equal(t, "digest_mismatch: stale", err.Error())
	require.Equal(t, "draft_expired", draft.ErrDraftExpired.Error())
}

package draft_test

import (
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/services/filings/internal/draft"
)

func TestRequiredParticipantsPerPolicy(t *testing.T) {
	type want struct {
		required bool
		status   draft.ConfirmationStatus
	}
	required := want{true, draft.ConfirmationPending}
	notRequired := want{false, draft.ConfirmationNotRequired}
	threeWay := func(mode draft.ConfirmationMode, intake draft.IntakeMode, respondentMode draft.AuthorizationMode) draft.PrepareInput {
		in := threeParty()
		in.IntakeMode, in.ConfirmationMode = intake, mode
		in.Participants[2].AuthorizationMode = respondentMode
		return in
	}
	tests := []struct {
		name string
		in   draft.PrepareInput
		want map[string]want
	}{
		{"initiator_only requires the initiator alone",
			threeWay(draft.ConfirmInitiatorOnly, draft.IntakeClaimantInitiated, draft.AuthPartnerCredential),
			map[string]want{"p-claimant": required, "p-respondent": notRequired, "p-carrier": notRequired}},
		{"all_participants requires everyone",
			threeWay(draft.ConfirmAllParticipants, draft.IntakeBilateralAPI, draft.AuthPartnerCredential),
			map[string]want{"p-claimant": required, "p-respondent": required, "p-carrier": required}},
		{"bundled_authorizations requires everyone, consents included",
			threeWay(draft.ConfirmBundledAuthorizations, draft.IntakeBilateralAPI, draft.AuthBundledAuthorization),
			map[string]want{"p-claimant": required, "p-respondent": required, "p-carrier": required}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := mustPrepare(t, tt.in)
			got := map[string]want{}
			for _, c := range d.Confirmations() {
				got[c.ParticipantID] = want{c.Required, c.Status}
			}
			require.Equal(t, tt.want, got)
			require.Equal(t, draft.StatusAwaitingConfirmations, d.Status())
		})
	}
}

func TestInitiatorOnlyOpensOnTheInitiator(t *testing.T) {
	in := twoParty()
	in.ConfirmationMode = draft.ConfirmInitiatorOnly
	d := mustPrepare(t, in)

	out := confirm(t, d, "p-claimant", fixedNow.Add(time.Minute))
	require.True(t, out.Opened)
	require.True(t, out.Last)
	require.Equal(t, draft.StatusOpened, out.Draft.Status())

	_, err := draft.Confirm(d, requestFor(t, d, "p-respondent", actorFor(t, d, "p-respondent")), actorFor(t, d, "p-respondent"), fixedNow)
	require.ErrorIs(t, err, draft.ErrNotRequired)
}

func TestBundledConsentCountsAsConfirmation(t *testing.T) {
	d := mustPrepare(t, bundled())
	at := fixedNow.Add(time.Minute)

	out, err := d.WithConsent("p-respondent", consenterFor(t, d, "p-respondent"), at, "consent_01JC5")
	require.NoError(t, err)
	require.False(t, out.Opened)
	require.False(t, out.Last)
	require.Equal(t, draft.StatusAwaitingConfirmations, out.Draft.Status())
	c := confirmationOf(t, out.Draft, "p-respondent")
	require.Equal(t, draft.ConfirmationConfirmed, c.Status)
	require.Equal(t, draft.MethodRecordedConsent, c.Method)
	require.Equal(t, at.Truncate(time.Millisecond), c.ConfirmedAt)
	require.Empty(t, c.ActorID)
	require.Equal(t, "consent_01JC5", c.ConfirmationReference)
	require.Equal(t, d.Digest(), out.Draft.Digest(), "recording a consent does not change the digest")

	opened := confirm(t, out.Draft, "p-claimant", at.Add(time.Minute))
	require.True(t, opened.Opened)
	require.True(t, opened.Last)
}

func TestBundledConsentAsTheLastConfirmationOpens(t *testing.T) {
	d := confirm(t, mustPrepare(t, bundled()), "p-claimant", fixedNow).Draft
	out, err := d.WithConsent("p-respondent", consenterFor(t, d, "p-respondent"), fixedNow.Add(time.Second), "consent_01JC5")
	require.NoError(t, err)
	require.True(t, out.Opened)
	require.True(t, out.Last)
	require.Equal(t, draft.StatusOpened, out.Draft.Status())
	require.Equal(t, fixedNow.Add(time.Second).Truncate(time.Millisecond), out.Draft.OpenedAt())
}

func TestBundledParticipantMayConfirmItself(t *testing.T) {
	d := mustPrepare(t, bundled())
	out := confirm(t, d, "p-respondent", fixedNow)
	c := confirmationOf(t, out.Draft, "p-respondent")
	require.Equal(t, draft.MethodProtocolAct, c.Method)

	_, err := out.Draft.WithConsent("p-respondent", consenterFor(t, out.Draft, "p-respondent"), fixedNow, "consent_01JC5")
	require.ErrorIs(t, err, draft.ErrAlreadyConfirmed)
}

func TestWithConsentRefusals(t *testing.T) {
	b := mustPrepare(t, bundled())
	openedBundle := func() draft.Draft {
		d := confirm(t, b, "p-claimant", fixedNow).Draft
		out, err := d.WithConsent("p-respondent", consenterFor(t, d, "p-respondent"), fixedNow, "consent_1")
		require.NoError(t, err)
		return out.Draft
	}()
	tests := []struct {
		name      string
		d         draft.Draft
		id        string
		at        time.Time
		reference string
		want      error
	}{
		{"reference missing", b, "p-respondent", fixedNow, "", draft.ErrInvalidConfirmation},
		{"reference with a space", b, "p-respondent", fixedNow, "consent 1", draft.ErrInvalidConfirmation},
		{"unknown participant", b, "p-nobody", fixedNow, "consent_1", draft.ErrNotAParticipant},
		{"participant that is not bundled", b, "p-claimant", fixedNow, "consent_1", draft.ErrNotRequired},
		{"policy that is not bundled", mustPrepare(t, twoParty()), "p-respondent", fixedNow, "consent_1", draft.ErrNotRequired},
		{"draft expired", b, "p-respondent", b.ExpiresAt(), "consent_1", draft.ErrDraftExpired},
		{"draft opened", openedBundle, "p-respondent", fixedNow, "consent_2", draft.ErrDraftAlreadyOpened},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := tt.d.WithConsent(tt.id, consenterFor(t, tt.d, tt.id), tt.at, tt.reference)
			require.ErrorIs(t, err, tt.want)
			requireUnchanged(t, tt.d, out.Draft)
			require.False(t, out.Opened)
		})
	}

	// A consent speaks for the participant: only its partner's orchestrator
	// records it.
	respondentPartner := consenterFor(t, b, "p-respondent")
	otherTenant := respondentPartner
	otherTenant.TenantID = "tn_other"
	agent := respondentPartner
	agent.Role = draft.RoleRespondentAgent
	for _, tt := range []struct {
		name  string
		actor draft.Actor
		want  error
	}{
		{"another tenant", otherTenant, draft.ErrDraftNotFound},
		{"the claimant's partner", orchestratorOf(partner), draft.ErrForbidden},
		{"another partner", orchestratorOf("pt_someone_else"), draft.ErrForbidden},
		{"an agent of the partner", agent, draft.ErrForbidden},
	} {
		t.Run(tt.name, func(t *testing.T) {
			out, err := b.WithConsent("p-respondent", tt.actor, fixedNow, "consent_1")
			require.ErrorIs(t, err, tt.want)
			requireUnchanged(t, b, out.Draft)
		})
	}
}

// collectFirst is a draft whose fee must be paid before it opens: a
// one-sided filing with a fee of at least USD 500.
func collectFirst(t testing.TB) draft.Draft {
	in := twoParty()
	in.Claim.AmountInDisputeMinor = 30_000_000
	d := mustPrepare(t, in)
	require.Equal(t, draft.CollectBeforeOpening, d.Fee().Collection)
	return d
}

func TestUnpaidCollectBeforeOpeningWaitsInReadyToOpen(t *testing.T) {
	d := collectFirst(t)
	d = confirm(t, d, "p-claimant", fixedNow).Draft
	out := confirm(t, d, "p-respondent", fixedNow.Add(time.Minute))
	require.True(t, out.Last)
	require.False(t, out.Opened)
	require.Equal(t, draft.StatusReadyToOpen, out.Draft.Status())
	require.True(t, out.Draft.OpenedAt().IsZero())

	// Every confirmation is in: more are refused.
	_, err := draft.Confirm(out.Draft, requestFor(t, out.Draft, "p-claimant", actorFor(t, out.Draft, "p-claimant")), actorFor(t, out.Draft, "p-claimant"), fixedNow)
	require.ErrorIs(t, err, draft.ErrAlreadyConfirmed)

	paidAt := fixedNow.Add(2 * time.Minute)
	paid, err := out.Draft.WithFeePaid(paidAt)
	require.NoError(t, err)
	require.True(t, paid.Opened)
	require.False(t, paid.Last)
	require.Equal(t, draft.StatusOpened, paid.Draft.Status())
	require.Equal(t, paidAt.Truncate(time.Millisecond), paid.Draft.OpenedAt())
	require.Equal(t, draft.FeePaid, paid.Draft.Fee().Status)
	require.Equal(t, paidAt.Truncate(time.Millisecond), paid.Draft.Fee().PaidAt)
	require.Equal(t, d.Digest(), paid.Draft.Digest(), "paying does not change the digest")
}

func TestPaidInAdvanceOpensOnTheLastConfirmation(t *testing.T) {
	paid, err := collectFirst(t).WithFeePaid(fixedNow)
	require.NoError(t, err)
	require.False(t, paid.Opened)
	require.Equal(t, draft.StatusAwaitingConfirmations, paid.Draft.Status())

	d := confirm(t, paid.Draft, "p-respondent", fixedNow).Draft
	out := confirm(t, d, "p-claimant", fixedNow)
	require.True(t, out.Opened)
	require.Equal(t, draft.StatusOpened, out.Draft.Status())
}

func TestInvoicedFeeDoesNotGateOpening(t *testing.T) {
	d := mustPrepare(t, twoParty())
	require.Equal(t, draft.InvoiceAfterOpening, d.Fee().Collection)
	d = confirm(t, d, "p-claimant", fixedNow).Draft
	out := confirm(t, d, "p-respondent", fixedNow)
	require.True(t, out.Opened)

	// The invoice may be settled after opening.
	paid, err := out.Draft.WithFeePaid(out.Draft.ExpiresAt().Add(time.Hour))
	require.NoError(t, err)
	require.False(t, paid.Opened)
	require.Equal(t, draft.StatusOpened, paid.Draft.Status())
	require.Equal(t, out.Draft.OpenedAt(), paid.Draft.OpenedAt())
}

func TestWithFeePaidRefusals(t *testing.T) {
	d := collectFirst(t)
	paid, err := d.WithFeePaid(fixedNow)
	require.NoError(t, err)

	out, err := paid.Draft.WithFeePaid(fixedNow.Add(time.Second))
	require.ErrorIs(t, err, draft.ErrFeeAlreadyPaid)
	requireUnchanged(t, paid.Draft, out.Draft)

	out, err = d.WithFeePaid(d.ExpiresAt())
	require.ErrorIs(t, err, draft.ErrDraftExpired)
	requireUnchanged(t, d, out.Draft)
}

func TestPartnerAuthority(t *testing.T) {
	d := mustPrepare(t, threeParty())
	tests := []struct {
		partner string
		sides   []draft.Side
	}{
		{partner, []draft.Side{draft.SideClaimant, draft.SideRespondent}},
		{otherPartner, []draft.Side{draft.SideRespondent}},
		{"pt_stranger", nil},
		{"", nil},
	}
	for _, tt := range tests {
		t.Run(tt.partner, func(t *testing.T) {
			require.Equal(t, tt.sides, d.SidesOf(tt.partner))
			require.Equal(t, tt.sides != nil, d.Involves(tt.partner))
			require.Equal(t, slices.Contains(tt.sides, draft.SideClaimant), d.ActsFor(tt.partner, draft.SideClaimant))
		})
	}
}

package draft_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/services/filings/internal/draft"
)

func TestOpenedProceedingWithHostedRespondent(t *testing.T) {
	g := goldenDrafts[0] // initiator_only: the respondent has not confirmed
	d := g.prepare(t)
	paid, err := d.WithFeePaid(fixedNow)
	require.NoError(t, err)
	out := confirm(t, paid.Draft, "p-claimant", fixedNow.Add(time.Minute))
	require.True(t, out.Opened)

	c := draft.Opened(out.Draft, out.Draft.OpenedAt())
	require.Equal(t, draft.ConfirmedCase{
		CaseID:         "cs_01JC4W8X30A1",
		ExternalCaseID: "ord-2026-000417",
		Status:         draft.CaseStatusOpen,
		Rules:          testRules,
		CreatedAt:      fixedNow.Add(time.Minute).Truncate(time.Millisecond),
		Headless: draft.Headless{
			RespondentHandoffPath: "/api/cases/cs_01JC4W8X30A1/invitations",
			AnswerPath:            "/api/cases/cs_01JC4W8X30A1/answer",
			HostedRespondentPath:  "/respond/cs_01JC4W8X30A1",
			CapabilityDelivery:    "show_once_not_replayed",
		},
		CaseMode:         draft.CaseModeProceeding,
		IntakeMode:       draft.IntakeClaimantInitiated,
		ConfirmationMode: draft.ConfirmInitiatorOnly,
		Procedure:        out.Draft.Procedure(),
		ProcedureName:    draft.ProcedureStandard,
		Participants:     out.Draft.Participants(),
		DraftID:          "dr_01JC4W8X2ZQ7",
		DraftDigest:      g.digest,
		TenantID:         tenant,
		Environment:      environment,
		PartnerID:        partner,
	}, c)
}

func TestOpenedAgentOnlyHasNoHostedPath(t *testing.T) {
	d := goldenDrafts[1].prepare(t)
	d = confirm(t, d, "seller", fixedNow).Draft
	out := confirm(t, d, "buyer", fixedNow)
	require.True(t, out.Opened)
	c := draft.Opened(out.Draft, out.Draft.OpenedAt())
	require.Empty(t, c.Headless.HostedRespondentPath, "every respondent confirmed through the API")
	require.Equal(t, draft.ProcedureAgentOnly, c.ProcedureName)
	require.Equal(t, draft.ProcedureAgentOnly, out.Draft.ProcedureName())
	require.Nil(t, c.Evaluation)
}

func TestOpenedEvaluation(t *testing.T) {
	g := goldenDrafts[2]
	d := g.prepare(t)
	d = confirm(t, d, "claimant-1", fixedNow).Draft
	d = confirm(t, d, "respondent-2", fixedNow).Draft
	consented, err := d.WithConsent("respondent-1", consenterFor(t, d, "respondent-1"), fixedNow, "consent_7")
	require.NoError(t, err)
	require.True(t, consented.Opened)

	c := draft.Opened(consented.Draft, consented.Draft.OpenedAt())
	_, evalDigest := d.Evaluation()
	require.Equal(t, &draft.CaseEvaluation{
		ExternalEvaluationID: "eval-lot-12",
		EvaluationDigest:     evalDigest,
		ResourcePath:         "/api/cases/cs_01JC5B00EV02/evaluation",
	}, c.Evaluation)
	require.Equal(t, draft.CaseModeEvaluation, c.CaseMode)
	require.Empty(t, c.Headless.HostedRespondentPath)
	require.Equal(t, "live", c.Environment)
}

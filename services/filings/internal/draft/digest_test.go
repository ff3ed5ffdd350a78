package draft_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/services/filings/internal/draft"
)

// TestDigestCoversEveryTerm changes one immutable term at a time, keeping
// the request valid, and requires a different digest each time.
func TestDigestCoversEveryTerm(t *testing.T) {
	type change struct {
		name   string
		mutate func(in *draft.PrepareInput, rules *draft.Rules, ids *fixedIDs, now *time.Time)
	}
	evaluationInput := func(in *draft.PrepareInput) {
		in.CaseMode = draft.CaseModeEvaluation
		in.Procedure = draft.Procedure{Profile: draft.ProfileEvaluation}
		in.Claim = draft.Claim{Remedy: draft.RemedyDeclaratory, Summary: "Declare conformity."}
		in.Evaluation = &draft.Evaluation{
			ExternalEvaluationID: "eval-1",
			Question:             draft.Question{Text: "Does it conform?", Criteria: []string{"Grade", "Weight"}},
			AllowedOutcomes:      []string{"conforms", "does_not_conform"},
			EvidencePolicy:       draft.EvidencePartySubmissions,
			ReviewPolicy:         draft.ReviewNone,
		}
	}
	base := func() draft.PrepareInput {
		in := threeParty()
		in.ClaimantAcceptanceIdentity = "acct:maria.lopez"
		return in
	}
	changes := []change{
		{"draft id", func(_ *draft.PrepareInput, _ *draft.Rules, ids *fixedIDs, _ *time.Time) { ids.draftID = "dr_other" }},
		{"reserved case id", func(_ *draft.PrepareInput, _ *draft.Rules, ids *fixedIDs, _ *time.Time) { ids.caseID = "cs_other" }},
		{"fee id", func(_ *draft.PrepareInput, _ *draft.Rules, ids *fixedIDs, _ *time.Time) { ids.feeID = "fee_other" }},
		{"rules version", func(_ *draft.PrepareInput, r *draft.Rules, _ *fixedIDs, _ *time.Time) {
			r.Version = "pcourt-rules-2026-11"
		}},
		{"rules hash", func(_ *draft.PrepareInput, r *draft.Rules, _ *fixedIDs, _ *time.Time) {
			r.Hash = sha256Text("other rules")
		}},
		{"expiry through the instant", func(_ *draft.PrepareInput, _ *draft.Rules, _ *fixedIDs, now *time.Time) {
			*now = now.Add(time.Millisecond)
		}},
		{"expiry through expiresIn", func(in *draft.PrepareInput, _ *draft.Rules, _ *fixedIDs, _ *time.Time) { in.ExpiresIn = 71 * time.Hour }},
		{"external case id", func(in *draft.PrepareInput, _ *draft.Rules, _ *fixedIDs, _ *time.Time) {
			in.ExternalCaseID = "ord-2026-000418"
		}},
		{"case mode", func(in *draft.PrepareInput, _ *draft.Rules, _ *fixedIDs, _ *time.Time) { evaluationInput(in) }},
		{"intake mode", func(in *draft.PrepareInput, _ *draft.Rules, _ *fixedIDs, _ *time.Time) {
			in.IntakeMode = draft.IntakeClaimantProposed
		}},
		{"confirmation policy", func(in *draft.PrepareInput, _ *draft.Rules, _ *fixedIDs, _ *time.Time) {
			in.ConfirmationMode = draft.ConfirmBundledAuthorizations
			in.Participants[2].AuthorizationMode = draft.AuthBundledAuthorization
		}},
		{"procedure profile", func(in *draft.PrepareInput, _ *draft.Rules, _ *fixedIDs, _ *time.Time) {
			in.Procedure.Profile = draft.ProfileSingleRound
		}},
		{"custom plan value", func(in *draft.PrepareInput, _ *draft.Rules, _ *fixedIDs, _ *time.Time) {
			in.Procedure = draft.Procedure{Profile: draft.ProfileCustomBounded, AnswerRequired: true, EvidenceRounds: 2, RebuttalRounds: 1, FilingsPerSidePerStage: 1}
		}},
		{"participant id", func(in *draft.PrepareInput, _ *draft.Rules, _ *fixedIDs, _ *time.Time) {
			in.Participants[2].ID = "p-carrier-2"
		}},
		{"participant side", func(in *draft.PrepareInput, _ *draft.Rules, _ *fixedIDs, _ *time.Time) {
			in.Participants[2].Side = draft.SideClaimant
		}},
		{"participant partner", func(in *draft.PrepareInput, _ *draft.Rules, _ *fixedIDs, _ *time.Time) {
			in.Participants[2].PartnerID = "pt_third"
		}},
		{"participant partner named though default", func(in *draft.PrepareInput, _ *draft.Rules, _ *fixedIDs, _ *time.Time) {
			in.Participants[0].PartnerID = partner
		}},
		{"participant principal", func(in *draft.PrepareInput, _ *draft.Rules, _ *fixedIDs, _ *time.Time) {
			in.Participants[2].PrincipalID = "org:fastship-eu"
		}},
		{"participant principal kind", func(in *draft.PrepareInput, _ *draft.Rules, _ *fixedIDs, _ *time.Time) {
			in.Participants[2].PrincipalKind = draft.PrincipalIndividual
		}},
		{"participant agent", func(in *draft.PrepareInput, _ *draft.Rules, _ *fixedIDs, _ *time.Time) {
			in.Participants[1].AgentID = "agt_northwind_8"
		}},
		{"participant authorization mode", func(in *draft.PrepareInput, _ *draft.Rules, _ *fixedIDs, _ *time.Time) {
			in.Participants[1].AuthorizationMode = draft.AuthPartnerCredential
		}},
		{"initiator", func(in *draft.PrepareInput, _ *draft.Rules, _ *fixedIDs, _ *time.Time) {
			in.Participants = append(in.Participants, draft.Participant{ID: "p-co", Side: draft.SideClaimant, PrincipalID: "acct:co", PrincipalKind: draft.PrincipalIndividual, AuthorizationMode: draft.AuthPartnerCredential})
			in.Participants[0].Initiator, in.Participants[3].Initiator = false, true
		}},
		{"participant order", func(in *draft.PrepareInput, _ *draft.Rules, _ *fixedIDs, _ *time.Time) {
			in.Participants[1], in.Participants[2] = in.Participants[2], in.Participants[1]
		}},
		{"claim amount", func(in *draft.PrepareInput, _ *draft.Rules, _ *fixedIDs, _ *time.Time) {
			in.Claim.AmountInDisputeMinor++
		}},
		{"claim remedy", func(in *draft.PrepareInput, _ *draft.Rules, _ *fixedIDs, _ *time.Time) {
			in.Claim.Remedy = draft.RemedyCorpusAllocation
		}},
		{"claim summary", func(in *draft.PrepareInput, _ *draft.Rules, _ *fixedIDs, _ *time.Time) {
			in.Claim.Summary += " " + "Again."
		}},
		{"micro tier consent", func(in *draft.PrepareInput, _ *draft.Rules, _ *fixedIDs, _ *time.Time) {
			in.Claim.MicroTierConsent = true
		}},
		{"fee through the amount", func(in *draft.PrepareInput, _ *draft.Rules, _ *fixedIDs, _ *time.Time) {
			in.Claim.AmountInDisputeMinor = 30_000_000
		}},
		{"claimant acceptance identity", func(in *draft.PrepareInput, _ *draft.Rules, _ *fixedIDs, _ *time.Time) {
			in.ClaimantAcceptanceIdentity = "acct:maria"
		}},
		{"claimant acceptance identity omitted", func(in *draft.PrepareInput, _ *draft.Rules, _ *fixedIDs, _ *time.Time) {
			in.ClaimantAcceptanceIdentity = ""
		}},
		{"tenant", func(in *draft.PrepareInput, _ *draft.Rules, _ *fixedIDs, _ *time.Time) { in.TenantID = "tn_other" }},
		{"environment", func(in *draft.PrepareInput, _ *draft.Rules, _ *fixedIDs, _ *time.Time) { in.Environment = "live" }},
		{"partner", func(in *draft.PrepareInput, _ *draft.Rules, _ *fixedIDs, _ *time.Time) {
			in.PartnerID = "pt_other_marketplace"
		}},
	}
	prepare := func(c *change) draft.Draft {
		in, rules, ids, now := base(), testRules, testIDs, fixedNow
		if c != nil {
			c.mutate(&in, &rules, &ids, &now)
		}
		d, err := draft.Prepare(in, rules, now, ids)
		require.NoError(t, err)
		return d
	}
	reference := prepare(nil)
	seen := map[string]string{reference.Digest(): "base"}
	for _, c := range changes {
		t.Run(c.name, func(t *testing.T) {
			d := prepare(&c)
			require.NotEqual(t, reference.Digest(), d.Digest())
			if other, dup := seen[d.Digest()]; dup {
				t.Fatalf("same digest as %q", other)
			}
			seen[d.Digest()] = c.name
		})
	}
}

func TestDigestCoversTheEvaluation(t *testing.T) {
	base := func() draft.PrepareInput {
		in := twoParty()
		in.CaseMode = draft.CaseModeEvaluation
		in.Procedure = draft.Procedure{Profile: draft.ProfileEvaluation}
		in.Claim = draft.Claim{Remedy: draft.RemedyDeclaratory, Summary: "Declare conformity."}
		in.Evaluation = &draft.Evaluation{
			ExternalEvaluationID: "eval-1",
			Question:             draft.Question{Text: "Does it conform?", Criteria: []string{"Grade", "Weight"}},
			AllowedOutcomes:      []string{"conforms", "does_not_conform"},
			EvidencePolicy:       draft.EvidencePartySubmissions,
			ReviewPolicy:         draft.ReviewNone,
		}
		return in
	}
	changes := map[string]func(*draft.Evaluation){
		"external evaluation id": func(e *draft.Evaluation) { e.ExternalEvaluationID = "eval-2" },
		"question":               func(e *draft.Evaluation) { e.Question.Text = "Does it conform at all?" },
		"criterion":              func(e *draft.Evaluation) { e.Question.Criteria[1] = "Mass" },
		"criteria order":         func(e *draft.Evaluation) { e.Question.Criteria = []string{"Weight", "Grade"} },
		"outcomes":               func(e *draft.Evaluation) { e.AllowedOutcomes = append(e.AllowedOutcomes, "undetermined") },
		"evidence policy":        func(e *draft.Evaluation) { e.EvidencePolicy = draft.EvidenceJointRecordOnly },
		"review policy":          func(e *draft.Evaluation) { e.ReviewPolicy = draft.ReviewAlways },
	}
	ref := mustPrepare(t, base())
	_, refEval := ref.Evaluation()
	for name, mutate := range changes {
		t.Run(name, func(t *testing.T) {
			in := base()
			mutate(in.Evaluation)
			d := mustPrepare(t, in)
			_, evalDigest := d.Evaluation()
			require.NotEqual(t, refEval, evalDigest)
			require.Equal(t, in.Evaluation.Digest(), evalDigest)
			require.NotEqual(t, ref.Digest(), d.Digest())
		})
	}
}

// TestDigestIgnoresState: neither the creator, the route nor anything that
// happens after preparation changes the digest.
func TestDigestIgnoresState(t *testing.T) {
	in := collectFirstInput()
	d := mustPrepare(t, in)
	digest := d.Digest()

	other := in
	other.CreatedBy = "cred_someone_else"
	require.Equal(t, digest, mustPrepare(t, other).Digest(), "createdBy")
	other = in
	other.Legacy = true
	require.Equal(t, digest, mustPrepare(t, other).Digest(), "route")

	confirmed := confirm(t, d, "p-claimant", fixedNow).Draft
	require.Equal(t, digest, confirmed.Digest())
	ready := confirm(t, confirmed, "p-respondent", fixedNow).Draft
	require.Equal(t, draft.StatusReadyToOpen, ready.Status())
	require.Equal(t, digest, ready.Digest())
	paid, err := ready.WithFeePaid(fixedNow)
	require.NoError(t, err)
	require.Equal(t, draft.StatusOpened, paid.Draft.Status())
	require.Equal(t, digest, paid.Draft.Digest())
	require.Equal(t, string(d.DigestPreimage()), string(paid.Draft.DigestPreimage()))
}

func collectFirstInput() draft.PrepareInput {
	in := twoParty()
	in.Claim.AmountInDisputeMinor = 30_000_000
	return in
}

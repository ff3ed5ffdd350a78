package draft_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/services/filings/internal/draft"
)

func TestPrepareRefusesEachViolation(t *testing.T) {
	type in = draft.PrepareInput
	agent := func(i *in, idx int, agentID string) {
		i.Participants[idx].PrincipalKind = draft.PrincipalAutonomousAgent
		i.Participants[idx].AgentID = agentID
		i.Participants[idx].AuthorizationMode = draft.AuthAgentCredential
	}
	evaluation := func() *draft.Evaluation {
		return &draft.Evaluation{
			ExternalEvaluationID: "eval-1",
			Question:             draft.Question{Text: "Does the delivered batch conform to the order?", Criteria: []string{"Quantity", "Grade"}},
			AllowedOutcomes:      []string{"conforms", "does_not_conform"},
			EvidencePolicy:       draft.EvidencePartySubmissions,
			ReviewPolicy:         draft.ReviewNone,
		}
	}
	evaluationMode := func(i *in) {
		i.CaseMode = draft.CaseModeEvaluation
		i.Procedure = draft.Procedure{Profile: draft.ProfileEvaluation}
		i.Claim = draft.Claim{Remedy: draft.RemedyDeclaratory, Summary: "Conformity of batch 12."}
		i.Evaluation = evaluation()
	}
	tests := []struct {
		name   string
		mutate func(*in)
		field  string
		reason string
	}{
		// externalCaseId
		{"externalCaseId missing", func(i *in) { i.ExternalCaseID = "" }, "externalCaseId", "is required"},
		{"externalCaseId too long", func(i *in) { i.ExternalCaseID = strings.Repeat("x", 161) }, "externalCaseId", "must be at most 160 characters"},
		{"externalCaseId with a space", func(i *in) { i.ExternalCaseID = "ord 417" }, "externalCaseId", "must be visible ASCII characters without spaces"},
		{"externalCaseId not ASCII", func(i *in) { i.ExternalCaseID = "commande-n°417" }, "externalCaseId", "must be visible ASCII characters without spaces"},
		// modes
		{"caseMode missing", func(i *in) { i.CaseMode = "" }, "caseMode", "is required"},
		{"caseMode unknown", func(i *in) { i.CaseMode = "arbitration" }, "caseMode", "must be one of proceeding, evaluation"},
		{"intakeMode missing", func(i *in) { i.IntakeMode = "" }, "intakeMode", "is required"},
		{"intakeMode unknown", func(i *in) { i.IntakeMode = "walk_in" }, "intakeMode", "must be one of claimant_initiated, claimant_proposed, bilateral_api, bundled_bilateral"},
		{"confirmation mode missing", func(i *in) { i.ConfirmationMode = "" }, "confirmationPolicy.mode", "is required"},
		{"confirmation mode unknown", func(i *in) { i.ConfirmationMode = "anyone" }, "confirmationPolicy.mode", "must be one of initiator_only, all_participants, bundled_authorizations"},
		{"bundled policy on a claimant-initiated intake", func(i *in) { i.ConfirmationMode = draft.ConfirmBundledAuthorizations }, "confirmationPolicy.mode", "must be initiator_only or all_participants when intakeMode is claimant_initiated"},
		{"initiator_only on a proposal", func(i *in) {
			i.IntakeMode = draft.IntakeClaimantProposed
			i.ConfirmationMode = draft.ConfirmInitiatorOnly
		}, "confirmationPolicy.mode", "must be all_participants when intakeMode is claimant_proposed"},
		{"initiator_only on a bilateral intake", func(i *in) {
			i.IntakeMode = draft.IntakeBilateralAPI
			i.ConfirmationMode = draft.ConfirmInitiatorOnly
		}, "confirmationPolicy.mode", "must be all_participants or bundled_authorizations when intakeMode is bilateral_api"},
		{"all_participants on a bundled intake", func(i *in) { i.IntakeMode = draft.IntakeBundledBilateral }, "confirmationPolicy.mode", "must be bundled_authorizations when intakeMode is bundled_bilateral"},
		// procedure
		{"profile missing", func(i *in) { i.Procedure = draft.Procedure{} }, "procedure.profile", "is required"},
		{"profile unknown", func(i *in) { i.Procedure.Profile = "slow" }, "procedure.profile", "must be one of standard, fast, single_round, joint_record, evaluation, custom_bounded"},
		{"schedule on the canonical route", func(i *in) {
			i.Canonical = true
			i.ClaimantAcceptanceIdentity = "acct:maria.lopez"
			i.Procedure.Profile = "slow"
		}, "schedule.profile", "must be one of standard, fast, single_round, joint_record, evaluation, custom_bounded"},
		{"named profile with a different answer", func(i *in) {
			i.Procedure = draft.Procedure{Profile: draft.ProfileStandard, EvidenceRounds: 2, RebuttalRounds: 1, FilingsPerSidePerStage: 2}
		}, "procedure.answerRequired", "must be true for profile standard (send only the profile to take its plan, or use custom_bounded)"},
		{"named profile with other rounds", func(i *in) {
			i.Procedure = draft.Procedure{Profile: draft.ProfileFast, EvidenceRounds: 2}
		}, "procedure.evidenceRounds", "must be 1 for profile fast (send only the profile to take its plan, or use custom_bounded)"},
		{"named profile with other rebuttals", func(i *in) {
			i.Procedure = draft.Procedure{Profile: draft.ProfileJointRecord, EvidenceRounds: 1, RebuttalRounds: 2, FilingsPerSidePerStage: 1}
		}, "procedure.rebuttalRounds", "must be 1 for profile joint_record (send only the profile to take its plan, or use custom_bounded)"},
		{"named profile with other filings", func(i *in) {
			i.Procedure = draft.Procedure{Profile: draft.ProfileSingleRound, AnswerRequired: true, EvidenceRounds: 1}
		}, "procedure.filingsPerSidePerStage", "must be 3 for profile single_round (send only the profile to take its plan, or use custom_bounded)"},
		{"custom evidence rounds 0", func(i *in) {
			i.Procedure = draft.Procedure{Profile: draft.ProfileCustomBounded, EvidenceRounds: 0, FilingsPerSidePerStage: 1}
		}, "procedure.evidenceRounds", "must be 1 to 3 for profile custom_bounded"},
		{"custom evidence rounds 4", func(i *in) {
			i.Procedure = draft.Procedure{Profile: draft.ProfileCustomBounded, EvidenceRounds: 4, FilingsPerSidePerStage: 1}
		}, "procedure.evidenceRounds", "must be 1 to 3 for profile custom_bounded"},
		{"custom rebuttal rounds negative", func(i *in) {
			i.Procedure = draft.Procedure{Profile: draft.ProfileCustomBounded, EvidenceRounds: 1, RebuttalRounds: -1, FilingsPerSidePerStage: 1}
		}, "procedure.rebuttalRounds", "must be 0 to 3 for profile custom_bounded"},
		{"custom rebuttal rounds 4", func(i *in) {
			i.Procedure = draft.Procedure{Profile: draft.ProfileCustomBounded, EvidenceRounds: 1, RebuttalRounds: 4, FilingsPerSidePerStage: 1}
		}, "procedure.rebuttalRounds", "must be 0 to 3 for profile custom_bounded"},
		{"custom filings 0", func(i *in) {
			i.Procedure = draft.Procedure{Profile: draft.ProfileCustomBounded, EvidenceRounds: 1}
		}, "procedure.filingsPerSidePerStage", "must be 1 to 3 for profile custom_bounded"},
		{"custom filings 4", func(i *in) {
			i.Procedure = draft.Procedure{Profile: draft.ProfileCustomBounded, EvidenceRounds: 1, FilingsPerSidePerStage: 4}
		}, "procedure.filingsPerSidePerStage", "must be 1 to 3 for profile custom_bounded"},
		{"evaluation mode needs the evaluation profile", func(i *in) {
			evaluationMode(i)
			i.Procedure.Profile = draft.ProfileFast
		}, "procedure.profile", "must be evaluation when caseMode is evaluation"},
		{"evaluation profile in a proceeding", func(i *in) { i.Procedure.Profile = draft.ProfileEvaluation }, "procedure.profile", "may be evaluation only when caseMode is evaluation"},
		// participants
		{"one participant", func(i *in) { i.Participants = i.Participants[:1] }, "participants", "must have 2 to 16 items"},
		{"seventeen participants", func(i *in) {
			for n := 0; len(i.Participants) < 17; n++ {
				i.Participants = append(i.Participants, draft.Participant{ID: "r" + strings.Repeat("x", n), Side: draft.SideRespondent, PrincipalID: "org:" + strings.Repeat("x", n), PrincipalKind: draft.PrincipalOrganization, AuthorizationMode: draft.AuthPartnerCredential})
			}
		}, "participants", "must have 2 to 16 items"},
		{"participant id missing", func(i *in) { i.Participants[1].ID = "" }, "participants[1].participantId", "is required"},
		{"participant id too long", func(i *in) { i.Participants[1].ID = strings.Repeat("p", 65) }, "participants[1].participantId", "must be 1 to 64 characters of A-Z a-z 0-9 . _ : -"},
		{"participant id with a slash", func(i *in) { i.Participants[1].ID = "p/2" }, "participants[1].participantId", "must be 1 to 64 characters of A-Z a-z 0-9 . _ : -"},
		{"participant id repeated", func(i *in) { i.Participants[1].ID = "p-claimant" }, "participants[1].participantId", "repeats participants[0].participantId"},
		{"side missing", func(i *in) { i.Participants[1].Side = "" }, "participants[1].side", "is required"},
		{"side unknown", func(i *in) { i.Participants[1].Side = "intervener" }, "participants[1].side", "must be one of claimant, respondent"},
		{"partner id malformed", func(i *in) { i.Participants[1].PartnerID = "pt seller" }, "participants[1].partnerId", "must be 1 to 160 characters of A-Z a-z 0-9 . _ : -"},
		{"principal id missing", func(i *in) { i.Participants[0].PrincipalID = "" }, "participants[0].principalId", "is required"},
		{"principal id too long", func(i *in) { i.Participants[0].PrincipalID = strings.Repeat("é", 201) }, "participants[0].principalId", "must be at most 200 characters"},
		{"principal id with a newline", func(i *in) { i.Participants[0].PrincipalID = "acct:maria\nlopez" }, "participants[0].principalId", "must not contain control characters (found U+000A): they change how text reads without being seen"},
		{"principal id padded", func(i *in) { i.Participants[0].PrincipalID = " acct:maria" }, "participants[0].principalId", "must not begin or end with white space"},
		{"principal id invalid UTF-8", func(i *in) { i.Participants[0].PrincipalID = "acct:\xff" }, "participants[0].principalId", "must be valid UTF-8"},
		{"principal on both sides", func(i *in) { i.Participants[1].PrincipalID = "acct:maria.lopez" }, "participants[1].principalId", "repeats participants[0].principalId; a principal takes part once"},
		{"principal kind missing", func(i *in) { i.Participants[1].PrincipalKind = "" }, "participants[1].principalKind", "is required"},
		{"principal kind in the old vocabulary", func(i *in) { i.Participants[1].PrincipalKind = "ai_agent" }, "participants[1].principalKind", "must be one of individual, organization, autonomous_agent"},
		{"agent id malformed", func(i *in) { i.Participants[1].AgentID = "agent 7" }, "participants[1].agentId", "must be 1 to 160 characters of A-Z a-z 0-9 . _ : -"},
		{"agent on both sides", func(i *in) {
			i.Participants[0].AgentID = "agt_7"
			i.Participants[1].AgentID = "agt_7"
		}, "participants[1].agentId", "repeats participants[0].agentId; an agent acts for one participant"},
		{"authorization mode missing", func(i *in) { i.Participants[1].AuthorizationMode = "" }, "participants[1].authorizationMode", "is required"},
		{"authorization mode unknown", func(i *in) { i.Participants[1].AuthorizationMode = "hosted_acceptance" }, "participants[1].authorizationMode", "must be one of partner_credential, agent_credential, bundled_authorization"},
		{"agent credential without an agent id", func(i *in) { i.Participants[1].AuthorizationMode = draft.AuthAgentCredential }, "participants[1].agentId", "is required when authorizationMode is agent_credential"},
		{"autonomous agent without an agent id", func(i *in) { i.Participants[1].PrincipalKind = draft.PrincipalAutonomousAgent }, "participants[1].agentId", "is required when principalKind is autonomous_agent"},
		{"bundled participant outside the bundled policy", func(i *in) { i.Participants[1].AuthorizationMode = draft.AuthBundledAuthorization }, "participants[1].authorizationMode", "may be bundled_authorization only when confirmationPolicy.mode is bundled_authorizations"},
		{"two initiators", func(i *in) {
			i.Participants = append(i.Participants, draft.Participant{ID: "p-co", Side: draft.SideClaimant, PrincipalID: "acct:co", PrincipalKind: draft.PrincipalIndividual, AuthorizationMode: draft.AuthPartnerCredential, Initiator: true})
		}, "participants[2].initiator", "must be false: participants[0] is the initiator"},
		{"respondent initiator", func(i *in) {
			i.Participants[0].Initiator = false
			i.Participants[1].Initiator = true
		}, "participants[1].initiator", "must be false for a respondent: the initiator is a claimant"},
		{"initiator of another partner", func(i *in) { i.Participants[0].PartnerID = otherPartner }, "participants[0].partnerId", "must be the preparing partner for the initiator"},
		{"no claimant", func(i *in) {
			i.Participants[0].Side = draft.SideRespondent
			i.Participants[0].Initiator = false
		}, "participants", "must include at least one claimant"},
		{"no respondent", func(i *in) { i.Participants[1].Side = draft.SideClaimant }, "participants", "must include at least one respondent"},
		{"no initiator", func(i *in) { i.Participants[0].Initiator = false }, "participants", "must mark exactly one claimant as the initiator"},
		{"bundled policy without a bundled participant", func(i *in) {
			i.IntakeMode = draft.IntakeBundledBilateral
			i.ConfirmationMode = draft.ConfirmBundledAuthorizations
		}, "participants", "must include a bundled_authorization participant when confirmationPolicy.mode is bundled_authorizations"},
		{"agent_only with a partner credential", func(i *in) {
			agent(i, 0, "agt_a")
			agent(i, 1, "agt_b")
			i.Participants[1].AuthorizationMode = draft.AuthPartnerCredential
		}, "participants[1].authorizationMode", "must be agent_credential: every participant is an autonomous_agent, and the agent_only procedure needs registered agent identities"},
		{"agent_only with the initiator-only policy", func(i *in) {
			agent(i, 0, "agt_a")
			agent(i, 1, "agt_b")
			i.ConfirmationMode = draft.ConfirmInitiatorOnly
		}, "confirmationPolicy.mode", "must be all_participants: every participant is an autonomous_agent, and the agent_only procedure needs bilateral exact acceptance"},
		// claim
		{"negative amount", func(i *in) { i.Claim.AmountInDisputeMinor = -1 }, "claim.amountInDisputeMinor", "must be 0 to 1000000000 (USD minor units)"},
		{"amount above the maximum", func(i *in) { i.Claim.AmountInDisputeMinor = 1_000_000_001 }, "claim.amountInDisputeMinor", "must be 0 to 1000000000 (USD minor units)"},
		{"remedy missing", func(i *in) { i.Claim.Remedy = "" }, "claim.remedy", "is required"},
		{"remedy unknown", func(i *in) { i.Claim.Remedy = "damages" }, "claim.remedy", "must be one of corpus_allocation, money_obligation, declaratory"},
		{"money claim of nothing", func(i *in) { i.Claim.AmountInDisputeMinor = 0 }, "claim.amountInDisputeMinor", "must be above 0 for a money_obligation claim"},
		{"evaluation of a money claim", func(i *in) {
			evaluationMode(i)
			i.Claim = draft.Claim{AmountInDisputeMinor: 100, Remedy: draft.RemedyMoneyObligation, Summary: "x"}
		}, "claim.remedy", "must be declaratory when caseMode is evaluation"},
		{"summary missing", func(i *in) { i.Claim.Summary = "" }, "claim.summary", "is required"},
		{"summary too long", func(i *in) { i.Claim.Summary = strings.Repeat("a", 2001) }, "claim.summary", "must be at most 2000 characters"},
		{"summary with a tab", func(i *in) { i.Claim.Summary = "a\tb" }, "claim.summary", "must not contain control characters (found U+0009): they change how text reads without being seen"},
		// evaluation
		{"evaluation missing", func(i *in) {
			evaluationMode(i)
			i.Evaluation = nil
		}, "evaluation", "is required when caseMode is evaluation"},
		{"evaluation in a proceeding", func(i *in) { i.Evaluation = evaluation() }, "evaluation", "must be omitted when caseMode is proceeding"},
		{"evaluation id malformed", func(i *in) {
			evaluationMode(i)
			i.Evaluation.ExternalEvaluationID = "eval 1"
		}, "evaluation.externalEvaluationId", "must be 1 to 160 characters of A-Z a-z 0-9 . _ : -"},
		{"question missing", func(i *in) {
			evaluationMode(i)
			i.Evaluation.Question.Text = ""
		}, "evaluation.question.text", "is required"},
		{"no criteria", func(i *in) {
			evaluationMode(i)
			i.Evaluation.Question.Criteria = nil
		}, "evaluation.question.criteria", "must have 1 to 20 items"},
		{"criterion repeated", func(i *in) {
			evaluationMode(i)
			i.Evaluation.Question.Criteria = []string{"Grade", "Grade"}
		}, "evaluation.question.criteria[1]", "repeats an earlier criterion"},
		{"criterion with a newline", func(i *in) {
			evaluationMode(i)
			i.Evaluation.Question.Criteria[0] = "a\nb"
		}, "evaluation.question.criteria[0]", "must not contain control characters (found U+000A): they change how text reads without being seen"},
		{"one outcome", func(i *in) {
			evaluationMode(i)
			i.Evaluation.AllowedOutcomes = []string{"yes"}
		}, "evaluation.allowedOutcomes", "must have 2 to 20 items"},
		{"outcome malformed", func(i *in) {
			evaluationMode(i)
			i.Evaluation.AllowedOutcomes[1] = "Does Not Conform"
		}, "evaluation.allowedOutcomes[1]", "must be 1 to 64 characters of a-z 0-9 _ starting with a letter"},
		{"outcome repeated", func(i *in) {
			evaluationMode(i)
			i.Evaluation.AllowedOutcomes = []string{"yes", "no", "yes"}
		}, "evaluation.allowedOutcomes[2]", "repeats an earlier outcome"},
		{"evidence policy unknown", func(i *in) {
			evaluationMode(i)
			i.Evaluation.EvidencePolicy = "anything"
		}, "evaluation.evidencePolicy", "must be one of party_submissions, joint_record_only"},
		{"review policy unknown", func(i *in) {
			evaluationMode(i)
			i.Evaluation.ReviewPolicy = ""
		}, "evaluation.reviewPolicy", "must be one of no_review, human_review_on_request, human_review_always"},
		// claimantAcceptanceIdentity
		{"acceptance identity required on the canonical route", func(i *in) { i.Canonical = true }, "claimantAcceptanceIdentity", "is required on POST /api/filings"},
		{"acceptance identity malformed", func(i *in) { i.ClaimantAcceptanceIdentity = "maria\x00" }, "claimantAcceptanceIdentity", "must not contain control characters (found U+0000): they change how text reads without being seen"},
		{"acceptance identity too long", func(i *in) { i.ClaimantAcceptanceIdentity = strings.Repeat("m", 321) }, "claimantAcceptanceIdentity", "must be at most 320 characters"},
		// expiresIn
		{"expiry too short", func(i *in) { i.ExpiresIn = time.Hour - time.Millisecond }, "expiresIn", "must be 1 hour to 30 days"},
		{"expiry too long", func(i *in) { i.ExpiresIn = 30*24*time.Hour + time.Millisecond }, "expiresIn", "must be 1 hour to 30 days"},
		{"expiry negative", func(i *in) { i.ExpiresIn = -time.Hour }, "expiresIn", "must be 1 hour to 30 days"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			input := twoParty()
			tt.mutate(&input)
			_, err := draft.Prepare(input, testRules, fixedNow, testIDs)
			var verr *draft.ValidationError
			require.ErrorAs(t, err, &verr)
			require.Equal(t, tt.field, verr.Field)
			require.Equal(t, tt.reason, verr.Reason)
			require.Equal(t, tt.field+" "+tt.reason, err.Error())
		})
	}
}

// Names that enter a confirmation statement, or name who accepts, refuse
// the characters that make text display other than its bytes, with their
// own code; letters of any script stay welcome.
func TestPrepareRefusesUnsafeCharactersInNames(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*draft.PrepareInput)
		field  string
	}{
		{"right-to-left override", func(i *draft.PrepareInput) { i.Participants[0].PrincipalID = "acct:maria\u202Eenilno" }, "participants[0].principalId"},
		{"left-to-right isolate", func(i *draft.PrepareInput) { i.Participants[1].PrincipalID = "org:\u2066north\u2069" }, "participants[1].principalId"},
		{"right-to-left mark", func(i *draft.PrepareInput) { i.Participants[1].PrincipalID = "org:north\u200Fwind" }, "participants[1].principalId"},
		{"Arabic letter mark", func(i *draft.PrepareInput) { i.Participants[1].PrincipalID = "org:north\u061Cwind" }, "participants[1].principalId"},
		{"zero-width space", func(i *draft.PrepareInput) { i.Participants[0].PrincipalID = "acct:maria\u200Blopez" }, "participants[0].principalId"},
		{"zero-width joiner", func(i *draft.PrepareInput) { i.Participants[0].PrincipalID = "acct:maria\u200Dlopez" }, "participants[0].principalId"},
		{"byte order mark", func(i *draft.PrepareInput) { i.Participants[0].PrincipalID = "\uFEFFacct:maria" }, "participants[0].principalId"},
		{"line separator", func(i *draft.PrepareInput) { i.Participants[0].PrincipalID = "acct:maria\u2028lopez" }, "participants[0].principalId"},
		{"paragraph separator", func(i *draft.PrepareInput) { i.Participants[0].PrincipalID = "acct:maria\u2029lopez" }, "participants[0].principalId"},
		{"control character", func(i *draft.PrepareInput) { i.Participants[0].PrincipalID = "acct:maria\u0085lopez" }, "participants[0].principalId"},
		{"override in the acceptance identity", func(i *draft.PrepareInput) { i.ClaimantAcceptanceIdentity = "maria@\u202Eexample" }, "claimantAcceptanceIdentity"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			input := twoParty()
			tt.mutate(&input)
			_, err := draft.Prepare(input, testRules, fixedNow, testIDs)
			var verr *draft.ValidationError
			require.ErrorAs(t, err, &verr)
			require.Equal(t, tt.field, verr.Field)
			require.Equal(t, draft.CodeUnsafeCharacters, verr.ProblemCode())
			require.Contains(t, verr.Reason, "found U+")
		})
	}

	input := twoParty()
	input.Participants[0].PrincipalID = "acct:مريم.لوبيز"
	input.Participants[1].PrincipalID = "org:dépôt-central 東京"
	_, err := draft.Prepare(input, testRules, fixedNow, testIDs)
	require.NoError(t, err, "letters of any script are names")
}

func TestPrepareAcceptsTheEdges(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*draft.PrepareInput)
	}{
		{"shortest expiry", func(i *draft.PrepareInput) { i.ExpiresIn = time.Hour }},
		{"longest expiry", func(i *draft.PrepareInput) { i.ExpiresIn = 30 * 24 * time.Hour }},
		{"largest amount", func(i *draft.PrepareInput) { i.Claim.AmountInDisputeMinor = 1_000_000_000 }},
		{"declaratory claim of nothing", func(i *draft.PrepareInput) {
			i.Claim = draft.Claim{Remedy: draft.RemedyDeclaratory, Summary: "Declare the contract terminated."}
		}},
		{"externalCaseId of 160 characters", func(i *draft.PrepareInput) { i.ExternalCaseID = strings.Repeat("x", 160) }},
		{"multi-line summary", func(i *draft.PrepareInput) { i.Claim.Summary = "Line one.\nLine two." }},
		{"custom plan at the bounds", func(i *draft.PrepareInput) {
			i.Procedure = draft.Procedure{Profile: draft.ProfileCustomBounded, AnswerRequired: false, EvidenceRounds: 3, RebuttalRounds: 0, FilingsPerSidePerStage: 3}
		}},
		{"named profile sent in full", func(i *draft.PrepareInput) {
			i.Procedure = draft.Procedure{Profile: draft.ProfileStandard, AnswerRequired: true, EvidenceRounds: 2, RebuttalRounds: 1, FilingsPerSidePerStage: 2, RecordConfirmationRequired: true}
		}},
		{"sixteen participants", func(i *draft.PrepareInput) {
			for n := 0; len(i.Participants) < 16; n++ {
				i.Participants = append(i.Participants, draft.Participant{ID: "r" + strings.Repeat("x", n), Side: draft.SideRespondent, PrincipalID: "org:" + strings.Repeat("x", n), PrincipalKind: draft.PrincipalOrganization, AuthorizationMode: draft.AuthPartnerCredential})
			}
		}},
		{"initiator naming its own partner", func(i *draft.PrepareInput) { i.Participants[0].PartnerID = partner }},
		{"an agent for a human principal", func(i *draft.PrepareInput) {
			i.Participants[0].AgentID = "agt_helper"
			i.Participants[0].AuthorizationMode = draft.AuthAgentCredential
		}},
		{"one agent among humans is not agent_only", func(i *draft.PrepareInput) {
			i.ConfirmationMode = draft.ConfirmInitiatorOnly
			i.Participants[1].PrincipalKind = draft.PrincipalAutonomousAgent
			i.Participants[1].AgentID = "agt_r"
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := twoParty()
			tt.mutate(&in)
			_, err := draft.Prepare(in, testRules, fixedNow, testIDs)
			require.NoError(t, err)
		})
	}
}

func TestPrepareSetsTheDraft(t *testing.T) {
	in := threeParty()
	in.ExpiresIn = 48 * time.Hour
	d := mustPrepare(t, in)

	created := time.Date(2026, 11, 2, 9, 30, 0, 123_000_000, time.UTC)
	require.Equal(t, testIDs.draftID, d.ID())
	require.Equal(t, testIDs.caseID, d.ReservedCaseID())
	require.Equal(t, "ord-2026-000417", d.ExternalCaseID())
	require.Equal(t, draft.StatusAwaitingConfirmations, d.Status())
	require.Regexp(t, `^[0-9a-f]{64}$`, d.Digest())
	require.Equal(t, created, d.CreatedAt(), "kept in UTC milliseconds")
	require.Equal(t, created.Add(48*time.Hour), d.ExpiresAt())
	require.True(t, d.OpenedAt().IsZero())
	require.Equal(t, testRules, d.Rules())
	require.Equal(t, orchestrator, d.CreatedBy())
	require.Equal(t, tenant, d.TenantID())
	require.Equal(t, environment, d.Environment())
	require.Equal(t, partner, d.PartnerID())
	require.Equal(t, draft.RouteV2, d.PreparedVia())
	require.False(t, d.Canonical())
	require.False(t, d.Legacy())
	require.Equal(t, draft.Procedure{Profile: draft.ProfileStandard, AnswerRequired: true, EvidenceRounds: 2, RebuttalRounds: 1, FilingsPerSidePerStage: 2, RecordConfirmationRequired: true}, d.Procedure())
	require.Equal(t, draft.ProcedureStandard, d.ProcedureName())
	require.Equal(t, in.Participants, d.Participants())
	require.Equal(t, in.Claim, d.Claim())
	e, digest := d.Evaluation()
	require.Nil(t, e)
	require.Empty(t, digest)
	require.Empty(t, d.ClaimantAcceptanceIdentity())

	// Each participant gets its statement, naming the draft and the digest.
	want := []draft.Confirmation{
		{ParticipantID: "p-claimant", Side: draft.SideClaimant, AuthorizationMode: draft.AuthPartnerCredential, Required: true, Status: draft.ConfirmationPending,
			Statement: "I, acct:maria.lopez, confirm as claimant participant p-claimant the case draft dr_01JC4W8X2ZQ7 with digest " + d.Digest() + " under rules pcourt-rules-2026-10, and agree to arbitrate ord-2026-000417 on these terms."},
		{ParticipantID: "p-respondent", Side: draft.SideRespondent, AuthorizationMode: draft.AuthAgentCredential, Required: true, Status: draft.ConfirmationPending,
			Statement: "I, org:northwind-supplies, confirm as respondent participant p-respondent the case draft dr_01JC4W8X2ZQ7 with digest " + d.Digest() + " under rules pcourt-rules-2026-10, and agree to arbitrate ord-2026-000417 on these terms."},
		{ParticipantID: "p-carrier", Side: draft.SideRespondent, PartnerID: otherPartner, AuthorizationMode: draft.AuthPartnerCredential, Required: true, Status: draft.ConfirmationPending,
			Statement: "I, org:fastship, confirm as respondent participant p-carrier the case draft dr_01JC4W8X2ZQ7 with digest " + d.Digest() + " under rules pcourt-rules-2026-10, and agree to arbitrate ord-2026-000417 on these terms."},
	}
	require.Equal(t, want, d.Confirmations())
}

func TestPrepareDefaultsTheExpiry(t *testing.T) {
	d := mustPrepare(t, twoParty())
	require.Equal(t, 72*time.Hour, d.ExpiresAt().Sub(d.CreatedAt()))
}

func TestPrepareProfileDefaults(t *testing.T) {
	for _, p := range []draft.Profile{draft.ProfileStandard, draft.ProfileFast, draft.ProfileSingleRound, draft.ProfileJointRecord, draft.ProfileEvaluation} {
		plan, ok := draft.ProfileDefaults(p)
		require.True(t, ok, p)
		require.Equal(t, p, plan.Profile)
		require.True(t, plan.RecordConfirmationRequired)
		require.GreaterOrEqual(t, plan.EvidenceRounds, 1)
		require.LessOrEqual(t, plan.EvidenceRounds, 3)
		require.LessOrEqual(t, plan.RebuttalRounds, 3)
		require.GreaterOrEqual(t, plan.FilingsPerSidePerStage, 1)
		require.LessOrEqual(t, plan.FilingsPerSidePerStage, 3)
	}
	_, ok := draft.ProfileDefaults(draft.ProfileCustomBounded)
	require.False(t, ok)

	in := twoParty()
	in.Procedure = draft.Procedure{Profile: draft.ProfileCustomBounded, EvidenceRounds: 3, RebuttalRounds: 2, FilingsPerSidePerStage: 1}
	d := mustPrepare(t, in)
	require.Equal(t, draft.Procedure{Profile: draft.ProfileCustomBounded, EvidenceRounds: 3, RebuttalRounds: 2, FilingsPerSidePerStage: 1, RecordConfirmationRequired: true}, d.Procedure(),
		"recordConfirmationRequired is always true")
}

func TestPrepareCopiesItsInput(t *testing.T) {
	in := twoParty()
	in.CaseMode = draft.CaseModeEvaluation
	in.Procedure = draft.Procedure{Profile: draft.ProfileEvaluation}
	in.Claim = draft.Claim{Remedy: draft.RemedyDeclaratory, Summary: "x"}
	in.Evaluation = &draft.Evaluation{ExternalEvaluationID: "e1", Question: draft.Question{Text: "q", Criteria: []string{"c"}}, AllowedOutcomes: []string{"a", "b"}, EvidencePolicy: draft.EvidenceJointRecordOnly, ReviewPolicy: draft.ReviewAlways}
	d := mustPrepare(t, in)
	digest := d.Digest()

	in.Participants[0].PrincipalID = "changed"
	in.Evaluation.Question.Criteria[0] = "changed"
	in.Evaluation.AllowedOutcomes[0] = "changed"
	got := d.Participants()
	got[1].PrincipalID = "changed too"
	e, _ := d.Evaluation()
	e.AllowedOutcomes[1] = "changed too"

	require.Equal(t, "acct:maria.lopez", d.Participants()[0].PrincipalID)
	require.Equal(t, "org:northwind-supplies", d.Participants()[1].PrincipalID)
	e, evalDigest := d.Evaluation()
	require.Equal(t, []string{"c"}, e.Question.Criteria)
	require.Equal(t, []string{"a", "b"}, e.AllowedOutcomes)
	require.Equal(t, e.Digest(), evalDigest)
	require.Equal(t, digest, d.Digest())
	reread, err := roundTrip(d)
	require.NoError(t, err)
	require.Equal(t, digest, reread.Digest())
}

func TestPrepareRefusesABadContext(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*draft.PrepareInput, *draft.Rules, *draft.IDs)
	}{
		{"canonical and legacy", func(i *draft.PrepareInput, _ *draft.Rules, _ *draft.IDs) {
			i.Canonical, i.Legacy = true, true
			i.ClaimantAcceptanceIdentity = "acct:x"
		}},
		{"rules without a version", func(_ *draft.PrepareInput, r *draft.Rules, _ *draft.IDs) { r.Version = "" }},
		{"rules hash in upper case", func(_ *draft.PrepareInput, r *draft.Rules, _ *draft.IDs) { r.Hash = strings.ToUpper(r.Hash) }},
		{"rules hash short", func(_ *draft.PrepareInput, r *draft.Rules, _ *draft.IDs) { r.Hash = r.Hash[:63] }},
		{"no tenant", func(i *draft.PrepareInput, _ *draft.Rules, _ *draft.IDs) { i.TenantID = "" }},
		{"unknown environment", func(i *draft.PrepareInput, _ *draft.Rules, _ *draft.IDs) { i.Environment = "staging" }},
		{"no partner", func(i *draft.PrepareInput, _ *draft.Rules, _ *draft.IDs) { i.PartnerID = "" }},
		{"no creator", func(i *draft.PrepareInput, _ *draft.Rules, _ *draft.IDs) { i.CreatedBy = "" }},
		{"no id generator", func(_ *draft.PrepareInput, _ *draft.Rules, ids *draft.IDs) { *ids = nil }},
		{"empty generated id", func(_ *draft.PrepareInput, _ *draft.Rules, ids *draft.IDs) {
			*ids = fixedIDs{draftID: "dr_1", caseID: "", feeID: "fee_1"}
		}},
		{"malformed generated id", func(_ *draft.PrepareInput, _ *draft.Rules, ids *draft.IDs) {
			*ids = fixedIDs{draftID: "dr_1", caseID: "cs_1", feeID: "fee 1"}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in, rules := twoParty(), testRules
			var ids draft.IDs = testIDs
			tt.mutate(&in, &rules, &ids)
			_, err := draft.Prepare(in, rules, fixedNow, ids)
			require.ErrorIs(t, err, draft.ErrInvalidContext)
			var verr *draft.ValidationError
			require.False(t, errors.As(err, &verr), "a context problem is not the requester's")
		})
	}
}

func TestParsePrincipalKind(t *testing.T) {
	tests := []struct {
		in   string
		want draft.PrincipalKind
		ok   bool
	}{
		{"individual", draft.PrincipalIndividual, true},
		{"organization", draft.PrincipalOrganization, true},
		{"autonomous_agent", draft.PrincipalAutonomousAgent, true},
		{"human", draft.PrincipalIndividual, true},
		{"ai_agent", draft.PrincipalAutonomousAgent, true},
		{"robot", "robot", false},
		{"", "", false},
	}
	for _, tt := range tests {
		got, ok := draft.ParsePrincipalKind(tt.in)
		require.Equal(t, tt.ok, ok, tt.in)
		if ok {
			require.Equal(t, tt.want, got, tt.in)
		}
	}
}

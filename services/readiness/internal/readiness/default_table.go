package readiness

import "fmt"

// The thresholds of the default table, each written once here and used both
// in the matches and in the texts that mention it.
const (
	defaultVersion            = "readiness-rules-2026-11-01"
	microClaimsCeilingCents   = 250_00
	fastTrackCeilingCents     = 10_000_00
	panelThresholdCents       = 250_000_00
	agentLaneCeilingCents     = 1_000_000_00
	defaultTimingHorizonHours = 72
)

// DefaultRuleTable returns the rule table the readiness service applies,
// version readiness-rules-2026-11-01. Every call returns a fresh copy, so a
// caller cannot change the rules of another.
//
// The table is published with worked examples in docs/readiness-rules.md; a
// test pins its hash, so a change here fails the build until the version,
// the pinned hash and the document change with it.
func DefaultRuleTable() RuleTable {
	microCeiling := MoneyFromCents(microClaimsCeilingCents)
	fastCeiling := MoneyFromCents(fastTrackCeilingCents)
	panelThreshold := MoneyFromCents(panelThresholdCents)
	agentCeiling := MoneyFromCents(agentLaneCeilingCents)
	zero := MoneyFromCents(0)
	yes, no := true, false

	monetary := []Remedy{RemedyCorpusAllocation, RemedyMoneyObligation}
	// microClaim is shared by the composition rule that puts a claim in the
	// micro tier and the requirement that asks for consent to that tier, so
	// the two can never disagree about which claims are micro claims.
	microClaim := Match{Remedies: monetary, AmountAtMostUsd: &microCeiling}
	escrowRails := []SettlementRail{RailX402R, RailBilateralEscrow}
	allocationRails := []SettlementRail{RailX402R, RailBilateralEscrow, RailACP, RailProcessorConnect, RailPartnerExecutes}

	const quoteOnly = "Quote only: this report collects nothing toward the filing fee. "

	return RuleTable{
		Version:             defaultVersion,
		FastTrackCeilingUsd: fastCeiling,
		TimingHorizonHours:  defaultTimingHorizonHours,
		AllocationRails:     allocationRails,
		ClaimClasses: []ClaimClassRule{
			{Class: ClassPaymentNotSettled, Remedies: monetary},
			{Class: ClassRefundWindowExpired, Remedies: monetary},
			{Class: ClassNonDelivery, Remedies: monetary},
			{Class: ClassDoubleCharge, Remedies: monetary},
			{Class: ClassEscrowedRefundRequest, Remedies: []Remedy{RemedyCorpusAllocation}, Rails: escrowRails},
			{Class: ClassACPEvaluation, Remedies: []Remedy{RemedyDeclaratory}, Rails: []SettlementRail{RailACP}},
		},

		Lanes: []LaneRule{
			{
				Code:      "both_parties_ai_agents",
				When:      Match{ClaimantTypes: []PartyType{PartyAIAgent}, RespondentTypes: []PartyType{PartyAIAgent}},
				Lane:      LaneAgent,
				Procedure: ProcedureAgentOnly,
			},
			{Code: "any_human_or_organization_party", Lane: LaneStandard, Procedure: ProcedureStandard},
		},
		LaneLimits: []LaneLimit{
			{
				Code: "monetary_remedy_without_amount",
				When: Match{Remedies: monetary, AmountAtMostUsd: &zero},
				Detail: "A {remedy} claim needs an amount in dispute above zero, and none is reported. " +
					"Report the amount in dispute, or seek declaratory relief.",
			},
			{
				Code: "agent_lane_ceiling",
				When: Match{Lanes: []Lane{LaneAgent}, AmountAboveUsd: &agentCeiling},
				Detail: fmt.Sprintf("The agent lane hears disputes between AI agents of up to USD %s; "+
					"this one is USD {amountInDisputeUsd} and is not supported there. "+
					"Disputes above the ceiling are heard in the standard lane, with the agents' "+
					"human or organization principals named as the parties.", agentCeiling),
			},
		},

		Compositions: []CompositionRule{
			{Reason: ReasonDeclaratoryRelief, When: Match{Remedies: []Remedy{RemedyDeclaratory}}, Value: CompositionSingleArbiter, Tier: TierDeclaratory},
			{Reason: ReasonMicroClaimsTier, When: microClaim, Value: CompositionMemorandum, Tier: TierMicro},
			{Reason: ReasonFastTrack, When: Match{CaseTracks: []CaseTrack{CaseTrackAIFast}}, Value: CompositionSingleArbiter, Tier: TierSingleArbiter},
			{Reason: ReasonPanelThreshold, When: Match{AmountAboveUsd: &panelThreshold}, Value: CompositionPanel, Tier: TierPanel},
			{Reason: ReasonStandardClaim, Value: CompositionSingleArbiter, Tier: TierSingleArbiter},
		},
		Fees: []FeeSchedule{
			{
				Tier:     TierMicro,
				Percent:  PercentFromBasisPoints(500),
				FloorUsd: MoneyFromCents(1_00),
				CollectionNote: quoteOnly + "The micro-claims fee is collected from the filing party " +
					"when the case draft is confirmed, through the fee's checkout (x402 or card), before the case opens.",
			},
			{
				Tier:     TierSingleArbiter,
				Percent:  PercentFromBasisPoints(300),
				FloorUsd: MoneyFromCents(50_00),
				CollectionNote: quoteOnly + "The fee is collected from the filing party when the case draft is " +
					"confirmed, through the fee's checkout (x402 or card), before the case opens.",
			},
			{
				Tier:              TierPanel,
				Percent:           PercentFromBasisPoints(150),
				FloorUsd:          MoneyFromCents(5_000_00),
				PanelSurchargeUsd: MoneyFromCents(2_500_00),
				CollectionNote: quoteOnly + "The fee, panel surcharge included, is collected from the filing party " +
					"when the case draft is confirmed, through the fee's checkout (x402 or card), before the case opens.",
			},
			{
				Tier:     TierDeclaratory,
				Percent:  PercentFromBasisPoints(0),
				FloorUsd: MoneyFromCents(150_00),
				CollectionNote: quoteOnly + "Declaratory relief has a flat fee, collected from the filing party " +
					"when the case draft is confirmed, through the fee's checkout (x402 or card), before the case opens.",
			},
		},

		Requirements: []RequirementRule{
			{
				Code:        CodeLaneSupport,
				Check:       CheckLaneSupported,
				Satisfied:   "The {lane} lane ({procedure} procedure) hears this dispute.",
				Unsatisfied: "{laneLimit}",
			},
			{
				Code:  CodeCaseTrackElection,
				Check: CheckCaseTrackProposed,
				Satisfied: "caseTrack {caseTrack} is proposed; the composition and fee below follow from it. " +
					"The track is fixed only when the case is filed.",
				Unsatisfied: "No caseTrack is proposed, so composition and filing fee stay unselected. " +
					"Propose ai_fast, ai_standard or ai_assisted_human.",
			},
			{
				Code:  CodeFastTrackClaimClass,
				When:  []Match{{CaseTracks: []CaseTrack{CaseTrackAIFast}}},
				Check: CheckFastTrackEligible,
				Satisfied: fmt.Sprintf("Claim class {fastTrackClaimClass} with USD {amountInDisputeUsd} in dispute "+
					"is within the ai_fast track (fast-track claim classes up to USD %s).", fastCeiling),
				Unsatisfied: fmt.Sprintf("ai_fast hears only fast-track claim classes (%s) of up to USD %s; "+
					"this claim has class {fastTrackClaimClass} and USD {amountInDisputeUsd} in dispute. "+
					"Report the claim class if one applies, or propose ai_standard or ai_assisted_human.",
					joinList(claimClasses, ", "), fastCeiling),
			},
			{
				Code:      CodeBilateralConsent,
				When:      []Match{{Lanes: []Lane{LaneStandard}}},
				Check:     CheckMutualConsent,
				Satisfied: "Both parties report consent to arbitrate this dispute.",
				Unsatisfied: "Arbitration needs the consent of both parties. Obtain the agreement of both " +
					"to arbitrate, then report mutualConsentReported.",
			},
			{
				Code:  CodeBilateralConsent,
				When:  []Match{{Lanes: []Lane{LaneAgent}}},
				Check: CheckMutualConsent,
				Satisfied: "Both agents report consent to arbitrate. The agent_only procedure also needs " +
					"bilateral exact acceptance: each agent accepts the exact case draft when it is confirmed.",
				Unsatisfied: "The agent_only procedure needs bilateral exact acceptance: both agents consent " +
					"to arbitrate and each later accepts the exact case draft. Report mutualConsentReported " +
					"once both agents have consented.",
			},
			{
				Code:  CodeAuthorityToBind,
				When:  []Match{{Lanes: []Lane{LaneStandard}}},
				Check: CheckAuthorityToBind,
				Satisfied: "Signers report authority to bind the parties they act for; authority is " +
					"checked again when the case draft is confirmed.",
				Unsatisfied: "Each signer needs authority to bind the party it acts for (for an " +
					"organization, a person it has authorized to act for it). Report authorityToBindReported once it is in place.",
			},
			{
				Code:  CodeAuthorityToBind,
				When:  []Match{{Lanes: []Lane{LaneAgent}}},
				Check: CheckAuthorityToBind,
				Satisfied: "Each agent reports authority to bind its principal. The agent lane also needs a " +
					"registered autonomous-agent account identity for each agent, checked when the case draft is prepared.",
				Unsatisfied: "Each agent needs authority to bind its principal and a registered " +
					"autonomous-agent account identity. Report authorityToBindReported once both agents have them.",
			},
			{
				Code:        CodeClaimantEvidence,
				Check:       CheckClaimantEvidence,
				Satisfied:   "Claimant evidence is reported ready for filing.",
				Unsatisfied: "Gather the claimant's evidence before filing; a claim is filed together with its evidence.",
			},
			{
				Code:  CodeRespondentProcess,
				Check: CheckRespondentEvidence,
				Satisfied: "Respondent evidence is expected to be available; the respondent is invited to " +
					"answer once the case opens.",
				Unsatisfied: "Respondent evidence is not expected to be available. Confirm that the " +
					"respondent can be reached and invited to answer, then report respondentEvidenceReady.",
			},
			{
				Code:      CodeRemedyScope,
				Check:     CheckRemedyAllowed,
				Satisfied: "{remedy} is a remedy this claim can seek.",
				Unsatisfied: "Claim class {fastTrackClaimClass} can seek only {allowedRemedies}. Change the " +
					"remedy, or report fastTrackClaimClass as null if the claim is not of that class.",
			},
			{
				Code:      CodeRemedialJurisdiction,
				When:      []Match{{Remedies: []Remedy{RemedyMoneyObligation, RemedyDeclaratory}}},
				Check:     CheckRemedialJurisdiction,
				Satisfied: "Both parties report opting in to relief beyond a held corpus, which {remedy} needs.",
				Unsatisfied: "{remedy} relief reaches beyond a held corpus, so both parties must opt in to " +
					"remedial jurisdiction before filing (remedialJurisdictionOptInReported); without it " +
					"the service hears only the allocation of a held corpus.",
			},
			{
				Code:  CodeMicroClaimsTierConsent,
				When:  []Match{microClaim},
				Check: CheckMicroClaimsTierConsent,
				Satisfied: fmt.Sprintf("Both parties consent to the micro-claims tier, which decides "+
					"claims of up to USD %s by written memorandum.", microCeiling),
				Unsatisfied: fmt.Sprintf("Claims of up to USD %s are heard only in the micro-claims tier "+
					"(written memorandum). Both parties must consent to it before filing "+
					"(microClaimsTierConsentReported).", microCeiling),
			},
			{
				Code: CodeSettlementRail,
				When: []Match{
					{Remedies: []Remedy{RemedyCorpusAllocation}},
					{ClaimClasses: []ClaimClass{ClassEscrowedRefundRequest, ClassACPEvaluation}},
				},
				Check:     CheckSettlementRailAllowed,
				Satisfied: "settlementRail {settlementRail} can carry out an award for this claim.",
				Unsatisfied: "settlementRail {settlementRail} cannot carry out an award for this claim; " +
					"it needs {allowedRails}. Arrange one of them, then report it as settlementRail.",
			},
			{
				Code:      CodeCorpusCoverage,
				When:      []Match{{Remedies: []Remedy{RemedyCorpusAllocation}}},
				Check:     CheckCorpusCompatible,
				Satisfied: "The held corpus of USD {corpusAmountUsd} covers the USD {amountInDisputeUsd} in dispute.",
				Unsatisfied: "corpus_allocation can only allocate a held corpus of at least the amount in " +
					"dispute (USD {amountInDisputeUsd}); see corpusCompatibility. Report a corpus that " +
					"covers the claim, or seek money_obligation with remedial jurisdiction.",
			},
		},

		Corpus: []CorpusRule{
			{
				Code:   "corpus_missing_for_allocation",
				When:   Match{Remedies: []Remedy{RemedyCorpusAllocation}, CorpusReported: &no},
				Detail: "corpus_allocation needs a held corpus, and none is reported (corpusAmountUsd is null).",
			},
			{
				Code: "corpus_short_of_amount",
				When: Match{Remedies: []Remedy{RemedyCorpusAllocation}, CorpusCoversAmount: &no},
				Detail: "The held corpus of USD {corpusAmountUsd} is less than the USD {amountInDisputeUsd} " +
					"in dispute; corpus_allocation cannot allocate more than is held.",
			},
			{
				Code:       "corpus_covers_allocation",
				When:       Match{Remedies: []Remedy{RemedyCorpusAllocation}, CorpusCoversAmount: &yes},
				Compatible: true,
				Detail:     "The held corpus of USD {corpusAmountUsd} covers the USD {amountInDisputeUsd} in dispute.",
			},
			{
				Code:       "no_corpus_needed",
				When:       Match{CorpusReported: &no},
				Compatible: true,
				Detail:     "No corpus is reported, and {remedy} relief does not depend on one.",
			},
			{
				Code:       "corpus_not_limiting",
				Compatible: true,
				Detail:     "A corpus of USD {corpusAmountUsd} is reported; {remedy} relief is not limited to it.",
			},
		},

		Timing: []TimingRule{
			{
				Code: "escrow_window_elapsed",
				When: Match{EscrowWindow: []EscrowWindowState{WindowElapsed}},
				Warning: "The escrow window ended at {escrowWindowEndsAt}; escrowed funds may already have " +
					"been released. Check the escrow state before filing.",
			},
			{
				Code: "escrow_window_closing",
				When: Match{EscrowWindow: []EscrowWindowState{WindowClosing}},
				Warning: fmt.Sprintf("The escrow window ends at {escrowWindowEndsAt}, within %d hours. "+
					"When it ends, escrowed funds may be released and no longer held for an award; file "+
					"well before then, or have the window extended.", defaultTimingHorizonHours),
			},
			{Code: "escrow_window_open", When: Match{EscrowWindow: []EscrowWindowState{WindowOpen}}},
			{
				Code: "escrow_window_unreported",
				When: Match{EscrowWindow: []EscrowWindowState{WindowAbsent}, SettlementRails: escrowRails},
				Warning: "settlementRail {settlementRail} holds funds in escrow, but no escrowWindowEndsAt is reported. " +
					"Report it to get a timing check.",
			},
			{Code: "no_escrow_window"},
		},

		Statement: "This report applies readiness rules {rulesVersion} (sha256 {rulesHash}) to the facts " +
			"as reported. It does not file a case, assess the merits, give legal advice, verify the " +
			"reported facts or move disputed funds; the filing fee is a quote and nothing is collected toward it.",
	}
}

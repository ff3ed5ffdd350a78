package agent

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/pcourt/pcourt/libs/award"
)

// rubricDrafter drafts by the Rubric: rule numbers below are the text's.
type rubricDrafter struct{}

func (rubricDrafter) draft(_ context.Context, pkg reviewPackage, requestedAt time.Time, _ *slog.Logger) (award.Proposal, error) {
	items := pkg.Record.Items
	if len(items) == 0 { // rule 1
		return award.Proposal{}, needHuman("the record has no item: the deterministic rubric decides by counting items and does not decide an empty record")
	}
	var claimant, respondent []string
	for _, it := range items {
		switch it.Side {
		case sideClaimant:
			claimant = append(claimant, it.ItemID)
		case sideRespondent:
			respondent = append(respondent, it.ItemID)
		}
	}
	citations := make([]award.Citation, len(items)) // rule 6
	for i, it := range items {
		citations[i] = award.Citation{ItemID: it.ItemID, Digest: it.Digest}
	}
	counted := fmt.Sprintf("Items counted: claimant %d (%s); respondent %d (%s).",
		len(claimant), list(claimant), len(respondent), list(respondent))

	p := award.Proposal{Remedies: []award.Remedy{}, Citations: citations}
	switch pkg.CaseMode {
	case modeEvaluation: // rule 5
		if pkg.Evaluation == nil || len(pkg.Evaluation.AllowedOutcomes) == 0 {
			return award.Proposal{}, needHuman("the evaluation has no allowed outcome for the deterministic rubric to choose")
		}
		allowed := pkg.Evaluation.AllowedOutcomes
		if len(claimant) > len(respondent) {
			p.Outcome = allowed[0]
			p.Reasons = fmt.Sprintf("The claimant side filed more items than the respondent side (%d to %d), so the rubric chooses the first allowed outcome, %q.", len(claimant), len(respondent), p.Outcome)
		} else {
			p.Outcome = allowed[len(allowed)-1]
			p.Reasons = fmt.Sprintf("The claimant side did not file more items than the respondent side (%d to %d), so the rubric chooses the last allowed outcome, %q.", len(claimant), len(respondent), p.Outcome)
		}
	case modeProceeding:
		due := dueBy(requestedAt) // rule 4
		switch {
		case len(respondent) == 0: // rule 2
			p.Outcome = award.OutcomeClaimUpheld
			p.Remedies = append(p.Remedies, payment(pkg.Claim.AmountMinor, pkg.Claim.Currency, due))
			p.Reasons = fmt.Sprintf("The respondent filed no answer and no submission, so the rubric upholds the claim: the respondent pays the claimant the full claim, %d %s (minor units), by %s.", pkg.Claim.AmountMinor, pkg.Claim.Currency, due)
		case len(claimant) >= len(respondent): // rule 3
			half := pkg.Claim.AmountMinor / 2
			p.Outcome = award.OutcomeClaimPartiallyUpheld
			if half > 0 {
				p.Remedies = append(p.Remedies, payment(half, pkg.Claim.Currency, due))
				p.Reasons = fmt.Sprintf("The respondent took part, and the claimant filed at least as many items (%d to %d), so the rubric upholds the claim in part: the respondent pays the claimant half the claim, %d %s (minor units), by %s.", len(claimant), len(respondent), half, pkg.Claim.Currency, due)
			} else {
				p.Reasons = fmt.Sprintf("The respondent took part, and the claimant filed at least as many items (%d to %d), so the rubric upholds the claim in part; half the claim rounds down to nothing, so it orders no payment.", len(claimant), len(respondent))
			}
		default:
			p.Outcome = award.OutcomeClaimDismissed
			p.Reasons = fmt.Sprintf("The respondent took part and filed more items than the claimant (%d to %d), so the rubric dismisses the claim, with no remedy.", len(respondent), len(claimant))
		}
	default:
		return award.Proposal{}, needHuman(fmt.Sprintf("case mode %q is neither proceeding nor evaluation", pkg.CaseMode))
	}
	// rule 7
	p.Reasons = "Decided by the pcourt deterministic rubric (version " + RubricVersion + "), not by a model: it counts the items of the confirmed record. " +
		p.Reasons + " " + counted
	return p, nil
}

// dueBy is 14 days after requestedAt's UTC date, at midnight (rule 4).
func dueBy(requestedAt time.Time) string {
	y, m, d := requestedAt.UTC().Date()
	return time.Date(y, m, d+14, 0, 0, 0, 0, time.UTC).Format(dueByLayout)
}

func payment(amount int64, currency, due string) award.Remedy {
	return award.Remedy{Kind: award.RemedyPayment, Payer: sideRespondent, Payee: sideClaimant, AmountMinor: amount, Currency: currency, DueBy: due}
}

func list(ids []string) string {
	if len(ids) == 0 {
		return "none"
	}
	return strings.Join(ids, ", ")
}

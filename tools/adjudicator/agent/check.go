package agent

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/pcourt/pcourt/libs/award"
	"github.com/pcourt/pcourt/libs/jcs"
)

// dueByLayout is the one form of a remedy's dueBy.
const dueByLayout = "2006-01-02T15:04:05.000Z"

// errProposal is wrapped by every refusal of a proposal.
var errProposal = errors.New("proposal refused")

// parseProposal reads a proposal strictly: one JSON object (duplicate
// member names refused), no member outside the schema, nothing after it.
func parseProposal(content string) (award.Proposal, error) {
	data := []byte(strings.TrimSpace(content))
	if _, err := jcs.Canonicalize(json.RawMessage(data)); err != nil {
		return award.Proposal{}, fmt.Errorf("%w: the answer is not one JSON object: %v", errProposal, err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var p award.Proposal
	if err := dec.Decode(&p); err != nil {
		return award.Proposal{}, fmt.Errorf("%w: the answer is not a %s object: %v", errProposal, award.SchemaProposal, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return award.Proposal{}, fmt.Errorf("%w: data after the JSON object", errProposal)
	}
	var members map[string]json.RawMessage
	if err := json.Unmarshal(data, &members); err != nil {
		return award.Proposal{}, fmt.Errorf("%w: the answer is not a JSON object", errProposal)
	}
	var missing []string
	for _, name := range []string{"outcome", "remedies", "reasons", "citations"} {
		if _, ok := members[name]; !ok {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		return award.Proposal{}, fmt.Errorf("%w: %s missing", errProposal, strings.Join(missing, ", "))
	}
	if p.Remedies == nil {
		p.Remedies = []award.Remedy{}
	}
	if p.Citations == nil {
		p.Citations = []award.Citation{}
	}
	return p, nil
}

// checkProposal checks p against the case as the package shows it, at now:
// the checks the cases service makes too, so that the agent never files
// what it has not checked. The error lists every problem found.
func checkProposal(p award.Proposal, pkg reviewPackage, now time.Time) error {
	var problems []string
	add := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }

	outcomes := pkg.outcomes()
	if !slices.Contains(outcomes, p.Outcome) {
		add("outcome %q is not one of %s", p.Outcome, strings.Join(outcomes, ", "))
	}
	if strings.TrimSpace(p.Reasons) == "" {
		add("reasons are empty")
	}

	digests := make(map[string]string, len(pkg.Record.Items))
	for _, it := range pkg.Record.Items {
		digests[it.ItemID] = it.Digest
	}
	if len(p.Citations) == 0 {
		add("no citation: cite at least one record item")
	}
	for i, c := range p.Citations {
		want, ok := digests[c.ItemID]
		switch {
		case !ok:
			add("citations[%d]: item %q is not in the record", i, c.ItemID)
		case c.Digest != want:
			add("citations[%d]: digest %q is not the record's digest of item %q (%s)", i, c.Digest, c.ItemID, want)
		}
	}

	noRemedies := pkg.CaseMode == modeEvaluation || p.Outcome == award.OutcomeClaimDismissed
	if noRemedies && len(p.Remedies) > 0 {
		if pkg.CaseMode == modeEvaluation {
			add("an evaluation has no remedies")
		} else {
			add("a dismissed claim has no remedies")
		}
	}
	var paid int64
	for i, r := range p.Remedies {
		switch r.Kind {
		case award.RemedyPayment:
			if r.Payer != sideRespondent || r.Payee != sideClaimant {
				add("remedies[%d]: a payment runs from the respondent to the claimant, not %q to %q", i, r.Payer, r.Payee)
			}
			if r.Currency != pkg.Claim.Currency {
				add("remedies[%d]: currency %q is not the claim's (%s)", i, r.Currency, pkg.Claim.Currency)
			}
			if r.AmountMinor <= 0 {
				add("remedies[%d]: amountMinor %d is not positive", i, r.AmountMinor)
			} else {
				paid += r.AmountMinor
			}
			if r.Obligor != "" || r.Description != "" {
				add("remedies[%d]: a payment has no obligor or description", i)
			}
		case award.RemedyPerformance:
			if r.Obligor != sideRespondent {
				add("remedies[%d]: the obligor of a performance is the respondent, not %q", i, r.Obligor)
			}
			if strings.TrimSpace(r.Description) == "" {
				add("remedies[%d]: a performance needs a description", i)
			}
			if r.Payer != "" || r.Payee != "" || r.AmountMinor != 0 || r.Currency != "" {
				add("remedies[%d]: a performance has no payer, payee, amount or currency", i)
			}
		default:
			add("remedies[%d]: kind %q is neither payment nor performance", i, r.Kind)
		}
		due, err := time.Parse(dueByLayout, r.DueBy)
		switch {
		case err != nil || due.Format(dueByLayout) != r.DueBy:
			add("remedies[%d]: dueBy %q is not of the form 2006-01-02T15:04:05.000Z", i, r.DueBy)
		case !due.After(now):
			add("remedies[%d]: dueBy %s is not after now (%s)", i, r.DueBy, now.UTC().Format(dueByLayout))
		}
	}
	if paid > pkg.Claim.AmountMinor {
		add("the payments total %d, more than the claim's %d %s", paid, pkg.Claim.AmountMinor, pkg.Claim.Currency)
	}
	if len(problems) > 0 {
		return fmt.Errorf("%w: %s", errProposal, strings.Join(problems, "; "))
	}
	return nil
}

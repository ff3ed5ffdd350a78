package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/pcourt/pcourt/libs/award"
)

// decisionStatus is GET /api/v2/cases/{caseId}/decision-status, the
// members the demo reads.
type decisionStatus struct {
	CaseStatus string `json:"caseStatus"`
	Decision   string `json:"decision"`
	Stage      string `json:"stage"`
	WaitingFor string `json:"waitingFor"`
	Tribunal   *struct {
		Adjudicator *tribunalMember `json:"adjudicator"`
		Reviewer    *tribunalMember `json:"reviewer"`
	} `json:"tribunal"`
	Run *struct {
		RunID           string `json:"runId"`
		Status          string `json:"status"`
		AttentionReason string `json:"attentionReason"`
	} `json:"run"`
	PreAwardReview *struct {
		Outcome string `json:"outcome"`
	} `json:"preAwardReview"`
	AwardHash string `json:"awardHash"`
}

type tribunalMember struct {
	MemberID            string               `json:"memberId"`
	Configuration       *award.Configuration `json:"configuration"`
	ConfigurationDigest string               `json:"configurationDigest"`
}

// The decision's stages the demo waits for (docs/tribunal.md).
const (
	stageReview         = "review"
	stageHumanAttention = "human_attention"
)

// walkToAward takes an opened case of the short plan to a signed award,
// verifies the award offline, prints "award <caseId> <awardHash>" and
// returns the hash. answer says the plan requires the respondent's
// answer.
func walkToAward(ctx context.Context, c *client, cfg settings, opened openedCase, answer bool, wait time.Duration) (string, error) {
	out, id := c.out, opened.CaseID
	v2, site := "/api/v2/cases/"+id, "/api/disputes/"+id

	step(out, "8. The cases service opens the case (the opening travels as an event; until then the case answers 404\n    case_not_found_or_opening with Retry-After)")
	if err := waitForCase(ctx, c, cfg.respondent, id, wait); err != nil {
		return "", err
	}

	if answer {
		step(out, "9. The respondent's agent answers (201); the evidence round opens")
		if err := c.call(ctx, "POST", v2+"/answer", cfg.respondent, key(), map[string]any{
			"text": "The subscription was provisioned on 2026-11-02; the activation e-mail is attached.",
		}, 201, nil); err != nil {
			return "", err
		}
	} else {
		step(out, "9. The plan asks for no answer: the evidence round is open from the opening (the respondent makes its case in its submission)")
	}

	step(out, "10. Each side files its one submission of the round (201); the record confirmation opens")
	if err := c.call(ctx, "POST", v2+"/submissions", cfg.claimant, key(), map[string]any{
		"text": "Invoice 2026-118 was paid on 2026-10-30; no API key was ever issued (support ticket 5521).",
	}, 201, nil); err != nil {
		return "", err
	}
	if err := c.call(ctx, "POST", v2+"/submissions", cfg.respondent, key(), map[string]any{
		"text": "Provisioning log: key issued 2026-11-02T09:14Z to the buyer's account.",
	}, 201, nil); err != nil {
		return "", err
	}

	step(out, "11. Both sides confirm the record (200): it closes, and the decision begins")
	for _, token := range []string{cfg.claimant, cfg.respondent} {
		if err := c.call(ctx, "POST", v2+"/record-confirmations", token, key(), map[string]any{}, 200, nil); err != nil {
			return "", err
		}
	}

	step(out, "12. The tribunal pool assigns an adjudicator and a reviewer; the adjudicator (the stack's reference\n    adjudicator) hears adjudication_requested, reads the review package and files its proposal")
	status, err := waitForStage(ctx, c, cfg.claimant, id, stageReview, wait)
	if err != nil {
		return "", err
	}
	if t := status.Tribunal; t != nil && t.Adjudicator != nil && t.Adjudicator.Configuration != nil {
		conf := t.Adjudicator.Configuration
		fmt.Fprintf(out, "   adjudicator %s, provider %s (%s %s), configuration %s\n", t.Adjudicator.MemberID, conf.Provider, conf.Model, conf.ModelVersion, t.Adjudicator.ConfigurationDigest)
	}

	step(out, "13. The reviewer reads the proposal in the review package")
	var pkg struct {
		Data struct {
			Proposal *award.Proposal `json:"proposal"`
		}
	}
	if err := c.call(ctx, "GET", site+"/review-package", cfg.reviewer, "", nil, 200, &pkg); err != nil {
		return "", err
	}
	if pkg.Data.Proposal == nil {
		return "", errors.New("the review package shows no proposal at stage review")
	}
	fmt.Fprintf(out, "   proposed outcome %s, %d remedies, %d citations\n", pkg.Data.Proposal.Outcome, len(pkg.Data.Proposal.Remedies), len(pkg.Data.Proposal.Citations))

	step(out, "14. The reviewer agrees with the proposal and attests (200 each)")
	if err := c.call(ctx, "POST", site+"/reviewer-opinion", cfg.reviewer, key(), map[string]any{"opinion": "agree"}, 200, nil); err != nil {
		return "", err
	}
	if err := c.call(ctx, "POST", site+"/reviewer-attestation", cfg.reviewer, key(), map[string]any{"reviewedRecord": true, "noConflict": true}, 200, nil); err != nil {
		return "", err
	}

	step(out, "15. The reviewer opens the pre-award review; each side reads the dispositive part and reports no clerical error")
	if err := c.call(ctx, "POST", site+"/pre-award-review", cfg.reviewer, key(), map[string]any{}, 200, nil); err != nil {
		return "", err
	}
	for _, token := range []string{cfg.claimant, cfg.respondent} {
		if err := c.call(ctx, "POST", site+"/pre-award-review", token, key(), map[string]any{"clericalErrors": []string{}}, 200, nil); err != nil {
			return "", err
		}
	}

	step(out, "16. The reviewer signs off: the award is issued, signed with the award key")
	var signed struct{ Data decisionStatus }
	if err := c.call(ctx, "POST", site+"/signoff", cfg.reviewer, key(), map[string]any{}, 200, &signed); err != nil {
		return "", err
	}
	if signed.Data.Decision != "awarded" || signed.Data.AwardHash == "" {
		return "", fmt.Errorf("the signoff answered decision %q at stage %q, not an award", signed.Data.Decision, signed.Data.Stage)
	}

	step(out, "17. Anyone holding the artifacts checks them offline: the json artifact, its attestation (a detached JWS),\n    and the published award keys")
	var view struct {
		Data struct {
			AwardID   string `json:"awardId"`
			AwardHash string `json:"awardHash"`
			KeyID     string `json:"keyId"`
			Outcome   string `json:"outcome"`
		}
	}
	if err := c.call(ctx, "GET", v2+"/award", cfg.claimant, "", nil, 200, &view); err != nil {
		return "", err
	}
	awardJSON, err := c.get(ctx, v2+"/award/artifacts/json", cfg.claimant)
	if err != nil {
		return "", err
	}
	attestation, err := c.get(ctx, v2+"/award/artifacts/json/attestation", cfg.respondent)
	if err != nil {
		return "", err
	}
	keys, err := c.get(ctx, "/api/awards/keys", "")
	if err != nil {
		return "", err
	}
	verified, err := award.Verify(awardJSON, string(attestation), keys)
	if err != nil {
		return "", fmt.Errorf("the award of case %s does not verify: %w", id, err)
	}
	switch {
	case verified.AwardHash != signed.Data.AwardHash:
		return "", fmt.Errorf("the json artifact hashes to %s, the signoff issued %s", verified.AwardHash, signed.Data.AwardHash)
	case verified.AwardHash != view.Data.AwardHash:
		return "", fmt.Errorf("the json artifact hashes to %s, GET award says %s", verified.AwardHash, view.Data.AwardHash)
	case verified.KeyID != view.Data.KeyID:
		return "", fmt.Errorf("the attestation was signed by %s, GET award says %s", verified.KeyID, view.Data.KeyID)
	case verified.Award.CaseID != id:
		return "", fmt.Errorf("the award names case %s, not %s", verified.Award.CaseID, id)
	}
	fmt.Fprintf(out, "   verified: award %s of case %s, outcome %s, signed by %s\n\n", verified.Award.AwardID, id, verified.Award.Outcome, verified.KeyID)
	fmt.Fprintf(out, "award %s %s\n", id, verified.AwardHash)
	return verified.AwardHash, nil
}

// waitForCase polls the case until the cases service has opened it: a
// case opened moments ago answers 404 case_not_found_or_opening meanwhile.
func waitForCase(ctx context.Context, c *client, token, caseID string, wait time.Duration) error {
	path := "/api/v2/cases/" + caseID
	deadline := time.Now().Add(wait)
	for {
		var got struct {
			Data struct {
				Status string `json:"status"`
			}
		}
		err := c.quiet(ctx, "GET", path, token, "", nil, 200, &got)
		if err == nil {
			fmt.Fprintf(c.out, "   GET %s → 200, status %s\n", path, got.Data.Status)
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("case %s did not open within %s: %w", caseID, wait, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// waitForStage polls the case's decision-status until the decision
// reaches stage, printing each stage it passes through. A request for
// human attention, and wait running out, are errors that name the stage
// the decision stayed in.
func waitForStage(ctx context.Context, c *client, token, caseID, stage string, wait time.Duration) (decisionStatus, error) {
	path := "/api/v2/cases/" + caseID + "/decision-status"
	fmt.Fprintf(c.out, "   GET %s, every 500 ms, until stage %s (at most %s)\n", path, stage, wait)
	deadline := time.Now().Add(wait)
	var last decisionStatus
	for {
		var status struct{ Data decisionStatus }
		if err := c.quiet(ctx, "GET", path, token, "", nil, 200, &status); err != nil {
			return last, err
		}
		s := status.Data
		if s.Stage != last.Stage {
			fmt.Fprintf(c.out, "   stage %s (waiting for %s)\n", s.Stage, orNone(s.WaitingFor))
		}
		last = s
		switch s.Stage {
		case stage:
			return s, nil
		case stageHumanAttention:
			reason := ""
			if s.Run != nil {
				reason = s.Run.AttentionReason
			}
			return s, fmt.Errorf("the adjudicator asked for human attention instead of a proposal: %s", reason)
		}
		if time.Now().After(deadline) {
			return s, fmt.Errorf("case %s: the decision waited in stage %s (waiting for %s) for %s without reaching stage %s; is the stack's reference adjudicator running (make run starts it, its log is .devstack/logs/adjudicator.log)?",
				caseID, s.Stage, orNone(s.WaitingFor), wait, stage)
		}
		select {
		case <-ctx.Done():
			return s, ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
}

func orNone(s string) string {
	if s == "" {
		return "nothing"
	}
	return s
}

// get fetches path's exact bytes (an artifact, the key set), with token
// when not empty; anything but 200 is an error.
func (c *client) get(ctx context.Context, path, token string) ([]byte, error) {
	return c.do(ctx, "GET", path, token, "", nil, 200, true)
}

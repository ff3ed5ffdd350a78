package awarddoc_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/award"
)

// digest stands for the SHA-256 of an item named s.
func digest(s string) string { return award.Hash([]byte(s)) }

// hashOf is d's awardHash, as the service computes it when it issues d.
func hashOf(t testing.TB, d award.Document) string {
	t.Helper()
	b, err := award.Canonical(d)
	require.NoError(t, err)
	return award.Hash(b)
}

// proceeding is an award of a proceeding in production: the claim partly
// upheld, a payment and a performance ordered, the first run failed.
func proceeding() award.Document {
	return award.Document{
		SchemaVersion:  award.SchemaAward,
		AwardID:        "awd_01JH5Z7Q8R9S",
		CaseID:         "case_01JH5Z2K3M4N",
		ExternalCaseID: "order-7741",
		Environment:    "production",
		CaseMode:       "proceeding",
		Rules:          award.Rules{Version: "pc-rules-2026-09", Hash: digest("rules")},
		Parties: []award.Party{
			{Side: "claimant", ParticipantID: "prt_claimant_1", PrincipalID: "acct_buyer_1"},
			{Side: "respondent", ParticipantID: "prt_respondent_1", PrincipalID: "acct_seller_1"},
		},
		Outcome: award.OutcomeClaimPartiallyUpheld,
		Remedies: []award.Remedy{
			{Kind: award.RemedyPayment, Payer: "respondent", Payee: "claimant", AmountMinor: 42000, Currency: "USD", DueBy: "2026-12-10T00:00:00.000Z"},
			{Kind: award.RemedyPerformance, Obligor: "respondent", Description: "deliver the remaining 3 licence keys to the claimant", DueBy: "2026-12-17T00:00:00.000Z"},
		},
		Reasons: "The claimant paid for 5 licence keys and received 2.\r\n\r\n" +
			"The answer admits the shortfall but disputes the amount.\nIts invoice shows a partial credit.",
		Citations: []award.Citation{
			{ItemID: "answer", Digest: digest("answer"), Pinpoint: "paragraph 2"},
			{ItemID: "sub_01JH5Z9", Digest: digest("invoice")},
		},
		Tribunal: award.Tribunal{
			Adjudicator: award.Member{MemberID: "mbr_adjudicator_1", Kind: "autonomous_agent"},
			Configuration: award.Configuration{
				Provider:            "openai-compatible",
				Model:               "gpt-oss-120b",
				ModelVersion:        "2026-08-01",
				InstructionsDigest:  digest("instructions"),
				OutputSchemaVersion: award.SchemaProposal,
				TemperatureMilli:    700,
				Tools:               []string{},
			},
			Runs: []award.Run{
				{RunID: "run_1", ConfigurationDigest: digest("configuration"), InputDigest: digest("record"), Status: "failed"},
				{RunID: "run_2", ConfigurationDigest: digest("configuration"), InputDigest: digest("record"), OutputDigest: digest("proposal"), Status: "completed"},
			},
			Reviewer:        award.Member{MemberID: "mbr_reviewer_1", Kind: "individual"},
			ReviewerOpinion: "agree",
		},
		IssuedAt: "2026-11-10T12:30:45.123Z",
	}
}

// evaluation is a sandbox evaluation's award that corrects an earlier
// one: no remedy, the outcome overridden by a reviewer who revised the
// reasons, the rubric adjudicator with a tool.
func evaluation() award.Document {
	d := proceeding()
	d.AwardID = "awd_01JH6A0B1C2D"
	d.CaseID = "case_01JH69X0Y1Z2"
	d.ExternalCaseID = "eval-run-88"
	d.Environment = "sandbox"
	d.CaseMode = "evaluation"
	d.Corrects = digest("the earlier award")
	d.Evaluation = &award.Evaluation{
		ExternalEvaluationID: "eval-2026-q4-17",
		EvaluationDigest:     digest("evaluation"),
		Question:             "Does the summary state the refund policy correctly?",
		Criteria:             []string{"It names the 30-day window.", "It names the restocking fee."},
		AllowedOutcomes:      []string{"correct", "partially_correct", "incorrect"},
	}
	d.Outcome = "partially_correct"
	d.Remedies = []award.Remedy{}
	d.Reasons = "The summary names the window but not the fee."
	d.Citations = []award.Citation{}
	d.Tribunal.Configuration.Provider = "rubric"
	d.Tribunal.Configuration.Model = "pc-rubric"
	d.Tribunal.Configuration.TemperatureMilli = 0
	d.Tribunal.Configuration.Tools = []string{"lookup_policy", "count_words"}
	d.Tribunal.Runs = d.Tribunal.Runs[1:]
	d.Tribunal.ReviewerOpinion = "revise"
	d.Tribunal.Overridden = true
	return d
}

// Hostile texts: markup, quotes, a word longer than any line, scripts
// beyond Windows-1252 and what it has (é, €), and fpdf's page alias.
const (
	markup   = `<script>alert("x")</script><img src=x onerror=alert(1)> "double" 'single' & done`
	nonLatin = "日本語の主張 Ελληνικά العربية Привет café €5"
	alias    = "{nb}"
)

var longWord = strings.Repeat("Unbreakable", 300)

// hostile is the proceeding award with hostile text in the fields a
// party or an adjudicator writes.
func hostile() award.Document {
	d := proceeding()
	d.ExternalCaseID = markup
	d.Parties[0].PrincipalID = `acct"><script>x</script>`
	d.Remedies[1].Description = markup
	d.Reasons = markup + "\n\n" + nonLatin + "\n\n" + longWord + "\n\nPage " + alias + " of the contract."
	d.Citations[0].Pinpoint = nonLatin
	d.Tribunal.Configuration.Model = "</style><script>x</script>"
	return d
}

// consent is a consent award: the sides' settlement, recorded by the
// reviewer; a payment and a return agreed, no adjudicator.
func consent() award.Document {
	d := proceeding()
	d.AwardID = "award:case_01JH5Z2K3M4N:1"
	d.Outcome = award.OutcomeSettledByConsent
	d.Remedies = []award.Remedy{
		{Kind: award.RemedyPayment, Payer: "respondent", Payee: "claimant", AmountMinor: 25000, Currency: "USD", DueBy: "2026-12-01T00:00:00.000Z"},
		{Kind: award.RemedyPerformance, Obligor: "claimant", Description: "return the two unused licence keys", DueBy: "2026-12-05T00:00:00.000Z"},
	}
	d.Reasons = "The sides settled their dispute and asked the tribunal to record their settlement as an award on agreed terms."
	d.Citations = []award.Citation{}
	text := "The seller refunds 250.00 USD.\n\nThe buyer returns the two unused keys; each side bears its own costs."
	termsDigest, err := award.Terms{Remedies: d.Remedies, Text: text}.Digest()
	if err != nil {
		panic(err)
	}
	d.Settlement = &award.Settlement{TermsDigest: termsDigest, Text: text, Consents: []award.Consent{
		{Side: "respondent", ParticipantID: "prt_respondent_1", Act: award.ConsentProposed, At: "2026-11-08T09:00:00.000Z"},
		{Side: "claimant", ParticipantID: "prt_claimant_1", Act: award.ConsentAccepted, At: "2026-11-09T17:45:00.000Z"},
	}}
	d.Tribunal = award.Tribunal{Runs: []award.Run{}, Reviewer: award.Member{MemberID: "mbr_reviewer_1", Kind: "individual"}}
	return d
}

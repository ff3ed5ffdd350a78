package awarddoc_test

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// A consent award reads as what it is: the sides' terms, their consents
// and the digest that names the terms, recorded by the reviewer, with no
// adjudicator, configuration or run.
func TestAConsentAwardShowsTheSettlementAndWhoRecordedIt(t *testing.T) {
	d := consent()
	page := renderHTML(t, d)
	for _, want := range []string{
		"<strong>Settled by consent</strong> (<code>settled_by_consent</code>)",
		"<li>The respondent shall pay the claimant USD 250.00 by 2026-12-01T00:00:00.000Z.</li>",
		"<li>The claimant shall perform by 2026-12-05T00:00:00.000Z: return the two unused licence keys.</li>",
		`<section id="settlement">`,
		"<p>The seller refunds 250.00 USD.</p>\n<p>The buyer returns the two unused keys; each side bears its own costs.</p>",
		`<dt>Terms digest</dt><dd><code id="terms-digest">` + d.Settlement.TermsDigest + "</code></dd>",
		"<tr><td>respondent</td><td><code>prt_respondent_1</code></td><td>proposed</td><td>2026-11-08T09:00:00.000Z</td></tr>",
		"<tr><td>claimant</td><td><code>prt_claimant_1</code></td><td>accepted</td><td>2026-11-09T17:45:00.000Z</td></tr>",
		"no adjudicator decided the dispute",
		"<dt>Recorded by</dt><dd><code>mbr_reviewer_1</code> (individual)</dd>",
		`<code id="award-hash">` + hashOf(t, d) + "</code>",
	} {
		require.Contains(t, page, want)
	}
	for _, absent := range []string{"<h3>Adjudicator</h3>", "Pinned configuration", "<h3>Runs</h3>", "<dt>Opinion</dt>"} {
		require.NotContains(t, page, absent)
	}
	require.NotContains(t, renderHTML(t, proceeding()), `id="settlement"`, "a decided award has no settlement")

	got := text(renderPDF(t, d))
	for _, want := range []string{
		"Settled by consent (settled_by_consent)",
		"1. The respondent shall pay the claimant USD 250.00 by 2026-12-01T00:00:00.000Z.",
		"The seller refunds 250.00 USD.",
		"Terms digest " + d.Settlement.TermsDigest,
		"Respondent proposed at 2026-11-08T09:00:00.000Z participant id prt_respondent_1",
		"Claimant accepted at 2026-11-09T17:45:00.000Z participant id prt_claimant_1",
		"Recorded by mbr_reviewer_1 (individual)",
		"Award hash " + hashOf(t, d),
	} {
		require.Contains(t, got, want)
	}
	for _, absent := range []string{"Member id", "Provider", "Output digest", "Outcome overridden"} {
		require.NotContains(t, got, absent)
	}
}

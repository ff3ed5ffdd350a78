package awarddoc_test

import (
	"crypto/sha256"
	"encoding/base64"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/award"
	"github.com/pcourt/pcourt/libs/webpage"
	"github.com/pcourt/pcourt/services/cases/internal/awarddoc"
)

var update = flag.Bool("update", false, "rewrite the golden pages under testdata")

func renderHTML(t testing.TB, d award.Document) string {
	t.Helper()
	b, err := awarddoc.HTML(d, hashOf(t, d))
	require.NoError(t, err)
	return string(b)
}

func TestHTMLShowsEveryFactOfAProceedingAward(t *testing.T) {
	d := proceeding()
	page := renderHTML(t, d)

	for _, want := range []string{
		"<!doctype html>\n<html lang=\"en\">",
		`<meta charset="utf-8">`,
		"<title>Award · case case_01JH5Z2K3M4N</title>",
		"<h1>Award</h1>",
		`Case <code id="case-id">case_01JH5Z2K3M4N</code> · external case id <code id="external-case-id">order-7741</code>`,
		"<dt>Award id</dt><dd><code>awd_01JH5Z7Q8R9S</code></dd>",
		"<dt>Issued at</dt><dd>2026-11-10T12:30:45.123Z</dd>",
		"<dt>Environment</dt><dd>production</dd>",
		"<tr><td>claimant</td><td><code>prt_claimant_1</code></td><td><code>acct_buyer_1</code></td></tr>",
		"<tr><td>respondent</td><td><code>prt_respondent_1</code></td><td><code>acct_seller_1</code></td></tr>",
		"<dt>Version</dt><dd>pc-rules-2026-09</dd>",
		"<dt>Hash</dt><dd><code>" + digest("rules") + "</code></dd>",
		"<strong>Claim partially upheld</strong> (<code>claim_partially_upheld</code>)",
		"<li>The respondent shall pay the claimant USD 420.00 by 2026-12-10T00:00:00.000Z.</li>",
		"<li>The respondent shall perform by 2026-12-17T00:00:00.000Z: deliver the remaining 3 licence keys to the claimant.</li>",
		// Paragraphs at blank lines; a single line break stays in its
		// paragraph (white-space: pre-line shows it).
		"<p>The claimant paid for 5 licence keys and received 2.</p>\n<p>The answer admits the shortfall but disputes the amount.\nIts invoice shows a partial credit.</p>",
		"<tr><td><code>answer</code></td><td><code>" + digest("answer") + "</code></td><td>paragraph 2</td></tr>",
		"<tr><td><code>sub_01JH5Z9</code></td><td><code>" + digest("invoice") + "</code></td><td></td></tr>",
		"<dt>Member id</dt><dd><code>mbr_adjudicator_1</code></dd>",
		"<dt>Kind</dt><dd>autonomous_agent</dd>",
		"<dt>Provider</dt><dd>openai-compatible</dd>",
		"<dt>Model</dt><dd>gpt-oss-120b</dd>",
		"<dt>Model version</dt><dd>2026-08-01</dd>",
		"<dt>Instructions digest</dt><dd><code>" + digest("instructions") + "</code></dd>",
		"<dt>Output schema</dt><dd><code>pc-adjudication-proposal-v1</code></dd>",
		"<dt>Temperature</dt><dd>0.7</dd>",
		"<dt>Tools</dt><dd>none</dd>",
		"<tr><td><code>run_1</code></td><td>failed</td><td>configuration <code>" + digest("configuration") + "</code><br>input <code>" + digest("record") + "</code><br>output none: the run ended without a proposal</td></tr>",
		"<tr><td><code>run_2</code></td><td>completed</td>",
		"output <code>" + digest("proposal") + "</code>",
		"<dt>Reviewer</dt><dd><code>mbr_reviewer_1</code> (individual)</dd>",
		"<dt>Opinion</dt><dd>agree: the reasons are the adjudicator&#39;s proposal</dd>",
		"<dt>Outcome overridden</dt><dd>no: the outcome is the one the adjudicator proposed</dd>",
		`<code id="award-hash">` + hashOf(t, d) + "</code>",
		"docs/awards.md",
		"@media print",
	} {
		require.Contains(t, page, want)
	}
	for _, absent := range []string{"SANDBOX", `id="evaluation"`, `id="corrects"`} {
		require.NotContains(t, page, absent)
	}
}

func TestHTMLShowsAnEvaluationAwardItsQuestionAndTheCorrection(t *testing.T) {
	d := evaluation()
	page := renderHTML(t, d)

	for _, want := range []string{
		`<p class="corrects" id="corrects">This award corrects the award whose hash is <code>` + digest("the earlier award") + "</code>.</p>",
		"<dt>Case mode</dt><dd>evaluation</dd>",
		"<dt>External evaluation id</dt><dd><code>eval-2026-q4-17</code></dd>",
		"<dt>Evaluation digest</dt><dd><code>" + digest("evaluation") + "</code></dd>",
		"<dt>Question</dt><dd>Does the summary state the refund policy correctly?</dd>",
		"<ol>\n<li>It names the 30-day window.</li>\n<li>It names the restocking fee.</li>\n</ol>",
		"<li><code>correct</code></li>\n<li><code>partially_correct</code></li>\n<li><code>incorrect</code></li>",
		"<strong>Partially correct</strong> (<code>partially_correct</code>)",
		"The award orders no remedy.",
		"The award cites no item of the record.",
		"<dt>Provider</dt><dd>rubric</dd>",
		"<dt>Temperature</dt><dd>0</dd>",
		"<dt>Tools</dt><dd>lookup_policy, count_words</dd>",
		"<dt>Opinion</dt><dd>revise: the reasons are the reviewer&#39;s own</dd>",
		"<dt>Outcome overridden</dt><dd>yes: the reviewer replaced the proposed outcome</dd>",
	} {
		require.Contains(t, page, want)
	}
	require.NotContains(t, page, "run_1")
}

func TestHTMLSaysEachRemedyAsASentence(t *testing.T) {
	due := "2026-12-10T00:00:00.000Z"
	tests := []struct {
		name   string
		remedy award.Remedy
		want   string
	}{
		{"dollars and cents", award.Remedy{Kind: award.RemedyPayment, Payer: "respondent", Payee: "claimant", AmountMinor: 42000, Currency: "USD", DueBy: due},
			"The respondent shall pay the claimant USD 420.00 by 2026-12-10T00:00:00.000Z."},
		{"cents only", award.Remedy{Kind: award.RemedyPayment, Payer: "respondent", Payee: "claimant", AmountMinor: 5, Currency: "USD", DueBy: due},
			"The respondent shall pay the claimant USD 0.05 by 2026-12-10T00:00:00.000Z."},
		{"a claimant pays", award.Remedy{Kind: award.RemedyPayment, Payer: "claimant", Payee: "respondent", AmountMinor: 123456789, Currency: "USD", DueBy: due},
			"The claimant shall pay the respondent USD 1234567.89 by 2026-12-10T00:00:00.000Z."},
		{"another currency in its minor units as given", award.Remedy{Kind: award.RemedyPayment, Payer: "respondent", Payee: "claimant", AmountMinor: 42000, Currency: "EUR", DueBy: due},
			"The respondent shall pay the claimant EUR 42000 (minor units) by 2026-12-10T00:00:00.000Z."},
		{"a currency without decimals is not divided", award.Remedy{Kind: award.RemedyPayment, Payer: "respondent", Payee: "claimant", AmountMinor: 420, Currency: "JPY", DueBy: due},
			"The respondent shall pay the claimant JPY 420 (minor units) by 2026-12-10T00:00:00.000Z."},
		{"a performance gets its full stop", award.Remedy{Kind: award.RemedyPerformance, Obligor: "respondent", Description: "  restore the account  ", DueBy: due},
			"The respondent shall perform by 2026-12-10T00:00:00.000Z: restore the account."},
		{"a performance keeps its own", award.Remedy{Kind: award.RemedyPerformance, Obligor: "claimant", Description: "Return the device.", DueBy: due},
			"The claimant shall perform by 2026-12-10T00:00:00.000Z: Return the device."},
		{"an unknown kind is named, not guessed", award.Remedy{Kind: "apology", DueBy: due},
			"A remedy of kind &#34;apology&#34; is due by 2026-12-10T00:00:00.000Z."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := proceeding()
			d.Remedies = []award.Remedy{tt.remedy}
			require.Contains(t, renderHTML(t, d), "<ol class=\"remedies\">\n<li>"+tt.want+"</li>\n</ol>")
		})
	}
}

func TestHTMLSaysTheTemperatureAsADecimal(t *testing.T) {
	for milli, want := range map[int]string{0: "0", 1: "0.001", 700: "0.7", 1000: "1", 1250: "1.25", 2000: "2"} {
		d := proceeding()
		d.Tribunal.Configuration.TemperatureMilli = milli
		require.Contains(t, renderHTML(t, d), "<dt>Temperature</dt><dd>"+want+"</dd>", "temperatureMilli %d", milli)
	}
}

func TestHTMLEscapesHostileText(t *testing.T) {
	page := renderHTML(t, hostile())

	// The template has no script, image or second style: any would be the
	// document's text run as markup.
	for _, tag := range []string{"<script", "<img", "</style><"} {
		require.NotContains(t, page, tag)
	}
	require.Equal(t, 1, strings.Count(page, "</style>"))
	for _, want := range []string{
		`<code id="external-case-id">&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt; &#34;double&#34; &#39;single&#39; &amp; done</code>`,
		"<td><code>acct&#34;&gt;&lt;script&gt;x&lt;/script&gt;</code></td>",
		"<dt>Model</dt><dd>&lt;/style&gt;&lt;script&gt;x&lt;/script&gt;</dd>",
		"<p>" + nonLatin + "</p>",
		"<td>" + nonLatin + "</td>",
		"<p>" + longWord + "</p>",
		"<p>Page {nb} of the contract.</p>",
	} {
		require.Contains(t, page, want)
	}
}

func TestHTMLReplacesBytesThatAreNotUTF8AsTheJSONDoes(t *testing.T) {
	d := proceeding()
	d.Reasons = "a\xffb\xfe\xfdc"
	page := renderHTML(t, d)
	require.True(t, utf8.ValidString(page))
	require.Contains(t, page, "<p>a\uFFFDb\uFFFD\uFFFDc</p>")
	b, err := award.Canonical(d)
	require.NoError(t, err)
	require.Contains(t, string(b), "\"reasons\":\"a\uFFFDb\uFFFD\uFFFDc\"")
}

func TestHTMLIsStandalone(t *testing.T) {
	for _, d := range []award.Document{proceeding(), evaluation(), consent()} {
		page := renderHTML(t, d)
		for _, external := range []string{"<script", "<link", "<img", "<iframe", "src=", "href=", "url(", "@import", "http:", "https:"} {
			require.NotContains(t, page, external)
		}
	}
}

// TestHTMLMatchesTheGoldenPages keeps a whole page under review: go test
// -update rewrites testdata after a deliberate change, and the diff shows it.
func TestHTMLMatchesTheGoldenPages(t *testing.T) {
	for name, d := range map[string]award.Document{"proceeding.html": proceeding(), "evaluation-sandbox.html": evaluation(), "consent.html": consent()} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join("testdata", name)
			page := renderHTML(t, d)
			if *update {
				require.NoError(t, os.MkdirAll("testdata", 0o755))
				require.NoError(t, os.WriteFile(path, []byte(page), 0o644))
			}
			want, err := os.ReadFile(path)
			require.NoError(t, err, "no golden page: run go test -update")
			require.Equal(t, string(want), page)
		})
	}
}

func TestBothArtifactsSayAnAppellateAwardsDecision(t *testing.T) {
	d := proceeding()
	d.Corrects = digest("the appealed award")
	d.Appeal = &award.Appeal{AppealID: "apl_1", Appellant: "respondent", Decision: award.AppealSetAside, Reviewer: award.Member{MemberID: "cred-appellate", Kind: "individual"}}
	want := "This award decides appeal apl_1 of the respondent: the appealed award (the one it corrects) is set aside by the appellate reviewer cred-appellate."
	require.Contains(t, renderHTML(t, d), want)
	require.Contains(t, text(renderPDF(t, d)), want)
}

// The artifact is drawn with the design system: its one style element
// starts with the pages' base stylesheet, byte for byte, with its dark
// scheme, then the award's rules and a print stylesheet; no style
// attribute anywhere, so StyleSource's hash admits all of its look. The
// same award gives the same bytes, render after render.
func TestHTMLCarriesTheDesignSystem(t *testing.T) {
	for _, d := range []award.Document{proceeding(), evaluation(), consent()} {
		page := renderHTML(t, d)
		_, rest, ok := strings.Cut(page, "<style>\n")
		require.True(t, ok)
		style, _, ok := strings.Cut(rest, "</style>")
		require.True(t, ok)
		require.True(t, strings.HasPrefix(style, string(webpage.BaseStylesheet)), "the design system's base, as the pages have it")
		for _, want := range []string{"@media (prefers-color-scheme: dark)", "@media print", "@page { size: A4", "color-scheme: light dark"} {
			require.Contains(t, style, want)
		}
		require.NotContains(t, page, " style=", "no style attribute")
		require.Equal(t, page, renderHTML(t, d), "the same bytes again")

		source, ok := awarddoc.StyleSource([]byte(page))
		require.True(t, ok)
		sum := sha256.Sum256([]byte("\n" + style))
		require.Equal(t, "'sha256-"+base64.StdEncoding.EncodeToString(sum[:])+"'", source, "the hash of the style element's text")
	}
	_, ok := awarddoc.StyleSource([]byte("<p>The award</p>"))
	require.False(t, ok)
}

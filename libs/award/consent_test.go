package award_test

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/award"
)

// consentTerms are the terms the sides of sampleConsentAward agreed.
func consentTerms() award.Terms {
	return award.Terms{
		Remedies: []award.Remedy{
			{Kind: award.RemedyPayment, Payer: "respondent", Payee: "claimant", AmountMinor: 2500, Currency: "USD", DueBy: "2026-12-23T00:00:00.000Z"},
			{Kind: award.RemedyPerformance, Obligor: "claimant", Description: "Return the second unit, unopened.", DueBy: "2026-12-30T00:00:00.000Z"},
		},
		Text: "The seller refunds 25.00 USD and the buyer returns the second unit; each side bears its own costs.",
	}
}

// sampleConsentAward is a consent award as the cases service records it:
// the sides' terms, their consents, the reviewer who recorded them.
func sampleConsentAward() award.Document {
	terms := consentTerms()
	digest, err := terms.Digest()
	if err != nil {
		panic(err)
	}
	d := sampleAward()
	d.AwardID = "award:cs_01JD8Q9XK3M5P7R9T1V3X5Z7B9:1"
	d.Outcome = award.OutcomeSettledByConsent
	d.Remedies = terms.Remedies
	d.Reasons = "The sides settled their dispute and asked the tribunal to record their settlement as an award on agreed terms."
	d.Citations = nil
	d.Settlement = &award.Settlement{TermsDigest: digest, Text: terms.Text, Consents: []award.Consent{
		{Side: "respondent", ParticipantID: "pt_respondent_1", Act: award.ConsentProposed, At: "2026-11-20T09:00:00.000Z"},
		{Side: "claimant", ParticipantID: "pt_claimant_1", Act: award.ConsentAccepted, At: "2026-11-21T16:30:00.000Z"},
	}}
	d.Tribunal = award.Tribunal{Reviewer: award.Member{MemberID: "mb_reviewer_1", Kind: "individual"}}
	return d
}

// The terms' digest is the SHA-256 of their RFC 8785 bytes, remedies
// written [] when there are none: any implementation computes it from the
// JSON alone.
func TestTheTermsDigestIsTheirCanonicalBytesHash(t *testing.T) {
	text := award.Terms{Text: "Each side bears its own costs; the claim is withdrawn."}
	got, err := text.Digest()
	require.NoError(t, err)
	sum := sha256.Sum256([]byte(`{"remedies":[],"text":"Each side bears its own costs; the claim is withdrawn."}`))
	require.Equal(t, hex.EncodeToString(sum[:]), got)
	empty, err := award.Terms{Remedies: []award.Remedy{}, Text: text.Text}.Digest()
	require.NoError(t, err)
	require.Equal(t, got, empty, "no remedies and an empty list are the same terms")

	a, err := consentTerms().Digest()
	require.NoError(t, err)
	other := consentTerms()
	other.Remedies[0].AmountMinor++
	b, err := other.Digest()
	require.NoError(t, err)
	require.NotEqual(t, a, b, "a cent more is other terms")
	_, err = award.Terms{Text: "bad \xff"}.Digest()
	require.ErrorIs(t, err, award.ErrDocument)
}

// A consent award is an award like any other: canonical bytes, signed and
// verified the same way. It names the reviewer who recorded it and no
// adjudicator, and carries the terms' digest, which its own remedies and
// text give again.
func TestAConsentAwardIsSignedAndVerifiedLikeAnyAward(t *testing.T) {
	d := sampleConsentAward()
	b := mustBytes(t, d)
	for _, absent := range []string{`"adjudicator"`, `"configuration"`, `"reviewerOpinion"`, `"tools"`, `"corrects"`} {
		require.NotContains(t, string(b), absent)
	}
	require.Contains(t, string(b), `"outcome":"settled_by_consent"`)
	require.Contains(t, string(b), `"tribunal":{"overridden":false,"reviewer":{"kind":"individual","memberId":"mb_reviewer_1"},"runs":[]}`)
	require.Contains(t, string(b), `"settlement":{"consents":[{"act":"proposed",`)

	priv := seededKey("consent")
	kid := award.KeyID(publicOf(priv), time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC))
	att, err := award.Sign(priv, kid, b)
	require.NoError(t, err)
	got, err := award.Verify(b, att, jwksOf(t, kid, priv))
	require.NoError(t, err)
	require.Empty(t, cmp.Diff(d, got.Award, cmpopts.EquateEmpty()))
	require.True(t, got.Award.Consent())
	require.False(t, sampleAward().Consent())
}

// What a consent award may and must carry is checked on writing and on
// reading: its remedies are exactly the agreed terms, and it names nobody
// who decided.
func TestBytesRefusesAConsentAwardThatBreaksItsRules(t *testing.T) {
	for name, edit := range map[string]func(d *award.Document){
		"no settlement":          func(d *award.Document) { d.Settlement = nil },
		"no consents":            func(d *award.Document) { d.Settlement.Consents = nil },
		"remedies not the terms": func(d *award.Document) { d.Remedies[0].AmountMinor = 9900 },
		"text not the terms":     func(d *award.Document) { d.Settlement.Text += " Or not." },
		"digest of other terms":  func(d *award.Document) { d.Settlement.TermsDigest = strings.Repeat("0", 64) },
		"an adjudicator": func(d *award.Document) {
			d.Tribunal.Adjudicator = award.Member{MemberID: "ai", Kind: "autonomous_agent"}
		},
		"a configuration": func(d *award.Document) { d.Tribunal.Configuration.Tools = []string{} },
		"a run":           func(d *award.Document) { d.Tribunal.Runs = []award.Run{{RunID: "run-1", Status: "used"}} },
		"an opinion":      func(d *award.Document) { d.Tribunal.ReviewerOpinion = "agree" },
		"an override":     func(d *award.Document) { d.Tribunal.Overridden = true },
		"a citation": func(d *award.Document) {
			d.Citations = []award.Citation{{ItemID: "answer", Digest: strings.Repeat("cd", 32)}}
		},
		"a corrected award":        func(d *award.Document) { d.Corrects = strings.Repeat("ab", 32) },
		"settlement on a decision": func(d *award.Document) { d.Outcome = award.OutcomeClaimUpheld },
	} {
		t.Run(name, func(t *testing.T) {
			d := sampleConsentAward()
			edit(&d)
			_, err := d.Bytes()
			require.ErrorIs(t, err, award.ErrDocument)
		})
	}
	decided := sampleAward()
	decided.Tribunal.Adjudicator = award.Member{}
	_, err := decided.Bytes()
	require.ErrorIs(t, err, award.ErrDocument, "a decided award names its adjudicator")
	decided = sampleAward()
	decided.Tribunal.ReviewerOpinion = ""
	_, err = decided.Bytes()
	require.ErrorIs(t, err, award.ErrDocument, "and the reviewer's opinion")
}

// A verifier holds a consent award to the same rules: members a consent
// award never has, even empty, make the bytes no award.
func TestVerifyRefusesAConsentAwardWithADecidersMembers(t *testing.T) {
	priv := seededKey("consent refusals")
	set := jwksOf(t, "k", priv)
	b := mustBytes(t, sampleConsentAward())
	for name, bad := range map[string][]byte{
		"empty adjudicator":   replaced(b, `"tribunal":{`, `"tribunal":{"adjudicator":{"kind":"","memberId":""},`),
		"empty configuration": replaced(b, `"tribunal":{`, `"tribunal":{"configuration":{"instructionsDigest":"","model":"","modelVersion":"","outputSchemaVersion":"","provider":"","temperatureMilli":0,"tools":[]},`),
		"empty opinion":       replaced(b, `"reviewer":{"kind":"individual","memberId":"mb_reviewer_1"}`, `"reviewer":{"kind":"individual","memberId":"mb_reviewer_1"},"reviewerOpinion":""`),
		"other amount":        replaced(b, `"amountMinor":2500`, `"amountMinor":2600`),
	} {
		t.Run(name, func(t *testing.T) {
			att, err := award.SignDetached(priv, "k", bad)
			require.NoError(t, err)
			_, err = award.Verify(bad, att, set)
			require.ErrorIs(t, err, award.ErrDocument, "%s", bad)
		})
	}
}

package awarddoc_test

import (
	"bytes"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/award"
	"github.com/pcourt/pcourt/services/cases/internal/awarddoc"
)

func renderPDF(t testing.TB, d award.Document) []byte {
	t.Helper()
	b, err := awarddoc.PDF(d, hashOf(t, d))
	require.NoError(t, err)
	requireWellFormed(t, b)
	return b
}

// requireWellFormed checks the frame of a PDF: the header, the end, and a
// cross-reference table where startxref says.
func requireWellFormed(t testing.TB, b []byte) {
	t.Helper()
	require.True(t, bytes.HasPrefix(b, []byte("%PDF-")), "starts with %%PDF-")
	require.True(t, bytes.HasSuffix(b, []byte("%%EOF\n")), "ends with %%EOF")
	m := regexp.MustCompile(`startxref\n(\d+)\n%%EOF\n$`).FindSubmatch(b)
	require.NotNil(t, m, "a startxref")
	at, err := strconv.Atoi(string(m[1]))
	require.NoError(t, err)
	require.True(t, bytes.HasPrefix(b[at:], []byte("xref\n")), "startxref points at the xref table")
}

var footer = regexp.MustCompile(`^(Page \d+ of \d+|Award awd_\w+)$`)

var showText = regexp.MustCompile(`\(((?:\\.|[^\\)])*)\) ?Tj`)

// shown returns the strings the PDF's pages show, in order, unescaped and
// still in Windows-1252. PDF renders its pages uncompressed, so each is a
// literal string before a Tj operator; no text extraction library needed.
func shown(b []byte) []string {
	var out []string
	for _, m := range showText.FindAllSubmatch(b, -1) {
		var s strings.Builder
		for i := 0; i < len(m[1]); i++ {
			if m[1][i] == '\\' && i+1 < len(m[1]) {
				i++
			}
			s.WriteByte(m[1][i])
		}
		out = append(out, s.String())
	}
	return out
}

// text is what the PDF shows as one string: lines that a long text
// wrapped into are joined by the space the wrap took.
func text(b []byte) string { return strings.Join(shown(b), " ") }

func TestPDFShowsTheAward(t *testing.T) {
	d := proceeding()
	b := renderPDF(t, d)
	got := text(b)

	for _, want := range []string{
		"Award",
		"Case case_01JH5Z2K3M4N \xb7 external case id order-7741", // · in Windows-1252
		"Award id awd_01JH5Z7Q8R9S",
		"Issued at 2026-11-10T12:30:45.123Z",
		"Environment production",
		"Claimant participant id prt_claimant_1 principal id acct_buyer_1",
		"Hash " + digest("rules"),
		"Claim partially upheld (claim_partially_upheld)",
		"1. The respondent shall pay the claimant USD 420.00 by 2026-12-10T00:00:00.000Z.",
		"2. The respondent shall perform by 2026-12-17T00:00:00.000Z: deliver the remaining 3 licence keys to the claimant.",
		"The claimant paid for 5 licence keys and received 2.",
		"1. Item answer Digest " + digest("answer") + " Pinpoint paragraph 2",
		"Member id mbr_adjudicator_1",
		"Provider openai-compatible",
		"Model gpt-oss-120b",
		"Instructions digest " + digest("instructions"),
		"Temperature 0.7",
		"Run run_1 Status failed",
		"Output digest none: the run ended without a proposal",
		"Output digest " + digest("proposal"),
		"Reviewer mbr_reviewer_1 (individual)",
		"Outcome overridden no",
		"Award hash " + hashOf(t, d),
		"docs/awards.md",
		"Award awd_01JH5Z7Q8R9S",
	} {
		require.Contains(t, got, want)
	}
	require.NotContains(t, got, "SANDBOX")

	// The hash is one line in Courier, whole, as a reader copies it.
	require.Contains(t, shown(b), hashOf(t, d))
	pages := strings.Count(string(b), "/Type /Page\n")
	require.Greater(t, pages, 1, "the fixture spans pages, so the footer's total is tested")
	for n := 1; n <= pages; n++ {
		require.Contains(t, shown(b), "Page "+strconv.Itoa(n)+" of "+strconv.Itoa(pages))
	}
}

func TestPDFShowsAnEvaluationAward(t *testing.T) {
	got := text(renderPDF(t, evaluation()))
	for _, want := range []string{
		"This award corrects the award whose hash is: Corrects " + digest("the earlier award"),
		"Question Does the summary state the refund policy correctly?",
		"1. It names the 30-day window. 2. It names the restocking fee.",
		"- correct - partially_correct - incorrect",
		"Partially correct (partially_correct)",
		"The award orders no remedy.",
		"The award cites no item of the record.",
		"Tools lookup_policy, count_words",
		"Outcome overridden yes: the reviewer replaced the proposed outcome",
	} {
		require.Contains(t, got, want)
	}
}

func TestASandboxAwardSaysItIsNotBinding(t *testing.T) {
	tests := []struct {
		environment string
		banner      bool
	}{
		{"sandbox", true},
		{"production", false},
	}
	for _, tt := range tests {
		t.Run(tt.environment, func(t *testing.T) {
			d := proceeding()
			d.Environment = tt.environment
			page := renderHTML(t, d)
			b := renderPDF(t, d)
			if !tt.banner {
				require.NotContains(t, page, "SANDBOX")
				require.NotContains(t, text(b), "SANDBOX")
				return
			}
			require.Contains(t, page, `<body>`+"\n"+`<p class="banner" id="sandbox" role="note">SANDBOX — not binding</p>`)
			// On every page of the PDF, in Windows-1252 (0x97 is the em dash).
			banners := 0
			for _, s := range shown(b) {
				if s == "SANDBOX \x97 not binding" {
					banners++
				}
			}
			require.Equal(t, strings.Count(string(b), "/Type /Page\n"), banners)
		})
	}
}

func TestPDFPrintsHostileText(t *testing.T) {
	b := renderPDF(t, hostile())
	lines := shown(b)
	got := strings.Join(lines, " ")

	require.Contains(t, got, `<script>alert("x")</script><img src=x onerror=alert(1)> "double" 'single' & done`)
	// Windows-1252 has é and €; the rest prints as "?", one per character.
	require.Contains(t, got, "?????? ???????? ??????? ?????? caf\xe9 \x805")
	// fpdf's own page alias in a reason is the party's text, not a number.
	require.Contains(t, got, "Page {nb} of the contract.")
	// The long word wraps: no line is wider than the page.
	for _, l := range lines {
		require.Less(t, len(l), 120, "a shown line of %d characters", len(l))
	}
	var body strings.Builder // the lines without the footers the word ran across
	for _, l := range lines {
		if !footer.MatchString(l) {
			body.WriteString(l)
		}
	}
	require.Contains(t, body.String(), longWord)
}

func TestTheArtifactsRefuseAnotherAwardsHash(t *testing.T) {
	d := proceeding()
	tests := map[string]string{
		"empty":           "",
		"another award's": hashOf(t, evaluation()),
		"uppercase":       strings.ToUpper(hashOf(t, d)),
	}
	for name, hash := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := awarddoc.HTML(d, hash)
			require.ErrorIs(t, err, awarddoc.ErrHashMismatch)
			_, err = awarddoc.PDF(d, hash)
			require.ErrorIs(t, err, awarddoc.ErrHashMismatch)
		})
	}
}

func TestPDFRefusesAnIssuedAtThatIsNoInstant(t *testing.T) {
	d := proceeding()
	d.IssuedAt = "10 November 2026"
	_, err := awarddoc.PDF(d, hashOf(t, d))
	require.ErrorContains(t, err, "issuedAt")
	require.NotErrorIs(t, err, awarddoc.ErrHashMismatch)
}

func TestPDFDatesAreTheIssuedAt(t *testing.T) {
	b := renderPDF(t, proceeding()) // issued 2026-11-10T12:30:45.123Z
	require.Contains(t, string(b), "/CreationDate (D:20261110123045)")
	require.Contains(t, string(b), "/ModDate (D:20261110123045)")
}

func TestTheArtifactsAreTheSameBytesEveryTime(t *testing.T) {
	docs := map[string]award.Document{"proceeding": proceeding(), "evaluation": evaluation(), "hostile": hostile(), "consent": consent()}
	render := func() map[string][2][]byte {
		out := map[string][2][]byte{}
		for name, d := range docs {
			h, err := awarddoc.HTML(d, hashOf(t, d))
			require.NoError(t, err)
			p, err := awarddoc.PDF(d, hashOf(t, d))
			require.NoError(t, err)
			out[name] = [2][]byte{h, p}
		}
		return out
	}
	first, second := render(), render()
	// Not a wait: PDF dates have a resolution of one second, so a date
	// read from the clock would differ once the second has turned.
	time.Sleep(1100 * time.Millisecond)
	third := render()
	for name := range docs {
		for i, kind := range []string{"html", "pdf"} {
			require.True(t, bytes.Equal(first[name][i], second[name][i]), "%s %s rendered twice in a row", name, kind)
			require.True(t, bytes.Equal(first[name][i], third[name][i]), "%s %s rendered a second later", name, kind)
		}
	}
}

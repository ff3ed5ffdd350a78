// Package awarddoc renders an award (award.Document) as its two
// human-readable artifacts: a standalone HTML page and a PDF. Both show
// the facts of the json artifact, the document whose canonical bytes are
// the award; neither is the award itself, so each ends with the award
// hash and how to verify the json artifact.
//
// Both are deterministic: the same document renders to the same bytes,
// whenever and wherever it is rendered, so an artifact can be rendered
// again and compared with one handed out earlier.
package awarddoc

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/pcourt/pcourt/libs/award"
)

// ErrHashMismatch means the awardHash given is not the SHA-256 of the
// document's canonical bytes: an artifact naming it would send its reader
// to verify another award.
var ErrHashMismatch = errors.New("the award hash is not the hash of the document")

// sandbox is the environment of an award that binds no one; both
// artifacts say so in a banner.
const sandbox = "sandbox"

// verifyHow is the sentence both artifacts print under the award hash.
const verifyHow = "To verify this award, take its json artifact (the award's RFC 8785 canonical JSON): " +
	"its SHA-256 must equal the award hash above, and its attestation must verify against the platform's " +
	"public keys, as docs/awards.md describes."

// page is the award as both artifacts show it: the document's facts, and
// the things said in words (the outcome, each remedy, the temperature,
// the reviewer's opinion).
type page struct {
	award.Document
	Hash         string
	Sandbox      bool
	OutcomeWords string
	// RemedySentences are the dispositive part, one sentence per remedy.
	RemedySentences []string
	// ReasonParagraphs are the reasons split at blank lines; a single line
	// break stays inside its paragraph. TermsParagraphs are a consent
	// award's settlement text, split the same way.
	ReasonParagraphs []string
	TermsParagraphs  []string
	Temperature      string
	Tools            string
	Opinion          string
	Overridden       string
	VerifyHow        string
	// AppealSentence says an appellate award's decision; empty otherwise.
	AppealSentence string
}

// newPage checks that awardHash is d's hash and builds what the artifacts
// show.
func newPage(d award.Document, awardHash string) (page, error) {
	b, err := award.Canonical(d)
	if err != nil {
		return page{}, fmt.Errorf("canonical bytes of award %s: %w", d.AwardID, err)
	}
	if got := award.Hash(b); got != awardHash {
		return page{}, fmt.Errorf("award %s hashes to %s, not %q: %w", d.AwardID, got, awardHash, ErrHashMismatch)
	}
	p := page{
		Document:         d,
		Hash:             awardHash,
		Sandbox:          d.Environment == sandbox,
		OutcomeWords:     words(d.Outcome),
		ReasonParagraphs: paragraphs(d.Reasons),
		Temperature:      decimalMilli(d.Tribunal.Configuration.TemperatureMilli),
		Tools:            "none",
		Opinion:          opinion(d.Tribunal.ReviewerOpinion),
		Overridden:       "no: the outcome is the one the adjudicator proposed",
		VerifyHow:        verifyHow,
	}
	for _, r := range d.Remedies {
		p.RemedySentences = append(p.RemedySentences, sentence(r))
	}
	if a := d.Appeal; a != nil {
		decided := map[string]string{award.AppealAffirmed: "affirmed", award.AppealModified: "modified", award.AppealSetAside: "set aside"}[a.Decision]
		p.AppealSentence = fmt.Sprintf("This award decides appeal %s of the %s: the appealed award (the one it corrects) is %s by the appellate reviewer %s.",
			a.AppealID, a.Appellant, decided, a.Reviewer.MemberID)
	}
	if st := d.Settlement; st != nil {
		p.TermsParagraphs = paragraphs(st.Text)
	}
	if tools := d.Tribunal.Configuration.Tools; len(tools) > 0 {
		p.Tools = strings.Join(tools, ", ")
	}
	if d.Tribunal.Overridden {
		p.Overridden = "yes: the reviewer replaced the proposed outcome"
	}
	return p, nil
}

// words says an outcome code in words: claim_partially_upheld is "Claim
// partially upheld". An evaluation's outcomes are its own codes, said the
// same way.
func words(code string) string {
	s := strings.NewReplacer("_", " ", "-", " ").Replace(code)
	r, n := utf8.DecodeRuneInString(s)
	if r == utf8.RuneError {
		return s
	}
	return string(unicode.ToUpper(r)) + s[n:]
}

// sentence says a remedy as the dispositive part orders it.
func sentence(r award.Remedy) string {
	switch r.Kind {
	case award.RemedyPayment:
		return fmt.Sprintf("The %s shall pay the %s %s by %s.", r.Payer, r.Payee, amount(r.AmountMinor, r.Currency), r.DueBy)
	case award.RemedyPerformance:
		return fmt.Sprintf("The %s shall perform by %s: %s", r.Obligor, r.DueBy, terminated(r.Description))
	default:
		return fmt.Sprintf("A remedy of kind %q is due by %s.", r.Kind, r.DueBy)
	}
}

// amount says minor units of a currency: USD in dollars with two
// decimals; any other currency by its code and its minor units as given,
// since the document does not say how many decimals it has.
func amount(minor int64, currency string) string {
	if currency != "USD" {
		return fmt.Sprintf("%s %d (minor units)", currency, minor)
	}
	sign, u := "", uint64(minor)
	if minor < 0 {
		sign, u = "-", -u // two's complement: right for math.MinInt64 too
	}
	return fmt.Sprintf("USD %s%d.%02d", sign, u/100, u%100)
}

// decimalMilli says thousandths as a decimal with no trailing zeros (700
// is 0.7), in integers: the configuration keeps the temperature an
// integer so that no float formatting touches it.
func decimalMilli(milli int) string {
	sign, u := "", milli
	if milli < 0 {
		sign, u = "-", -milli
	}
	frac := strings.TrimRight(fmt.Sprintf("%03d", u%1000), "0")
	if frac == "" {
		return fmt.Sprintf("%s%d", sign, u/1000)
	}
	return fmt.Sprintf("%s%d.%s", sign, u/1000, frac)
}

// opinion says the reviewer's opinion and what it means for the reasons.
func opinion(o string) string {
	switch o {
	case "agree":
		return "agree: the reasons are the adjudicator's proposal"
	case "revise":
		return "revise: the reasons are the reviewer's own"
	default:
		return o
	}
}

// terminated ends s with a full stop unless it ends a sentence already.
func terminated(s string) string {
	s = strings.TrimSpace(s)
	if s == "" || strings.ContainsAny(s[len(s)-1:], ".!?") {
		return s
	}
	return s + "."
}

var blankLines = regexp.MustCompile(`\n[ \t]*\n`)

// paragraphs splits text at blank lines, with its line breaks made \n.
func paragraphs(text string) []string {
	text = newlines(text)
	var out []string
	for _, p := range blankLines.Split(text, -1) {
		if p = strings.Trim(p, "\n"); strings.TrimSpace(p) != "" {
			out = append(out, p)
		}
	}
	return out
}

// newlines makes every line break (\r\n, \r) a \n.
func newlines(s string) string {
	return strings.NewReplacer("\r\n", "\n", "\r", "\n").Replace(s)
}

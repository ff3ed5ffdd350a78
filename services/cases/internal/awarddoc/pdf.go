package awarddoc

import (
	"bytes"
	"fmt"
	"strings"
	"time"

	"github.com/go-pdf/fpdf"

	"github.com/pcourt/pcourt/libs/award"
)

// Layout of the PDF, in millimetres and points.
const (
	pdfMargin   = 18.0
	labelWidth  = 45.0
	lineHeight  = 5.0
	itemIndent  = 8.0
	bodyFont    = "Helvetica"
	monoFont    = "Courier"
	bodySize    = 10.0
	monoSize    = 9.0
	footerSpace = 20.0
)

// pagesAlias stands for the number of pages until the document closes,
// when fpdf replaces it in every page's content. The document's text
// cannot hold it (pdfWriter.text makes control characters "?"), so a reason that
// reads "{nb}", fpdf's default alias, is printed as written.
const pagesAlias = "\x01nb\x01"

// PDF renders d as the award's pdf artifact: A4, the core fonts (text
// outside Windows-1252 prints as "?"), the same facts as HTML, page
// numbers in the footer and, for a sandbox award, the banner on every
// page. awardHash must be d's hash, else the error wraps
// ErrHashMismatch; d.IssuedAt must be an RFC 3339 instant.
//
// The bytes depend on d alone. fpdf would otherwise take the clock and
// map order; here, set on each document whatever fpdf's process-wide
// defaults say, the creation and modification dates are the award's
// issuedAt and catalogs are sorted (fonts are kept in a map), and the
// document is never encrypted (encryption draws a random owner
// password), sets no page boxes (written in map order) and one alias
// only (aliases are replaced in map order); fpdf writes no trailer /ID
// for a document it does not encrypt. Pages are not compressed: the content stays readable to a test or a
// grep, and the bytes do not change with the toolchain's zlib; an award
// of a few pages stays small.
func PDF(d award.Document, awardHash string) ([]byte, error) {
	p, err := newPage(d, awardHash)
	if err != nil {
		return nil, err
	}
	issued, err := time.Parse(time.RFC3339Nano, d.IssuedAt)
	if err != nil {
		return nil, fmt.Errorf("issuedAt of award %s: %w", d.AwardID, err)
	}

	f := fpdf.New("P", "mm", "A4", "")
	f.SetCompression(false)
	f.SetCatalogSort(true)
	f.SetCreationDate(issued.UTC())
	f.SetModificationDate(issued.UTC())
	f.SetTitle("Award · case "+d.CaseID, true)
	f.SetCreator("pcourt cases", true)
	f.SetLang("en")
	f.SetMargins(pdfMargin, pdfMargin, pdfMargin)
	f.SetAutoPageBreak(true, footerSpace)
	f.AliasNbPages(pagesAlias)
	w := &pdfWriter{f: f, tr: f.UnicodeTranslatorFromDescriptor("")}

	if p.Sandbox {
		f.SetHeaderFunc(func() {
			f.SetFont(bodyFont, "B", 12)
			f.SetFillColor(176, 0, 32)
			f.SetTextColor(255, 255, 255)
			f.CellFormat(0, 9, w.text("SANDBOX — not binding"), "", 1, "C", true, 0, "")
			f.SetTextColor(0, 0, 0)
			f.Ln(4)
		})
	}
	f.SetFooterFunc(func() {
		f.SetY(-12)
		f.SetFont(bodyFont, "", 8)
		f.CellFormat(60, 5, fmt.Sprintf("Page %d of %s", f.PageNo(), pagesAlias), "", 0, "L", false, 0, "")
		f.CellFormat(0, 5, w.text("Award "+d.AwardID), "", 0, "R", false, 0, "")
	})
	f.AddPage()
	w.award(p)

	var b bytes.Buffer
	if err := f.Output(&b); err != nil {
		return nil, fmt.Errorf("rendering the pdf of award %s: %w", d.AwardID, err)
	}
	return b.Bytes(), nil
}

// pdfWriter lays the award out on an fpdf document.
type pdfWriter struct {
	f  *fpdf.Fpdf
	tr func(string) string // UTF-8 to Windows-1252, "." for what it lacks
}

func (w *pdfWriter) award(p page) {
	f := w.f
	f.SetFont(bodyFont, "B", 22)
	f.CellFormat(0, 11, "Award", "", 1, "L", false, 0, "")
	f.SetFont(bodyFont, "", 11)
	f.MultiCell(0, 6, w.text("Case "+p.CaseID+" · external case id "+p.ExternalCaseID), "", "L", false)
	if p.Corrects != "" {
		f.Ln(2)
		w.paragraph("This award corrects the award whose hash is:")
		w.field("Corrects", p.Corrects, true)
	}
	if p.AppealSentence != "" {
		w.paragraph(p.AppealSentence)
	}

	w.heading("The award")
	w.field("Award id", p.AwardID, true)
	w.field("Issued at", p.IssuedAt, false)
	w.field("Environment", p.Environment, false)
	w.field("Case mode", p.CaseMode, false)
	w.field("Schema", p.SchemaVersion, true)

	w.heading("Parties")
	for _, party := range p.Parties {
		w.field(words(party.Side), "participant id "+party.ParticipantID, false)
		w.field("", "principal id "+party.PrincipalID, false)
	}

	w.heading("Rules")
	w.field("Version", p.Rules.Version, false)
	w.field("Hash", p.Rules.Hash, true)

	if e := p.Evaluation; e != nil {
		w.heading("Evaluation")
		w.field("External evaluation id", e.ExternalEvaluationID, true)
		w.field("Evaluation digest", e.EvaluationDigest, true)
		w.field("Question", e.Question, false)
		w.subheading("Criteria")
		for i, c := range e.Criteria {
			w.item(fmt.Sprintf("%d.", i+1), c)
		}
		w.subheading("Allowed outcomes")
		for _, o := range e.AllowedOutcomes {
			w.item("-", o)
		}
	}

	w.heading("Outcome")
	f.SetFont(bodyFont, "B", 12)
	f.MultiCell(0, 6, w.text(p.OutcomeWords+" ("+p.Outcome+")"), "", "L", false)

	w.heading("Dispositive part")
	if len(p.RemedySentences) == 0 {
		w.paragraph("The award orders no remedy.")
	}
	for i, s := range p.RemedySentences {
		w.item(fmt.Sprintf("%d.", i+1), s)
	}

	w.heading("Reasons")
	for _, para := range p.ReasonParagraphs {
		w.paragraph(para)
	}

	if st := p.Settlement; st != nil {
		w.heading("Settlement")
		w.paragraph("The sides settled their dispute on these terms, and the tribunal recorded them as this award on agreed terms. The dispositive part above is the terms' remedies.")
		for _, para := range p.TermsParagraphs {
			w.paragraph(para)
		}
		w.field("Terms digest", st.TermsDigest, true)
		w.subheading("Consents")
		for _, c := range st.Consents {
			w.field(words(c.Side), c.Act+" at "+c.At, false)
			w.field("", "participant id "+c.ParticipantID, false)
		}
	}

	w.heading("Citations")
	if len(p.Citations) == 0 {
		w.paragraph("The award cites no item of the record.")
	}
	for i, c := range p.Citations {
		w.field(fmt.Sprintf("%d. Item", i+1), c.ItemID, true)
		w.field("Digest", c.Digest, true)
		if c.Pinpoint != "" {
			w.field("Pinpoint", c.Pinpoint, false)
		}
		f.Ln(1.5)
	}

	t := p.Tribunal
	w.heading("Tribunal")
	if p.Consent() {
		w.paragraph("The tribunal recorded the sides' settlement; no adjudicator decided the dispute.")
		w.field("Recorded by", t.Reviewer.MemberID+" ("+t.Reviewer.Kind+")", false)
		w.verification(p)
		return
	}
	w.subheading("Adjudicator")
	w.field("Member id", t.Adjudicator.MemberID, true)
	w.field("Kind", t.Adjudicator.Kind, false)
	w.subheading("Pinned configuration")
	w.field("Provider", t.Configuration.Provider, false)
	w.field("Model", t.Configuration.Model, false)
	w.field("Model version", t.Configuration.ModelVersion, false)
	w.field("Instructions digest", t.Configuration.InstructionsDigest, true)
	w.field("Output schema", t.Configuration.OutputSchemaVersion, true)
	w.field("Temperature", p.Temperature, false)
	w.field("Tools", p.Tools, false)
	w.subheading("Runs")
	for _, r := range t.Runs {
		w.field("Run", r.RunID, true)
		w.field("Status", r.Status, false)
		w.field("Configuration digest", r.ConfigurationDigest, true)
		w.field("Input digest", r.InputDigest, true)
		if r.OutputDigest != "" {
			w.field("Output digest", r.OutputDigest, true)
		} else {
			w.field("Output digest", "none: the run ended without a proposal", false)
		}
		f.Ln(1.5)
	}
	w.subheading("Review")
	w.field("Reviewer", t.Reviewer.MemberID+" ("+t.Reviewer.Kind+")", false)
	w.field("Opinion", p.Opinion, false)
	w.field("Outcome overridden", p.Overridden, false)
	w.verification(p)
}

func (w *pdfWriter) verification(p page) {
	w.heading("Verification")
	w.field("Award hash", p.Hash, true)
	w.f.Ln(1.5)
	w.paragraph(p.VerifyHow)
}

func (w *pdfWriter) heading(s string) {
	w.f.Ln(4)
	w.f.SetFont(bodyFont, "B", 13)
	w.f.MultiCell(0, 7, w.text(s), "B", "L", false)
	w.f.Ln(2)
}

func (w *pdfWriter) subheading(s string) {
	w.f.Ln(1.5)
	w.f.SetFont(bodyFont, "B", 11)
	w.f.MultiCell(0, 6, w.text(s), "", "L", false)
}

// field writes a label and its value beside it, the value wrapping in its
// column; mono sets ids and digests in Courier.
func (w *pdfWriter) field(label, value string, mono bool) {
	w.f.SetFont(bodyFont, "B", bodySize)
	w.f.CellFormat(labelWidth, lineHeight, w.text(label), "", 0, "L", false, 0, "")
	if mono {
		w.f.SetFont(monoFont, "", monoSize)
	} else {
		w.f.SetFont(bodyFont, "", bodySize)
	}
	w.f.MultiCell(0, lineHeight, w.text(value), "", "L", false)
}

// item writes a numbered or bulleted entry with its text indented.
func (w *pdfWriter) item(marker, s string) {
	w.f.SetFont(bodyFont, "", bodySize)
	w.f.CellFormat(itemIndent, lineHeight, marker, "", 0, "L", false, 0, "")
	w.f.MultiCell(0, lineHeight, w.text(s), "", "L", false)
	w.f.Ln(1)
}

func (w *pdfWriter) paragraph(s string) {
	w.f.SetFont(bodyFont, "", bodySize)
	w.f.MultiCell(0, lineHeight, w.text(s), "", "L", false)
	w.f.Ln(2)
}

// text encodes s for the core fonts: Windows-1252, "?" for a character it
// lacks or a control character, a line break kept as \n and a tab made a
// space. It never fails, so no text of a document stops its PDF.
func (w *pdfWriter) text(s string) string {
	var b strings.Builder
	for _, r := range newlines(s) {
		switch {
		case r == '\n':
			b.WriteByte('\n')
		case r == '\t':
			b.WriteByte(' ')
		case r < 0x20 || r == 0x7f:
			b.WriteByte('?')
		case r < 0x80:
			b.WriteRune(r)
		default:
			// The translator writes "." for a rune it cannot encode; a
			// real full stop is ASCII and never reaches it.
			if t := w.tr(string(r)); t != "." {
				b.WriteString(t)
			} else {
				b.WriteByte('?')
			}
		}
	}
	return b.String()
}

package award

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
)

// Bytes returns the award's json artifact: the RFC 8785 canonical bytes of
// d, with every list written as [] when it is empty (parties, remedies,
// citations, the tribunal's runs, the configuration's tools, and the
// evaluation's criteria and allowed outcomes), so an award never carries
// null where a list belongs. Its SHA-256 (Hash) is the awardHash.
//
// Bytes refuses, with an error wrapping ErrDocument, a document whose
// schemaVersion is not SchemaAward, one that breaks the consent award's
// rules (checkConsent), and one that does not survive the trip through
// JSON unchanged (a string that is not valid UTF-8 would be written as
// U+FFFD: the bytes would not say what d says).
func (d Document) Bytes() ([]byte, error) {
	if d.SchemaVersion != SchemaAward {
		return nil, fmt.Errorf("%w: schemaVersion %q, want %s", ErrDocument, d.SchemaVersion, SchemaAward)
	}
	if err := d.checkConsent(); err != nil {
		return nil, err
	}
	d = d.withLists()
	b, err := Canonical(d)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrDocument, err)
	}
	var back Document
	if err := json.Unmarshal(b, &back); err != nil || !reflect.DeepEqual(back, d) {
		return nil, fmt.Errorf("%w: the document changes through JSON (a string that is not valid UTF-8?)", ErrDocument)
	}
	return b, nil
}

// checkConsent holds what the members' types cannot say: a consent award
// (outcome settled_by_consent), and only one, carries its settlement,
// whose termsDigest is the digest of the award's remedies with the
// settlement's text, with at least one consent; a consent award names no
// adjudicator, configuration, run, reviewer opinion, override, citation or
// corrected award (the tribunal recorded the sides' terms: nobody
// decided), and every other award names its adjudicator and the
// reviewer's opinion. So a verifier that reads a consent award knows its
// dispositive part is exactly what the sides agreed.
func (d Document) checkConsent() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", ErrDocument, fmt.Sprintf(format, args...))
	}
	t := d.Tribunal
	if !d.Consent() {
		switch {
		case d.Settlement != nil:
			return bad("only a consent award (outcome %s) carries a settlement", OutcomeSettledByConsent)
		case t.Adjudicator.MemberID == "" || t.ReviewerOpinion == "":
			return bad("an award other than a consent award names its adjudicator and the reviewer's opinion")
		}
		return nil
	}
	switch {
	case d.Settlement == nil || len(d.Settlement.Consents) == 0:
		return bad("a consent award carries its settlement with the sides' consents")
	case t.Adjudicator != (Member{}) || !zeroConfiguration(t.Configuration) || len(t.Runs) > 0 || t.ReviewerOpinion != "" || t.Overridden:
		return bad("a consent award names no adjudicator, configuration, run, opinion or override: the reviewer recorded the sides' terms")
	case len(d.Citations) > 0 || d.Corrects != "":
		return bad("a consent award cites no record and corrects no award")
	}
	digest, err := Terms{Remedies: d.Remedies, Text: d.Settlement.Text}.Digest()
	if err != nil {
		return err
	}
	if digest != d.Settlement.TermsDigest {
		return bad("settlement.termsDigest %q is not the digest of the award's remedies and the settlement's text (%s)", d.Settlement.TermsDigest, digest)
	}
	return nil
}

// zeroConfiguration reports whether c is absent: the zero value, tools
// nil (an empty list is a configuration's, and would be written).
func zeroConfiguration(c Configuration) bool {
	return c.Provider == "" && c.Model == "" && c.ModelVersion == "" && c.InstructionsDigest == "" &&
		c.OutputSchemaVersion == "" && c.TemperatureMilli == 0 && c.Tools == nil
}

// withLists returns d with every nil list replaced by an empty one. It
// copies what it changes: d's caller keeps its own values. A consent
// award's configuration is absent, tools and all.
func (d Document) withLists() Document {
	d.Parties = orEmpty(d.Parties)
	d.Remedies = orEmpty(d.Remedies)
	d.Citations = orEmpty(d.Citations)
	d.Tribunal.Runs = orEmpty(d.Tribunal.Runs)
	if !d.Consent() {
		d.Tribunal.Configuration.Tools = orEmpty(d.Tribunal.Configuration.Tools)
	}
	if d.Settlement != nil {
		s := *d.Settlement
		s.Consents = orEmpty(s.Consents)
		d.Settlement = &s
	}
	if d.Evaluation != nil {
		e := *d.Evaluation
		e.Criteria = orEmpty(e.Criteria)
		e.AllowedOutcomes = orEmpty(e.AllowedOutcomes)
		d.Evaluation = &e
	}
	return d
}

func orEmpty[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// decodeDocument reads an award's bytes strictly: they must be canonical
// (ErrNotCanonical), and decode to a Document of SchemaAward whose own
// Bytes are exactly b (ErrDocument): no member missing, unknown, spelt in
// another case, or null where a list belongs, so every reader of b sees
// the document Go sees.
func decodeDocument(b []byte) (Document, error) {
	canon, err := Canonical(json.RawMessage(b))
	if err != nil {
		return Document{}, fmt.Errorf("%w: %v", ErrNotCanonical, err)
	}
	if !bytes.Equal(canon, b) {
		return Document{}, fmt.Errorf("%w: the bytes differ from their RFC 8785 form", ErrNotCanonical)
	}
	var d Document
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&d); err != nil {
		return Document{}, fmt.Errorf("%w: %v", ErrDocument, err)
	}
	if d.SchemaVersion != SchemaAward {
		return Document{}, fmt.Errorf("%w: schemaVersion %q, want %s", ErrDocument, d.SchemaVersion, SchemaAward)
	}
	again, err := d.Bytes()
	if err != nil {
		return Document{}, err
	}
	if !bytes.Equal(again, b) {
		return Document{}, fmt.Errorf("%w: the bytes are not exactly an award document's (a member missing, unknown, in another case, or null where a list belongs)", ErrDocument)
	}
	return d, nil
}

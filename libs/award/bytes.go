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
// schemaVersion is not SchemaAward, and one that does not survive the trip
// through JSON unchanged (a string that is not valid UTF-8 would be
// written as U+FFFD: the bytes would not say what d says).
func (d Document) Bytes() ([]byte, error) {
	if d.SchemaVersion != SchemaAward {
		return nil, fmt.Errorf("%w: schemaVersion %q, want %s", ErrDocument, d.SchemaVersion, SchemaAward)
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

// withLists returns d with every nil list replaced by an empty one. It
// copies what it changes: d's caller keeps its own values.
func (d Document) withLists() Document {
	d.Parties = orEmpty(d.Parties)
	d.Remedies = orEmpty(d.Remedies)
	d.Citations = orEmpty(d.Citations)
	d.Tribunal.Runs = orEmpty(d.Tribunal.Runs)
	d.Tribunal.Configuration.Tools = orEmpty(d.Tribunal.Configuration.Tools)
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

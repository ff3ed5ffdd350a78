package signature

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"unicode/utf8"
)

// bodyIdentity is what Verify reads from the body: the two members that the
// headers must repeat. present tells an absent member from an empty one.
type bodyIdentity struct {
	schemaVersion, eventID       string
	hasSchemaVersion, hasEventID bool
}

// readBodyIdentity decodes body strictly and minimally: it must be valid
// UTF-8 holding exactly one JSON object, no object at any depth may repeat a
// member name (a repeated eventId would let two parsers see two identities),
// and schemaVersion and eventId, when present, must be strings. Other members
// are not interpreted here.
func readBodyIdentity(body []byte) (bodyIdentity, error) {
	var id bodyIdentity
	if !utf8.Valid(body) {
		return id, errors.New("body is not valid UTF-8")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return id, fmt.Errorf("body is not JSON: %w", err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return id, errors.New("body is not a JSON object")
	}
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return id, fmt.Errorf("body is not JSON: %w", err)
		}
		name := tok.(string) // object keys are always strings
		if seen[name] {
			return id, fmt.Errorf("body repeats member %q", name)
		}
		seen[name] = true
		switch name {
		case "schemaVersion", "eventId":
			tok, err := dec.Token()
			if err != nil {
				return id, fmt.Errorf("body is not JSON: %w", err)
			}
			s, ok := tok.(string)
			if !ok {
				return id, fmt.Errorf("body member %q is not a string", name)
			}
			if name == "schemaVersion" {
				id.schemaVersion, id.hasSchemaVersion = s, true
			} else {
				id.eventID, id.hasEventID = s, true
			}
		default:
			if err := skipValue(dec); err != nil {
				return id, err
			}
		}
	}
	if _, err := dec.Token(); err != nil { // the closing brace
		return id, fmt.Errorf("body is not JSON: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return id, errors.New("body has data after the JSON object")
	}
	return id, nil
}

// skipValue consumes one JSON value, refusing repeated member names in any
// object inside it.
func skipValue(dec *json.Decoder) error {
	tok, err := dec.Token()
	if err != nil {
		return fmt.Errorf("body is not JSON: %w", err)
	}
	d, ok := tok.(json.Delim)
	if !ok {
		return nil
	}
	switch d {
	case '[':
		for dec.More() {
			if err := skipValue(dec); err != nil {
				return err
			}
		}
	case '{':
		seen := map[string]bool{}
		for dec.More() {
			tok, err := dec.Token()
			if err != nil {
				return fmt.Errorf("body is not JSON: %w", err)
			}
			name := tok.(string)
			if seen[name] {
				return fmt.Errorf("body repeats member %q", name)
			}
			seen[name] = true
			if err := skipValue(dec); err != nil {
				return err
			}
		}
	}
	if _, err := dec.Token(); err != nil { // the closing delimiter
		return fmt.Errorf("body is not JSON: %w", err)
	}
	return nil
}

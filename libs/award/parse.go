package award

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// ParseConfiguration reads a configuration strictly (unknown members and
// trailing data refused) and checks it with Validate.
func ParseConfiguration(b []byte) (Configuration, error) {
	var c Configuration
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return Configuration{}, fmt.Errorf("adjudicator configuration: %w", err)
	}
	if dec.More() {
		return Configuration{}, fmt.Errorf("adjudicator configuration: trailing data")
	}
	if err := c.Validate(); err != nil {
		return Configuration{}, err
	}
	return c, nil
}

// Parse reads an award document from its json artifact's bytes, which
// must be exactly the document's canonical bytes (as Verify requires).
func Parse(b []byte) (Document, error) { return decodeDocument(b) }

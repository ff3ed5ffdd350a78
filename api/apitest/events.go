package apitest

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/pcourt/pcourt/api"
)

// eventSchemaBase is the $id prefix of the schemas in api/events; they
// refer to each other by it.
const eventSchemaBase = "https://pcourt.dev/schemas/events/"

// Event fails the test unless payload is valid against the published event
// schema file (for example "filings-case-opened-v2.schema.json"): what a
// service produces for Kafka is checked against the contract its consumers
// read, as HTTP answers are checked against the OpenAPI document.
func Event(tb testing.TB, file string, payload []byte) {
	tb.Helper()
	raw, err := api.EventSchema(file)
	if err != nil {
		tb.Fatalf("%v", err)
	}
	c := jsonschema.NewCompiler()
	// A schema's references to another of api/events (the envelope's to
	// the case event's definitions) resolve to the embedded file.
	c.UseLoader(eventSchemaLoader{})
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		tb.Fatalf("event schema %s: %v", file, err)
	}
	if err := c.AddResource(eventSchemaBase+file, doc); err != nil {
		tb.Fatalf("event schema %s: %v", file, err)
	}
	schema, err := c.Compile(eventSchemaBase + file)
	if err != nil {
		tb.Fatalf("event schema %s: %v", file, err)
	}
	value, err := jsonschema.UnmarshalJSON(bytes.NewReader(payload))
	if err != nil {
		tb.Fatalf("event is not JSON: %v\n%s", err, payload)
	}
	if err := schema.Validate(value); err != nil {
		tb.Fatalf("event does not match %s: %v\n%s", file, err, payload)
	}
}

// eventSchemaLoader reads the schemas of api/events by their $id.
type eventSchemaLoader struct{}

func (eventSchemaLoader) Load(url string) (any, error) {
	name, ok := strings.CutPrefix(url, eventSchemaBase)
	if !ok {
		return nil, fmt.Errorf("%s is not a schema of api/events", url)
	}
	raw, err := api.EventSchema(name)
	if err != nil {
		return nil, err
	}
	return jsonschema.UnmarshalJSON(bytes.NewReader(raw))
}

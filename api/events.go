package api

import (
	"embed"
	"encoding/json"
	"fmt"
)

// The Kafka topics between services and the schema names their records
// carry in the pc-schema header. Each schema name is the title of
// api/events/<name>.schema.json, whose description names its topic; the
// producer and every consumer take the names from here, beside the schemas,
// rather than each spelling them.
const (
	// CaseOpenedTopic carries filings' case-opened facts, keyed by case id.
	CaseOpenedTopic = "pc.filings.case-opened.v2"
	// CaseOpenedSchema is the value of a CaseOpenedTopic record.
	CaseOpenedSchema = "filings-case-opened-v2"
	// CaseEventsTopic carries the cases service's case events, keyed by
	// case id.
	CaseEventsTopic = "pc.cases.events.v2"
	// CaseEventEnvelopeSchema is the value of a CaseEventsTopic record: the
	// partners to notify beside a CaseEventSchema body.
	CaseEventEnvelopeSchema = "cases-event-envelope-v2"
	// CaseEventSchema is the case event body: on the docket, inside the
	// envelope, and (with its deliveryId) in a webhook delivery.
	CaseEventSchema = "case-event-v2"
)

// eventSchemas are the JSON Schemas of the events the services publish.
//
//go:embed events/*.schema.json
var eventSchemas embed.FS

// EventSchema returns the JSON Schema named name (e.g.
// "case-event-v2.schema.json") from api/events. Schemas refer to each
// other by these file names.
func EventSchema(name string) ([]byte, error) {
	b, err := eventSchemas.ReadFile("events/" + name)
	if err != nil {
		return nil, fmt.Errorf("no event schema %q: %w", name, err)
	}
	return b, nil
}

// CaseEventTypes returns the case event types the case-event-v2 schema
// enumerates, in its order: the catalogue partners subscribe to.
func CaseEventTypes() ([]string, error) {
	raw, err := EventSchema("case-event-v2.schema.json")
	if err != nil {
		return nil, err
	}
	var doc struct {
		Defs struct {
			Type struct {
				Enum []string `json:"enum"`
			} `json:"type"`
		} `json:"$defs"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, fmt.Errorf("reading case-event-v2: %w", err)
	}
	if len(doc.Defs.Type.Enum) == 0 {
		return nil, fmt.Errorf("case-event-v2 enumerates no event type")
	}
	return doc.Defs.Type.Enum, nil
}

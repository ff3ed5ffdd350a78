package api

import (
	"embed"
	"fmt"
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

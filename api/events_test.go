package api_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/api"
)

// Each schema name constant is the title of its file in api/events, and
// the schema of a topic's records names that topic.
func TestSchemaNamesAreTheSchemasTitles(t *testing.T) {
	for _, tc := range []struct {
		schema, topic string
	}{
		{api.CaseOpenedSchema, api.CaseOpenedTopic},
		{api.CaseEventEnvelopeSchema, api.CaseEventsTopic},
		{api.CaseEventSchema, ""},
	} {
		t.Run(tc.schema, func(t *testing.T) {
			raw, err := api.EventSchema(tc.schema + ".schema.json")
			require.NoError(t, err)
			var doc struct{ Title, Description string }
			require.NoError(t, json.Unmarshal(raw, &doc))
			require.Equal(t, tc.schema, doc.Title)
			if tc.topic != "" {
				require.Contains(t, doc.Description, "topic "+tc.topic+" ")
				require.Contains(t, doc.Description, "pc-schema = "+tc.schema)
			}
		})
	}
}

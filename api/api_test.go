package api_test

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"
	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/api"
)

func TestDocumentIsValidOpenAPI31(t *testing.T) {
	doc, err := libopenapi.NewDocument(api.YAML)
	require.NoError(t, err)
	require.Equal(t, "3.1.0", doc.GetVersion())
	v, errs := validator.NewValidator(doc)
	require.Empty(t, errs)
	ok, verrs := v.ValidateDocument()
	for _, e := range verrs {
		t.Errorf("%s: %s", e.Message, e.Reason)
	}
	require.True(t, ok)
}

func TestJSONIsTheSameDocument(t *testing.T) {
	js, err := api.JSON()
	require.NoError(t, err)
	var doc map[string]any
	require.NoError(t, json.Unmarshal(js, &doc))
	require.Equal(t, "3.1.0", doc["openapi"])
	require.Contains(t, doc["paths"], "/api/v2/integration")
}

func TestCaseEventTypesAreTheSchemasEnum(t *testing.T) {
	types, err := api.CaseEventTypes()
	require.NoError(t, err)
	require.Len(t, types, 59, "the procedure's 22, the decision's 13, the evidence's 7, the after-award's 14 and the settlement's 3")
	require.Equal(t, "opened", types[0])
	require.Contains(t, types, "deadline_missed")
	require.Contains(t, types, "award_issued")
	page, err := os.ReadFile("../docs/events.md")
	require.NoError(t, err)
	for _, typ := range types {
		require.Contains(t, string(page), "`"+typ+"`", "docs/events.md lists every case event type")
	}
}

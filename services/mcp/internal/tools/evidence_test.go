package tools

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/api"
)

// upload_exhibit calls the API's upload operation, which takes account
// tokens with evidence:file and a multipart/form-data body: the tool
// offers nothing the API would refuse an account.
func TestUploadExhibitCallsTheDocumentedUploadOperation(t *testing.T) {
	doc, err := api.JSON()
	require.NoError(t, err)
	var d struct {
		Paths map[string]map[string]struct {
			OperationID string                `json:"operationId"`
			Security    []map[string][]string `json:"security"`
			RequestBody struct {
				Content map[string]json.RawMessage `json:"content"`
			} `json:"requestBody"`
		} `json:"paths"`
	}
	require.NoError(t, json.Unmarshal(doc, &d))
	op, ok := d.Paths[fmt.Sprintf(uploadPath, "{id}")]["post"]
	require.True(t, ok, "no POST %s in the document", uploadPath)
	require.Equal(t, uploadOperation, op.OperationID)
	require.Contains(t, op.Security, map[string][]string{"accountOAuth": {"evidence:file"}})
	require.Contains(t, op.RequestBody.Content, "multipart/form-data")
	require.Contains(t, uploadExhibitTool.Description, "scope evidence:file")
}

// The largest file the tool takes fits one MCP message (httpapi's
// maxBody, 1 MiB) with room for the other arguments and the JSON-RPC
// framing, and the schema's bound on content is exactly its base64.
func TestTheExhibitBoundFitsOneMessage(t *testing.T) {
	largest := base64.StdEncoding.EncodeToString(make([]byte, maxExhibitBytes))
	require.Len(t, largest, maxExhibitBase64)
	require.Less(t, maxExhibitBase64+64<<10, 1<<20)
	content := uploadExhibitTool.InputSchema.(map[string]any)["properties"].(map[string]any)["content"].(map[string]any)
	require.Equal(t, maxExhibitBase64, content["maxLength"])
	require.True(t, strings.Contains(uploadExhibitTool.Description, fmt.Sprint(maxExhibitBytes)), "the description states the bound")
}

package tools

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"mime"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"regexp"
	"strconv"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pcourt/pcourt/libs/problem"
	"github.com/pcourt/pcourt/services/mcp/internal/apiclient"
)

// An exhibit's upload over MCP (docs/mcp.md, "Evidence"). The API's upload
// is a streamed multipart/form-data body of up to 100 MiB; an MCP tool
// call is one JSON-RPC message of at most 1 MiB (httpapi's maxBody), so
// the tool takes the file as base64 in its arguments, bounded well below
// the message, and sends it whole as the API's form. A larger exhibit is
// filed with the API's own route (POST /api/cases/{id}/evidence) by the
// account's client, with a token for the API carrying evidence:file.

// uploadOperation is the API operation upload_exhibit calls, and its
// route: the OpenAPI document describes it with a multipart body, which
// the catalogue's JSON mirror does not take (a test holds the path to the
// operation).
const (
	uploadOperation = "uploadExhibit"
	uploadPath      = "/api/cases/%s/evidence"
)

// maxExhibitBytes bounds the file upload_exhibit takes: 512 KiB, whose
// base64 (maxExhibitBase64 characters) leaves the rest of the 1 MiB
// message to the other arguments and the JSON-RPC framing.
const (
	maxExhibitBytes  = 512 << 10
	maxExhibitBase64 = (maxExhibitBytes + 2) / 3 * 4
)

// mediaTypeRE is the form of the media type the part is declared with: a
// bare type/subtype, so nothing but a media type reaches the part's
// header. Which types the API takes is the API's to say.
var mediaTypeRE = regexp.MustCompile(`^[a-z0-9][a-z0-9!#$&^_.+-]{0,63}/[a-z0-9][a-z0-9!#$&^_.+-]{0,63}$`)

var sha256RE = regexp.MustCompile(`^[0-9a-f]{64}$`)

var uploadExhibitTool = &mcp.Tool{
	Name:  "upload_exhibit",
	Title: "Upload an exhibit",
	Description: "Uploads one file as an exhibit of the account's side of a case (POST /api/cases/{id}/evidence as multipart/form-data; scope evidence:file). " +
		"Give the file's bytes as standard base64 in content, at most " + strconv.Itoa(maxExhibitBytes) + " bytes decoded (an MCP message is at most 1 MiB); " +
		"a larger exhibit, up to the case's rules' limit, is filed with the API's upload route directly. " +
		"sha256 is the hex SHA-256 of the bytes: the tool checks the decoded content against it before sending, and the exhibit the API records against it after. " +
		"The API checks the file (name, type, structure: docs/evidence.md) and keeps it undisclosed, its side's own, until disclose_exhibit. " +
		"Not journaled: a retry of the same bytes under the same name answers the exhibit recorded the first time.",
	InputSchema: map[string]any{
		"type": "object",
		"properties": map[string]any{
			"caseId": map[string]any{"type": "string", "pattern": idPattern, "description": "the case"},
			"fileName": map[string]any{"type": "string", "minLength": 1,
				"description": "the file's name, a label shown with the exhibit: at most 200 bytes, no path"},
			"mediaType": map[string]any{"type": "string", "pattern": mediaTypeRE.String(),
				"description": "the file's media type: application/pdf, image/png, image/jpeg, text/plain, text/csv or application/json"},
			"content": map[string]any{"type": "string", "contentEncoding": "base64", "minLength": 1, "maxLength": maxExhibitBase64,
				"description": "the file's bytes, standard base64 with padding, at most " + strconv.Itoa(maxExhibitBytes) + " bytes decoded"},
			"sha256": map[string]any{"type": "string", "pattern": sha256RE.String(), "description": "the SHA-256 of the file's bytes, lowercase hex"},
			"description": map[string]any{"type": "string",
				"description": "what the exhibit shows, within the case's rules' text limit; without it the API suggests one from the file"},
			"participantId": map[string]any{"type": "string", "pattern": idPattern,
				"description": "the account's participant, needed only where it takes part for several"},
		},
		"required":             []string{"caseId", "content", "fileName", "mediaType", "sha256"},
		"additionalProperties": false,
	},
	Annotations: &mcp.ToolAnnotations{Title: "Upload an exhibit", DestructiveHint: new(false), IdempotentHint: true, OpenWorldHint: new(false)},
}

// exhibitUpload is upload_exhibit's arguments.
type exhibitUpload struct {
	CaseID        string `json:"caseId"`
	FileName      string `json:"fileName"`
	MediaType     string `json:"mediaType"`
	Content       string `json:"content"`
	SHA256        string `json:"sha256"`
	Description   string `json:"description"`
	ParticipantID string `json:"participantId"`
}

// readExhibitUpload decodes and checks the arguments, and returns the
// file's bytes: the first thing wrong with them is invalid_tool_arguments,
// before any call. The file's name and content are the API's to judge.
func readExhibitUpload(raw json.RawMessage) (exhibitUpload, []byte, *problem.Error) {
	var a exhibitUpload
	if err := strictArguments(raw, &a); err != nil {
		return a, nil, problem.Newf(InvalidArguments, "upload_exhibit takes caseId, fileName, mediaType, content, sha256 and optionally description and participantId: %v.", err)
	}
	switch {
	case !idRE.MatchString(a.CaseID):
		return a, nil, problem.New(InvalidArguments, "caseId must be an id: 1 to 160 characters of A-Z a-z 0-9 . _ : -.")
	case a.ParticipantID != "" && !idRE.MatchString(a.ParticipantID):
		return a, nil, problem.New(InvalidArguments, "participantId must be an id: 1 to 160 characters of A-Z a-z 0-9 . _ : -.")
	case a.FileName == "":
		return a, nil, problem.New(InvalidArguments, "fileName is required.")
	case !mediaTypeRE.MatchString(a.MediaType):
		return a, nil, problem.New(InvalidArguments, "mediaType must be a bare media type such as application/pdf.")
	case !sha256RE.MatchString(a.SHA256):
		return a, nil, problem.New(InvalidArguments, "sha256 must be the file's SHA-256 in 64 lowercase hex digits.")
	case len(a.Content) > maxExhibitBase64:
		return a, nil, problem.Newf(InvalidArguments, "content is over %d bytes decoded, the most an MCP message carries here: file this exhibit with the API's upload route (POST /api/cases/{id}/evidence).", maxExhibitBytes)
	}
	file, err := base64.StdEncoding.DecodeString(a.Content)
	if err != nil {
		return a, nil, problem.Newf(InvalidArguments, "content is not standard base64: %v.", err)
	}
	if len(file) > maxExhibitBytes {
		return a, nil, problem.Newf(InvalidArguments, "content is over %d bytes decoded: file this exhibit with the API's upload route (POST /api/cases/{id}/evidence).", maxExhibitBytes)
	}
	if sum := sha256.Sum256(file); hex.EncodeToString(sum[:]) != a.SHA256 {
		return a, nil, problem.Newf(InvalidArguments, "content's SHA-256 is %s, not the sha256 given (%s): the bytes changed on their way here; nothing was sent.", hex.EncodeToString(sum[:]), a.SHA256)
	}
	return a, file, nil
}

// exhibitForm is the API's upload form: participantId and description
// first, then the part "file". The file name is encoded by
// mime.FormatMediaType (RFC 2231 where it must be), so whatever it holds
// stays one parameter of the part's header, and the API judges the name
// it decodes, exactly as sent.
func exhibitForm(a exhibitUpload, file []byte) (*apiclient.Form, error) {
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	for _, f := range []struct{ name, value string }{{"participantId", a.ParticipantID}, {"description", a.Description}} {
		if f.value == "" {
			continue
		}
		if err := mw.WriteField(f.name, f.value); err != nil {
			return nil, err
		}
	}
	h := textproto.MIMEHeader{}
	h.Set("Content-Disposition", mime.FormatMediaType("form-data", map[string]string{"name": "file", "filename": a.FileName}))
	h.Set("Content-Type", a.MediaType)
	w, err := mw.CreatePart(h)
	if err != nil {
		return nil, err
	}
	if _, err := w.Write(file); err != nil {
		return nil, err
	}
	if err := mw.Close(); err != nil {
		return nil, err
	}
	return &apiclient.Form{ContentType: mw.FormDataContentType(), Body: body.Bytes()}, nil
}

func (ts *toolset) uploadExhibit(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	a, file, perr := readExhibitUpload(req.Params.Arguments)
	if perr != nil {
		return problemResult(perr), nil
	}
	form, err := exhibitForm(a, file)
	if err != nil {
		return problemResult(problem.New(InvalidArguments, "The upload form cannot be made of these arguments.").Wrap(err)), nil
	}
	token, perr := ts.apiToken(ctx, req)
	if perr != nil {
		return problemResult(perr), nil
	}
	answer, err := ts.API.Do(ctx, apiclient.Request{Method: http.MethodPost, Path: fmt.Sprintf(uploadPath, a.CaseID), Form: form, Bearer: token})
	if err != nil {
		return ts.failed(ctx, err), nil
	}
	// The API hashed what it received: an exhibit recorded under another
	// digest did not arrive as sent.
	var recorded struct {
		Data struct {
			Exhibit struct {
				ID     string `json:"id"`
				SHA256 string `json:"sha256"`
			} `json:"exhibit"`
		} `json:"data"`
	}
	if err := json.Unmarshal(answer.Body, &recorded); err != nil || recorded.Data.Exhibit.SHA256 != a.SHA256 {
		return problemResult(problem.Newf(UnexpectedAnswer, "The API recorded exhibit %q with SHA-256 %q, not the %s sent: check it with list_evidence.",
			recorded.Data.Exhibit.ID, recorded.Data.Exhibit.SHA256, a.SHA256)), nil
	}
	return answerResult(answer), nil
}

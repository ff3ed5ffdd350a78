package httpapi_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
	metricnoop "go.opentelemetry.io/otel/metric/noop"

	"github.com/pcourt/pcourt/api/apitest"
	"github.com/pcourt/pcourt/libs/auth"
	"github.com/pcourt/pcourt/libs/auth/authtest"
	"github.com/pcourt/pcourt/libs/httpserver"
	"github.com/pcourt/pcourt/libs/problem"
	"github.com/pcourt/pcourt/libs/redistest"
	"github.com/pcourt/pcourt/services/mcp/internal/apiclient"
	"github.com/pcourt/pcourt/services/mcp/internal/exchange"
	"github.com/pcourt/pcourt/services/mcp/internal/httpapi"
	"github.com/pcourt/pcourt/services/mcp/internal/tools"
)

// upload_exhibit (docs/mcp.md, "Evidence"): the file given as base64 is
// checked against its digest and sent as the API's multipart upload with
// the token the caller's is exchanged for; the API's answer and its
// problems come back unchanged. The API here is an HTTP peer standing in
// for the edge (the token endpoint's exchange and the upload route), each
// of whose answers is validated against openapi.yaml; the real route is
// tested in services/cases (accounts_evidence_test.go).

const apiToken = "pc_oat_sbx_exchangedforthetool"

// received is one upload the API got: its parts by name, in order, and the
// file part's name and type exactly as sent.
type received struct {
	path, bearer          string
	parts                 []string
	fields                map[string]string
	fileName, contentType string
	file                  []byte
}

// uploadAPI stands in for the edge. refuse, when set, is the problem every
// upload is answered with; recordAs, when set, is the digest the exhibit
// is recorded under (a transfer that changed the bytes).
type uploadAPI struct {
	t       *testing.T
	subject string

	mu       sync.Mutex
	uploads  []received
	refuse   *problem.Error
	recordAs string
}

func (a *uploadAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rec := httptest.NewRecorder()
	if r.URL.Path == "/oauth/token" {
		a.exchange(rec, r)
	} else {
		a.upload(rec, r)
		// The answer must be the API's own, as openapi.yaml describes it.
		apitest.Response(a.t, r, rec.Result(), rec.Body.Bytes())
	}
	for k, vs := range rec.Header() {
		w.Header()[k] = vs
	}
	w.WriteHeader(rec.Code)
	_, _ = w.Write(rec.Body.Bytes())
}

// exchange answers RFC 8693's exchange of the caller's token only.
func (a *uploadAPI) exchange(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	if r.PostFormValue("grant_type") != exchange.GrantType || r.PostFormValue("subject_token") != a.subject {
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write([]byte(`{"error":"invalid_grant"}`))
		return
	}
	_ = json.NewEncoder(w).Encode(map[string]any{"access_token": apiToken, "issued_token_type": exchange.AccessTokenType, "token_type": "Bearer", "expires_in": 600})
}

var exhibitTypeNotAllowed = problem.Code{Name: "exhibit_type_not_allowed", Status: http.StatusUnsupportedMediaType, Title: "Exhibit type not allowed"}

func (a *uploadAPI) upload(w http.ResponseWriter, r *http.Request) {
	caseID, ok := strings.CutSuffix(strings.TrimPrefix(r.URL.Path, "/api/cases/"), "/evidence")
	require.True(a.t, ok && r.Method == http.MethodPost, "%s %s is not the upload route", r.Method, r.URL.Path)
	got := received{path: r.URL.Path, bearer: r.Header.Get("Authorization"), fields: map[string]string{}}
	mr, err := r.MultipartReader()
	require.NoError(a.t, err, "the upload is multipart/form-data")
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(a.t, err)
		body, err := io.ReadAll(part)
		require.NoError(a.t, err)
		got.parts = append(got.parts, part.FormName())
		if part.FormName() == "file" {
			// As the cases service reads it: the name exactly as sent.
			_, params, err := mime.ParseMediaType(part.Header.Get("Content-Disposition"))
			require.NoError(a.t, err)
			got.fileName, got.contentType, got.file = params["filename"], part.Header.Get("Content-Type"), body
		} else {
			got.fields[part.FormName()] = string(body)
		}
	}
	a.mu.Lock()
	a.uploads = append(a.uploads, got)
	refuse, recordAs := a.refuse, a.recordAs
	a.mu.Unlock()

	w.Header().Set("X-Request-Id", "req-upload")
	if refuse != nil {
		w.Header().Set("Content-Type", "application/problem+json")
		w.WriteHeader(refuse.Code.Status)
		_ = json.NewEncoder(w).Encode(refuse.Body("req-upload"))
		return
	}
	sum := sha256.Sum256(got.file)
	digest := hex.EncodeToString(sum[:])
	if recordAs != "" {
		digest = recordAs
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusCreated)
	_ = json.NewEncoder(w).Encode(map[string]any{"requestId": "req-upload", "data": map[string]any{
		"caseId": caseID, "events": []any{}, "lastSequence": 3,
		"exhibit": map[string]any{"id": "exh_1", "side": "respondent", "participantId": "p-agent", "fileName": got.fileName, "mediaType": got.contentType,
			"size": len(got.file), "sha256": digest, "description": got.fields["description"], "uploadedAt": "2026-11-20T10:00:00.000Z",
			"disclosed": false, "authenticity": "unchallenged", "candidate": true, "download": "/api/cases/" + caseID + "/evidence/exh_1"},
	}})
}

func (a *uploadAPI) received() []received {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]received(nil), a.uploads...)
}

// uploadStack is the MCP server's HTTP surface on a real Redis, its API
// and token endpoint the uploadAPI; token is an account's token for the
// server.
func uploadStack(t *testing.T, scopes ...auth.Scope) (stack, *uploadAPI, string) {
	t.Helper()
	store := auth.NewStore(redistest.NewClient(t), auth.DefaultStoreConfig())
	token, _ := authtest.MintAccountToken(t, store, "acct_agent1", resource, scopes)
	api := &uploadAPI{t: t, subject: token}
	edge := httptest.NewServer(api)
	t.Cleanup(edge.Close)
	base, err := url.Parse(edge.URL)
	require.NoError(t, err)
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	server, err := tools.NewServer("test", tools.Deps{
		API:         apiclient.New(base, http.DefaultClient),
		Exchange:    exchange.New(exchange.Config{TokenURL: edge.URL + "/oauth/token", ClientID: "ocl_mcp", ClientSecret: "s", Resource: public}, http.DefaultClient, nil),
		Credentials: store,
		Meter:       metricnoop.NewMeterProvider(),
		Logger:      logger,
	})
	require.NoError(t, err)
	s := httpserver.New(httpserver.DefaultConfig(), httpserver.Deps{Service: "mcp", Logger: logger})
	require.NoError(t, httpapi.Register(s.Router(), httpapi.Config{
		Resource: resource, MetadataURL: public + httpapi.MetadataPath, AuthorizationServer: public,
	}, httpapi.Deps{Credentials: store, Server: server}))
	ts := httptest.NewServer(s.Router())
	t.Cleanup(ts.Close)
	return stack{url: ts.URL, store: store}, api, token
}

// exhibitArgs are upload_exhibit's arguments for file.
func exhibitArgs(caseID, name, mediaType string, file []byte) map[string]any {
	sum := sha256.Sum256(file)
	return map[string]any{"caseId": caseID, "fileName": name, "mediaType": mediaType, "content": base64.StdEncoding.EncodeToString(file),
		"sha256": hex.EncodeToString(sum[:])}
}

func TestUploadExhibitSendsTheFileAsTheAPIsUpload(t *testing.T) {
	s, api, token := uploadStack(t, auth.ScopeCasesRead, auth.ScopeEvidenceFile)
	session := connect(t, s, token)
	// The largest file the tool takes, in one MCP message.
	file := bytes.Repeat([]byte("the provisioning log, line by line\n"), 524288/35)
	file = append(file, bytes.Repeat([]byte("."), 524288-len(file))...)
	args := exhibitArgs("cs_1", "provisioning.txt", "text/plain", file)
	args["description"] = "The provisioning log"
	args["participantId"] = "p-agent"

	res, err := session.CallTool(context.Background(), &mcp.CallToolParams{Name: "upload_exhibit", Arguments: args})
	require.NoError(t, err)
	require.False(t, res.IsError, "%v", res.Content)
	var answer struct {
		Data struct {
			Exhibit struct {
				ID, SHA256, FileName, MediaType string
			}
		}
	}
	raw, _ := json.Marshal(res.StructuredContent)
	require.NoError(t, json.Unmarshal(raw, &answer))
	require.Equal(t, "exh_1", answer.Data.Exhibit.ID, "the API's answer is the tool's result")
	require.Equal(t, args["sha256"], answer.Data.Exhibit.SHA256)

	got := api.received()
	require.Len(t, got, 1)
	require.Equal(t, "/api/cases/cs_1/evidence", got[0].path)
	require.Equal(t, "Bearer "+apiToken, got[0].bearer, "the exchanged token, never the caller's own")
	require.Equal(t, []string{"participantId", "description", "file"}, got[0].parts, "the fields first, then the file, as the route takes them")
	require.Equal(t, map[string]string{"participantId": "p-agent", "description": "The provisioning log"}, got[0].fields)
	require.Equal(t, "provisioning.txt", got[0].fileName)
	require.Equal(t, "text/plain", got[0].contentType)
	require.Equal(t, file, got[0].file, "byte for byte")
}

// A file name is the API's to judge, exactly as sent: quotes, a line break
// or a path stay one parameter of the part's header, so nothing of the
// name becomes another header or another part.
func TestAFileNameReachesTheAPIExactlyAsGiven(t *testing.T) {
	s, api, token := uploadStack(t, auth.ScopeEvidenceFile)
	session := connect(t, s, token)
	for _, name := range []string{"invoice \"77\".txt", "a\r\nContent-Type: text/html\r\n\r\n.txt", "../../etc/passwd.txt", "Rechnung für März.txt"} {
		res, err := session.CallTool(context.Background(), &mcp.CallToolParams{Name: "upload_exhibit", Arguments: exhibitArgs("cs_1", name, "text/plain", []byte("x\n"))})
		require.NoError(t, err)
		require.False(t, res.IsError, "%v", res.Content)
		got := api.received()
		last := got[len(got)-1]
		require.Equal(t, name, last.fileName)
		require.Equal(t, "text/plain", last.contentType)
		require.Equal(t, []string{"file"}, last.parts)
	}
}

// The API's refusal is the tool's error with the API's problem, unchanged.
func TestUploadExhibitReturnsTheAPIsProblem(t *testing.T) {
	s, api, token := uploadStack(t, auth.ScopeEvidenceFile)
	api.refuse = problem.New(exhibitTypeNotAllowed, "image/gif is not a type exhibits may have.")
	session := connect(t, s, token)
	res, err := session.CallTool(context.Background(), &mcp.CallToolParams{Name: "upload_exhibit", Arguments: exhibitArgs("cs_1", "a.gif", "image/gif", []byte("GIF89a"))})
	require.NoError(t, err)
	require.True(t, res.IsError)
	var p struct{ Code, Detail, RequestID string }
	raw, _ := json.Marshal(res.StructuredContent)
	require.NoError(t, json.Unmarshal(raw, &p))
	require.Equal(t, "exhibit_type_not_allowed", p.Code)
	require.Equal(t, "image/gif is not a type exhibits may have.", p.Detail)
	require.Equal(t, "req-upload", p.RequestID, "the API's own document")
	require.Equal(t, "415 exhibit_type_not_allowed: image/gif is not a type exhibits may have.", res.Content[0].(*mcp.TextContent).Text)
}

// An exhibit the API recorded under another digest did not arrive as sent:
// the tool says so rather than report the upload done.
func TestAnExhibitRecordedUnderAnotherDigestIsNotReportedDone(t *testing.T) {
	s, api, token := uploadStack(t, auth.ScopeEvidenceFile)
	api.recordAs = strings.Repeat("0", 64)
	session := connect(t, s, token)
	res, err := session.CallTool(context.Background(), &mcp.CallToolParams{Name: "upload_exhibit", Arguments: exhibitArgs("cs_1", "a.txt", "text/plain", []byte("x\n"))})
	require.NoError(t, err)
	require.True(t, res.IsError)
	require.Equal(t, "unexpected_api_answer", problemCode(t, res))
}

// Arguments the tool does not take are refused before any call: nothing
// reaches the API, not even the token exchange.
func TestUploadExhibitRefusesArgumentsBeforeAnyCall(t *testing.T) {
	s, api, token := uploadStack(t, auth.ScopeEvidenceFile)
	session := connect(t, s, token)
	file := []byte("x\n")
	over := bytes.Repeat([]byte("a"), 524288+1)
	for name, edit := range map[string]func(map[string]any){
		"a digest of other bytes":   func(a map[string]any) { a["sha256"] = strings.Repeat("a", 64) },
		"content that is no base64": func(a map[string]any) { a["content"] = "not base64!" },
		"a file over the bound": func(a map[string]any) {
			a["content"], a["sha256"] = base64.StdEncoding.EncodeToString(over), fmt.Sprintf("%x", sha256.Sum256(over))
		},
		"a media type with a header in it": func(a map[string]any) { a["mediaType"] = "text/plain\r\nX-Evil: 1" },
		"a path in place of the case":      func(a map[string]any) { a["caseId"] = "../../api/accounts" },
		"a participant that is no id":      func(a map[string]any) { a["participantId"] = "p/1" },
		"an argument it does not take":     func(a map[string]any) { a["side"] = "claimant" },
		"no file name":                     func(a map[string]any) { delete(a, "fileName") },
	} {
		t.Run(name, func(t *testing.T) {
			args := exhibitArgs("cs_1", "a.txt", "text/plain", file)
			edit(args)
			res, err := session.CallTool(context.Background(), &mcp.CallToolParams{Name: "upload_exhibit", Arguments: args})
			require.NoError(t, err)
			require.True(t, res.IsError)
			require.Equal(t, "invalid_tool_arguments", problemCode(t, res))
		})
	}
	require.Empty(t, api.received())
}

package apitest_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/api/apitest"
)

// recordingTB captures a failure instead of failing the real test, so we can
// check that the validator refuses what the document does not describe.
type recordingTB struct {
	testing.TB
	failure string
}

type fatal struct{}

func (r *recordingTB) Helper() {}
func (r *recordingTB) Fatalf(format string, args ...any) {
	r.failure = fmt.Sprintf(format, args...)
	panic(fatal{})
}

func check(t *testing.T, path string, status int, contentType, body string) string {
	t.Helper()
	return checkExchange(t, http.MethodGet, path, status, http.Header{"Content-Type": {contentType}}, body)
}

func checkExchange(t *testing.T, method, path string, status int, header http.Header, body string) string {
	t.Helper()
	req := httptest.NewRequest(method, "http://localhost:8080"+path, nil)
	resp := &http.Response{
		StatusCode: status,
		Header:     header,
		Body:       io.NopCloser(strings.NewReader(body)),
		Request:    req,
	}
	rec := &recordingTB{TB: t}
	func() {
		defer func() {
			if r := recover(); r != nil {
				if _, ok := r.(fatal); !ok {
					panic(r)
				}
			}
		}()
		apitest.Response(rec, req, resp, []byte(body))
	}()
	return rec.failure
}

func TestValidatorAcceptsWhatTheDocumentDescribes(t *testing.T) {
	require.Empty(t, check(t, "/livez", 200, "application/json", `{"status":"ok"}`))
	require.Empty(t, check(t, "/api/v2/integration", 401, "application/problem+json",
		`{"type":"https://pcourt.dev/problems/unauthenticated","title":"Authentication required","status":401,"code":"unauthenticated","detail":"d","requestId":"req_1"}`))
}

func TestValidatorRefusesWhatItDoesNot(t *testing.T) {
	tests := map[string]struct {
		path, contentType, body string
		status                  int
	}{
		"undocumented path":       {"/nowhere", "application/json", `{}`, 200},
		"undocumented status":     {"/livez", "application/json", `{"status":"ok"}`, 418},
		"body breaks the schema":  {"/livez", "application/json", `{"status":"sleepy"}`, 200},
		"problem missing a field": {"/api/v2/integration", "application/problem+json", `{"type":"https://pcourt.dev/problems/x","title":"t","status":401,"code":"x","detail":"d"}`, 401},
		"extra property in data":  {"/api/v2/integration", "application/json", `{"requestId":"r","data":{"credentialId":"c","tenant":"t","environment":"sandbox","role":"claimant_agent","partnerId":"p","colour":"red","schemaVersions":{"caseDraft":"case-draft-v2","confirmedFiling":"confirmed-filing-v2","procedurePlan":"case-procedure-plan-v2","evaluation":"narrow-evaluation-v2","caseEvent":"case-event-v2","webhookSignature":"pc-webhook-ed25519-v1","x402":2}}}`, 200},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			require.NotEmpty(t, check(t, tc.path, tc.status, tc.contentType, tc.body))
		})
	}
}

const unavailable = `{"type":"https://pcourt.dev/problems/unavailable","title":"Unavailable","status":503,"code":"unavailable","detail":"d","requestId":"req_1"}`

// A templated path matches any value of its parameter, and a response
// the operation names by reference (components.responses) is checked as
// the one it refers to, headers included.
func TestValidatorFollowsTemplatesAndReferences(t *testing.T) {
	problem := http.Header{"Content-Type": {"application/problem+json"}, "Retry-After": {"1"}}
	require.Empty(t, checkExchange(t, http.MethodGet, "/api/v2/case-drafts/drf_1", 503, problem, unavailable))
	require.Contains(t, checkExchange(t, http.MethodGet, "/api/v2/case-drafts/drf_1", 503, problem, `{"status":503}`),
		"missing properties", "the referenced response's schema applies")
	require.Contains(t, checkExchange(t, http.MethodGet, "/api/v2/case-drafts/drf_1/nowhere", 503, problem, unavailable),
		"no path of the document matches")
}

func TestValidatorRefusesAnUndocumentedOperationOrMediaType(t *testing.T) {
	require.Contains(t, checkExchange(t, http.MethodDelete, "/livez", 200, http.Header{"Content-Type": {"application/json"}}, `{"status":"ok"}`),
		"has no DELETE operation")
	require.Contains(t, check(t, "/livez", 200, "text/plain", "ok"), "Content-Type text/plain is not documented")
	require.Contains(t, check(t, "/livez", 200, "application/json", "ok"), "is not JSON")
	require.Contains(t, check(t, "/livez", 200, "", `{"status":"ok"}`), "is not a media type")
}

// A header the response documents is checked against its schema: an
// invitation's 201 is never cached.
func TestValidatorChecksDocumentedHeaders(t *testing.T) {
	header := func(cacheControl string) http.Header {
		return http.Header{"Content-Type": {"application/json"}, "Cache-Control": {cacheControl}}
	}
	require.Contains(t, checkExchange(t, http.MethodPost, "/api/cases/cs_1/invitations", 201, header("public, max-age=60"), `{}`),
		"header Cache-Control")
	require.NotContains(t, checkExchange(t, http.MethodPost, "/api/cases/cs_1/invitations", 201, header("no-store"), `{}`),
		"header Cache-Control")
}

// format is asserted, not only annotated: a problem type that is not a URI
// fails.
func TestSchemaAssertsFormats(t *testing.T) {
	apitest.Schema(t, "Problem", []byte(unavailable))
	rec := &recordingTB{TB: t}
	func() {
		defer func() { _ = recover() }()
		apitest.Schema(rec, "Problem", []byte(`{"type":"not a uri","title":"t","status":400,"code":"x","detail":"d","requestId":"r"}`))
	}()
	require.Contains(t, rec.failure, "does not match schema Problem")
}

func TestSchemaRefusesAnInvalidValue(t *testing.T) {
	apitest.Schema(t, "Health", []byte(`{"status":"ok"}`))
	rec := &recordingTB{TB: t}
	func() {
		defer func() { _ = recover() }()
		apitest.Schema(rec, "Health", []byte(`{"status":"sleepy"}`))
	}()
	require.NotEmpty(t, rec.failure)
}

func TestEventRefusesWhatTheSchemaDoesNot(t *testing.T) {
	rec := &recordingTB{TB: t}
	func() {
		defer func() { _ = recover() }()
		apitest.Event(rec, "filings-case-opened-v2.schema.json", []byte(`{"schemaVersion":"filings-case-opened-v2","extra":true}`))
	}()
	require.Contains(t, rec.failure, "does not match")
}

// The envelope refers to the case event's definitions in another file of
// api/events: both are read from the embedded schemas.
func TestEventResolvesReferencesBetweenEventSchemas(t *testing.T) {
	envelope := func(eventID string) []byte {
		return []byte(`{"schemaVersion":"cases-event-envelope-v2","recipients":[{"tenant":"t","environment":"sandbox","partnerId":"acme"}],` +
			`"event":{"schemaVersion":"case-event-v2","eventId":"` + eventID + `","sequence":1,"type":"opened","occurredAt":"2026-11-27T10:00:00.000Z",` +
			`"caseId":"cs_1","externalCaseId":"ext-1","actionRequired":false}}`)
	}
	apitest.Event(t, "cases-event-envelope-v2.schema.json", envelope("evt_1"))

	rec := &recordingTB{TB: t}
	func() {
		defer func() { _ = recover() }()
		apitest.Event(rec, "cases-event-envelope-v2.schema.json", envelope("evt 1 has spaces"))
	}()
	require.Contains(t, rec.failure, "does not match", "the referenced eventId pattern applies")
}

// Operations walks the document's every operation with the security it
// lists: the report of an execution names accountOAuth with the one scope
// that no other implies.
func TestOperationsListTheirSecurity(t *testing.T) {
	var found *apitest.Operation
	ops := apitest.Operations(t)
	for i, op := range ops {
		if op.Method == http.MethodPost && op.Path == "/api/cases/{id}/executions" {
			found = &ops[i]
		}
	}
	if found == nil {
		t.Fatal("no POST /api/cases/{id}/executions in the document")
	}
	scope, listed := found.Scope(t, "accountOAuth")
	if !listed || scope != "executions:report" {
		t.Fatalf("its accountOAuth scope is %q (listed %v), not executions:report", scope, listed)
	}
	if _, listed := found.Scope(t, "accountSession"); listed {
		t.Fatal("it lists accountSession, which the route does not take")
	}
}

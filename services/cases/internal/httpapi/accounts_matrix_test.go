package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"mime/multipart"
	"net/http"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/api"
	"github.com/pcourt/pcourt/api/apitest"
	"github.com/pcourt/pcourt/libs/auth"
	"github.com/pcourt/pcourt/libs/auth/authtest"
	"github.com/pcourt/pcourt/libs/idempotency"
)

// The security checks of the earlier issues, rerun with account
// credentials (docs/accounts.md, docs/security.md): every operation of
// api/openapi.yaml that lists the accountOAuth or accountSession scheme
// and that cases serves is sent, for a real case the agent's account
// takes part in, each credential that must not reach it, and each
// refusal must be the documented one and change nothing. The operations
// come from the document, not from a list here, so an operation added to
// it is in the matrix from then on.

// casesFamilies are the path families the edge routes to cases
// (services/compat-edge/internal/routing, Families: copied, since
// services do not import each other). otherFamilies are those of the
// other services that list account schemes; an account operation under
// neither fails the matrix rather than being left out of it.
var (
	casesFamilies = []string{
		"/api/cases", "/api/awards", "/api/executions", "/api/rules", "/api/disputes", "/api/partner-cases",
		"/api/v2/cases", "/api/v2/rules", "/api/v2/ap2", "/api/v2/ucp", "/api/v2/evidence-exports", "/respond",
	}
	// filings' (its own accounts tests), the agent-commerce requests
	// among them, which the edge routes by their longer prefix.
	otherFamilies = []string{"/api/filings", "/api/v2/case-drafts", "/api/v2/filings", "/api/v2/ap2/resolution-requests", "/api/v2/ucp/resolution-requests"}
)

// minAccountOperations is how many operations of cases listed an account
// scheme when the matrix was written: fewer means the document's reading
// broke (or operations were withdrawn, and this floor with them).
const minAccountOperations = 67

// accountOperation is one operation of the OpenAPI document that takes
// account credentials.
type accountOperation struct {
	method, path string // path is the document's template
	// scope is the one its accountOAuth entry names.
	scope auth.Scope
	// session says it lists accountSession.
	session bool
	// keyed says it takes an Idempotency-Key.
	keyed bool
	// mediaType is its request body's ("" for none); schema the body's.
	mediaType string
	schema    map[string]any
	// pathParams are its path parameters' schemas, by name.
	pathParams map[string]map[string]any
}

func (op accountOperation) String() string { return op.method + " " + op.path }

// onCase says the operation names a case in its path.
func (op accountOperation) onCase() bool {
	return op.pathParams["id"] != nil || op.pathParams["caseId"] != nil
}

// openAPI is the document as JSON values, with its references resolved
// on demand.
type openAPI map[string]any

func (d openAPI) resolve(t testing.TB, v any) map[string]any {
	t.Helper()
	m, _ := v.(map[string]any)
	for i := 0; m != nil && m["$ref"] != nil; i++ {
		require.Less(t, i, 10, "a reference cycle at %v", m["$ref"])
		ref, _ := m["$ref"].(string)
		var at any = map[string]any(d)
		for _, part := range strings.Split(strings.TrimPrefix(ref, "#/"), "/") {
			at = at.(map[string]any)[strings.ReplaceAll(strings.ReplaceAll(part, "~1", "/"), "~0", "~")]
		}
		m, _ = at.(map[string]any)
		require.NotNil(t, m, "reference %s", ref)
	}
	return m
}

// accountOperations reads every operation of the document that lists
// accountOAuth or accountSession and whose path cases serves.
func accountOperations(t testing.TB) []accountOperation {
	t.Helper()
	ops := casesOperations(t, true)
	require.GreaterOrEqual(t, len(ops), minAccountOperations, "the document's account operations of cases")
	return ops
}

// casesOperations reads the operations of the document whose path cases
// serves and that need a credential: those that list an account scheme
// (accounts), or those that list none (!accounts).
func casesOperations(t testing.TB, accounts bool) []accountOperation {
	t.Helper()
	js, err := api.JSON()
	require.NoError(t, err)
	var doc openAPI
	require.NoError(t, json.Unmarshal(js, &doc))
	var ops []accountOperation
	for _, o := range apitest.Operations(t) {
		method, path, raw, item := o.Method, o.Path, o.Raw, o.Item
		op := accountOperation{method: method, path: path, pathParams: map[string]map[string]any{}}
		scope, oauth := o.Scope(t, "accountOAuth")
		_, op.session = o.Security["accountSession"]
		if oauth {
			op.scope = auth.Scope(scope)
			require.True(t, op.scope.Valid(), "%s %s: scope %s", method, path, op.scope)
		}
		if len(o.Security) == 0 || (oauth || op.session) != accounts {
			continue
		}
		require.Equal(t, op.session, op.session && oauth, "%s %s lists accountSession without accountOAuth: a session has every scope, the route still names one", method, path)
		switch {
		case !accounts && !underAny(path, casesFamilies):
			continue
		case underAny(path, otherFamilies):
			continue
		case !underAny(path, casesFamilies):
			t.Errorf("%s %s takes account credentials and belongs to no service this test knows: add its family to casesFamilies or otherFamilies", method, path)
			continue
		}
		params, _ := raw["parameters"].([]any)
		shared, _ := item["parameters"].([]any)
		for _, p := range append(params, shared...) {
			param := doc.resolve(t, p)
			switch {
			case param["in"] == "path":
				op.pathParams[param["name"].(string)] = doc.resolve(t, param["schema"])
			case param["in"] == "header" && strings.EqualFold(param["name"].(string), idempotency.Header):
				op.keyed = true
			}
		}
		if body := doc.resolve(t, raw["requestBody"]); body != nil && accounts {
			for mediaType, content := range body["content"].(map[string]any) {
				require.Empty(t, op.mediaType, "%s %s: one media type per request body", method, path)
				op.mediaType = mediaType
				op.schema = doc.resolve(t, content.(map[string]any)["schema"])
				op.schema = resolveProperties(t, doc, op.schema)
			}
		}
		ops = append(ops, op)
	}
	sort.Slice(ops, func(i, j int) bool { return ops[i].String() < ops[j].String() })
	return ops
}

// resolveProperties resolves the body schema's required properties' own
// schemas, which minimalBody reads.
func resolveProperties(t testing.TB, doc openAPI, schema map[string]any) map[string]any {
	t.Helper()
	props, _ := schema["properties"].(map[string]any)
	resolved := map[string]any{}
	for name, p := range props {
		resolved[name] = doc.resolve(t, p)
	}
	out := map[string]any{}
	for k, v := range schema {
		out[k] = v
	}
	out["properties"] = resolved
	return out
}

func underAny(path string, families []string) bool {
	return slices.ContainsFunc(families, func(f string) bool { return path == f || strings.HasPrefix(path, f+"/") })
}

// bodySamples are the values minimalBody gives a required string field
// that has no enum: what a person would type. A required field with no
// sample and no enum fails the matrix (add one here).
var bodySamples = map[string]any{
	"text":        "A statement for the record.",
	"description": "The provisioning log",
	"grounds":     "The exhibit was made after the dispute began.",
	"answer":      "The log is in UTC.",
	"detail":      "The date is cut off.",
	"awardHash":   strings.Repeat("a", 64),
}

// sideBodies are the bodies of operations whose schema requires less than
// a side's request does, by what the operation documents. The pre-award
// review's body is optional because the reviewer opens it with none; a
// side's answer must name its clericalErrors (400 invalid_tribunal_act
// otherwise), and an account's request is always a side's answer
// (tribunal.go, preAwardReview). Every act reads its body before the case
// (tribunal.go, sideDecisionAct), so without it a stranger's request is
// that 400, the same for a case that does not exist: it says nothing of
// the case, but it is not the refusal this matrix checks.
var sideBodies = map[string]map[string]any{
	"POST /api/disputes/{id}/pre-award-review": {"clericalErrors": []string{}},
}

// sessionAnswer requires an answer to an account session to be the
// person's own: kept by no cache (libs/problem and the acts send
// no-store, which no cache stores, where the session's middleware had
// set private, no-store) and varying with the cookie.
func sessionAnswer(t testing.TB, rep reply) {
	t.Helper()
	cc := rep.header.Get("Cache-Control")
	assert.Contains(t, cc, "no-store", "a session's answer is stored by no cache")
	assert.NotContains(t, cc, "public")
	assert.Contains(t, rep.header.Values("Vary"), "Cookie")
}

// minimalBody is a body the operation's schema accepts with its required
// members only; nil for an operation without one.
func minimalBody(t testing.TB, op accountOperation) (contentType string, body []byte) {
	t.Helper()
	switch {
	case op.mediaType == "":
		return "", nil
	case op.mediaType == "multipart/form-data":
		// The upload's one required part, a small file.
		var b bytes.Buffer
		mw := multipart.NewWriter(&b)
		w, err := mw.CreateFormFile("file", "note.txt")
		require.NoError(t, err)
		_, err = w.Write([]byte("a note for the record\n"))
		require.NoError(t, err)
		require.NoError(t, mw.Close())
		return mw.FormDataContentType(), b.Bytes()
	case strings.HasPrefix(op.mediaType, "application/json"):
		if body, ok := sideBodies[op.String()]; ok {
			b, err := json.Marshal(body)
			require.NoError(t, err)
			return "application/json", b
		}
		v := map[string]any{}
		required, _ := op.schema["required"].([]any)
		props, _ := op.schema["properties"].(map[string]any)
		for _, r := range required {
			name := r.(string)
			prop, _ := props[name].(map[string]any)
			if enum, ok := prop["enum"].([]any); ok && len(enum) > 0 {
				v[name] = enum[0]
				continue
			}
			if sample, ok := bodySamples[name]; ok {
				v[name] = sample
				continue
			}
			switch prop["type"] {
			case "integer", "number":
				v[name] = 0
			case "boolean":
				v[name] = false
			default:
				t.Fatalf("%s: no sample for the required body field %s: add one to bodySamples", op, name)
			}
		}
		b, err := json.Marshal(v)
		require.NoError(t, err)
		return "application/json", b
	}
	t.Fatalf("%s: a body of %s, which the matrix does not build", op, op.mediaType)
	return "", nil
}

// pathIDs are the syntactically valid ids the matrix names where a path
// has a parameter other than the case: nothing the case holds, since
// every refusal comes before they are read.
var pathIDs = map[string]string{
	"evidenceId":  "exh_0123456789abcdef0123",
	"sourceId":    "exh_0123456789abcdef0123",
	"challengeId": "ach_0123456789abcdef0123",
	"reportId":    "def_0123456789abcdef0123",
	// The operations without an account scheme's.
	"submissionId": "sub_0123456789abcdef0123",
	"requestId":    "trq_0123456789abcdef0123",
	"appealId":     "apl_0123456789abcdef0123",
	"executionId":  "exe_0123456789abcdef0123",
	"eventId":      "evt_0123456789abcdef0123",
}

var pathParam = regexp.MustCompile(`\{([^{}/]+)\}`)

// concrete is the operation's path for caseID.
func concrete(t testing.TB, op accountOperation, caseID string) string {
	t.Helper()
	return pathParam.ReplaceAllStringFunc(op.path, func(m string) string {
		name := m[1 : len(m)-1]
		if name == "id" || name == "caseId" {
			return caseID
		}
		if enum, ok := op.pathParams[name]["enum"].([]any); ok && len(enum) > 0 {
			return enum[0].(string)
		}
		id, ok := pathIDs[name]
		if !ok {
			t.Fatalf("%s: no id for the path parameter %s: add one to pathIDs", op, name)
		}
		return id
	})
}

// presented is what a request presents: a bearer, an account session's
// cookie, and headers (name, value pairs).
type presented struct {
	bearer, cookie string
	headers        []string
}

// sendAs sends op for caseID with the minimal body, presenting p, and
// validates the exchange against the document.
func (s *stack) sendAs(t testing.TB, op accountOperation, caseID string, p presented) reply {
	t.Helper()
	contentType, body := minimalBody(t, op)
	req, err := http.NewRequest(op.method, s.url+concrete(t, op, caseID), bytes.NewReader(body))
	require.NoError(t, err)
	if body == nil {
		req.Body, req.ContentLength = http.NoBody, 0
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if op.keyed {
		req.Header.Set(idempotency.Header, newKey())
	}
	if p.bearer != "" {
		req.Header.Set("Authorization", "Bearer "+p.bearer)
	}
	if p.cookie != "" {
		req.AddCookie(&http.Cookie{Name: auth.SessionCookieName, Value: p.cookie})
	}
	for i := 0; i+1 < len(p.headers); i += 2 {
		req.Header.Add(p.headers[i], p.headers[i+1])
	}
	resp, raw := apitest.Do(t, http.DefaultClient, req)
	return s.reply(t, resp, raw)
}

// accountSession starts a session of account in tenant and env, as the
// accounts service does at a sign-in, and returns its cookie's value.
func (s *stack) accountSession(t testing.TB, account, tenant string, env auth.Environment) string {
	t.Helper()
	token, _, err := s.credentials.StartAccountSession(context.Background(), auth.AccountSessionRequest{
		Tenant: tenant, Environment: env, AccountID: account, Method: auth.SignInPasskey, Lifetime: time.Hour,
	})
	require.NoError(t, err)
	return token
}

// The site's origin, as the pages send it, and two that are not.
var (
	fromTheSite        = []string{"Origin", publicBaseURL}
	fromTheSiteNoRefer = []string{"Origin", "null", "Sec-Fetch-Site", "same-origin"}
	fromAnotherSite    = []string{"Origin", "https://evil.example", "Sec-Fetch-Site", "cross-site"}
	nullCrossSite      = []string{"Origin", "null", "Sec-Fetch-Site", "cross-site"}
)

// publicBaseURL is the stack's public base (publicBase), the audience of
// the API's account tokens and the origin of the site.
const publicBaseURL = "http://127.0.0.1:8080"

// refusal is one credential an operation must refuse, and how.
type refusal struct {
	name string
	p    presented
	// invisible: the case does not exist for it (404 case_not_found_or_opening,
	// or, on the case list, a list without the case); else status and code.
	invisible bool
	status    int
	code      string
	// challenge is what WWW-Authenticate must contain, "" for no check.
	challenge string
}

func TestAccountsMatrixEveryAccountOperationRefusesWhatItMust(t *testing.T) {
	ops := accountOperations(t)
	s := newStack(t)
	c := s.openForAccount(t)
	other := s.openForAccount(t)
	require.Equal(t, publicBaseURL, publicBase(t).String())

	all := slices.Clone(auth.Scopes)
	const stranger = "acct_STRANGER03"
	own := s.accountToken(t, all)
	strangers, _ := authtest.MintAccountToken(t, s.credentials, stranger, publicBaseURL, all)
	boundElsewhere := s.accountToken(t, all, func(r *auth.AccountTokenRequest) { r.CaseID = other.id })
	otherTenant := s.accountToken(t, all, func(r *auth.AccountTokenRequest) { r.Tenant = "tenant-other" })
	live := s.accountToken(t, all, func(r *auth.AccountTokenRequest) { r.Environment = auth.Live })
	forMCP := s.accountToken(t, all, func(r *auth.AccountTokenRequest) { r.Audience = publicBaseURL + "/mcp" })
	session := s.accountSession(t, agentAccount, "tenant-test", auth.Sandbox)
	strangersSession := s.accountSession(t, stranger, "tenant-test", auth.Sandbox)
	otherTenantSession := s.accountSession(t, agentAccount, "tenant-other", auth.Sandbox)
	liveSession := s.accountSession(t, agentAccount, "tenant-test", auth.Live)
	without := map[auth.Scope]string{}
	for _, scope := range all {
		without[scope] = s.accountToken(t, slices.DeleteFunc(slices.Clone(all), func(x auth.Scope) bool { return x == scope }))
	}

	checks := 0
	for _, op := range ops {
		t.Run(op.String(), func(t *testing.T) {
			refusals := []refusal{
				{name: "another account's token", p: presented{bearer: strangers}, invisible: true},
				{name: "the account's token bound to another case", p: presented{bearer: boundElsewhere}, invisible: true},
				{name: "the account's token of another tenant", p: presented{bearer: otherTenant}, invisible: true},
				{name: "the account's token of the live environment", p: presented{bearer: live}, invisible: true},
				{name: "the account's token without " + string(op.scope), p: presented{bearer: without[op.scope]},
					status: http.StatusForbidden, code: "forbidden", challenge: `error="insufficient_scope", scope="` + string(op.scope) + `"`},
				{name: "a token for the MCP server", p: presented{bearer: forMCP}, status: http.StatusUnauthorized, code: "invalid_credential", challenge: `error="invalid_token"`},
				{name: "the account's session as a bearer", p: presented{bearer: session}, status: http.StatusUnauthorized, code: "invalid_credential", challenge: `error="invalid_token"`},
			}
			if op.session {
				// A session's mutation must come from the site; sent from
				// it, what decides is whose session it is.
				site := fromTheSite
				refusals = append(refusals,
					refusal{name: "another account's session", p: presented{cookie: strangersSession, headers: site}, invisible: true},
					refusal{name: "the account's session of another tenant", p: presented{cookie: otherTenantSession, headers: site}, invisible: true},
					refusal{name: "the account's session of the live environment", p: presented{cookie: liveSession, headers: site}, invisible: true},
					// With a bearer the cookie is not read: the bearer's
					// account decides.
					refusal{name: "another account's token beside the account's session", p: presented{bearer: strangers, cookie: session, headers: site}, invisible: true},
				)
				if op.method != http.MethodGet {
					for _, from := range []struct {
						name    string
						headers []string
					}{{"from another site", fromAnotherSite}, {"with Origin null from another site", nullCrossSite}, {"saying nothing of its origin", nil}} {
						refusals = append(refusals, refusal{name: "the account's session " + from.name, p: presented{cookie: session, headers: from.headers},
							status: http.StatusForbidden, code: "cross_origin"})
					}
				}
			} else {
				// The cookie is no credential here, from the site or not.
				refusals = append(refusals,
					refusal{name: "the account's session cookie alone", p: presented{cookie: session, headers: fromTheSite}, status: http.StatusUnauthorized, code: "unauthenticated"})
			}
			for _, r := range refusals {
				checks++
				t.Run(r.name, func(t *testing.T) {
					stored := s.storedKeys(t, c.id)
					s.unchanged(t, func() {
						rep := s.sendAs(t, op, c.id, r.p)
						switch {
						case r.invisible && op.onCase():
							require.Equal(t, http.StatusNotFound, rep.status, string(rep.body))
							require.Equal(t, "case_not_found_or_opening", rep.code, string(rep.body))
						case r.invisible:
							// The case list: the account's other cases
							// only, never this one.
							require.Equal(t, http.StatusOK, rep.status, string(rep.body))
							require.NotContains(t, string(rep.body), c.id)
						default:
							require.Equal(t, r.status, rep.status, string(rep.body))
							require.Equal(t, r.code, rep.code, string(rep.body))
						}
						if r.challenge != "" {
							require.Contains(t, rep.header.Get("WWW-Authenticate"), r.challenge)
						}
						if r.p.cookie != "" && r.p.bearer == "" && op.session {
							sessionAnswer(t, rep)
						}
					})
					require.Equal(t, stored, s.storedKeys(t, c.id), "nothing new in the exhibits' store")
					s.spoolEmpty(t)
				})
			}
		})
	}
	t.Logf("%d account operations of cases, %d refusals", len(ops), checks)

	// The controls: the same requests, with the account's own credentials,
	// get past every check above (they may still meet the case's state:
	// no award yet, an exhibit the path names that does not exist), so
	// the refusals were the credentials', not a malformed request's.
	t.Run("controls", func(t *testing.T) {
		for _, op := range ops {
			ways := []struct {
				name string
				p    presented
			}{{"the account's token", presented{bearer: own}}}
			if op.session {
				ways = append(ways, struct {
					name string
					p    presented
				}{"the account's session from the site", presented{cookie: session, headers: fromTheSite}})
				if op.method != http.MethodGet {
					ways = append(ways, struct {
						name string
						p    presented
					}{"the account's session from the site's no-referrer pages", presented{cookie: session, headers: fromTheSiteNoRefer}})
				}
			}
			for _, w := range ways {
				rep := s.sendAs(t, op, c.id, w.p)
				if w.p.cookie != "" {
					sessionAnswer(t, rep)
				}
				assert.NotContains(t, []int{http.StatusUnauthorized, http.StatusForbidden}, rep.status, "%s, %s: %s", op, w.name, rep.body)
				assert.NotEqual(t, "case_not_found_or_opening", rep.code, "%s, %s: %s", op, w.name, rep.body)
				if !op.onCase() {
					assert.Contains(t, string(rep.body), c.id, "%s, %s: the list has the account's case", op, w.name)
				}
			}
		}
	})

	// One read per family: the account's own credentials read its case.
	t.Run("each family reads the case", func(t *testing.T) {
		for _, family := range []string{"/api/cases/{id}", "/api/v2/cases/{caseId}", "/api/disputes/{id}"} {
			i := slices.IndexFunc(ops, func(op accountOperation) bool { return op.method == http.MethodGet && op.path == family })
			require.GreaterOrEqual(t, i, 0, "the document lists GET %s for accounts", family)
			ways := []presented{{bearer: own}}
			if ops[i].session {
				ways = append(ways, presented{cookie: session})
			}
			for _, p := range ways {
				rep := s.sendAs(t, ops[i], c.id, p)
				require.Equal(t, http.StatusOK, rep.status, "%s: %s", family, rep.body)
				require.Equal(t, c.id, data[caseData](t, rep).CaseID, family)
			}
		}
	})
}

// The other side of the matrix: every operation of cases that lists no
// account scheme refuses the account's own token, whatever its scopes,
// with 403 and no challenge (no scope would help), and its session's
// cookie is no credential there (401); neither changes anything. The
// credential is refused before the body is read, so none is sent.
func TestAccountsMatrixOperationsWithoutAnAccountSchemeRefuseAccounts(t *testing.T) {
	ops := casesOperations(t, false)
	require.NotEmpty(t, ops)
	s := newStack(t)
	c := s.openForAccount(t)
	every := s.accountToken(t, slices.Clone(auth.Scopes))
	session := s.accountSession(t, agentAccount, "tenant-test", auth.Sandbox)
	for _, op := range ops {
		t.Run(op.String(), func(t *testing.T) {
			s.unchanged(t, func() {
				rep := s.sendAs(t, op, c.id, presented{bearer: every})
				require.Equal(t, http.StatusForbidden, rep.status, string(rep.body))
				require.Equal(t, "forbidden", rep.code, string(rep.body))
				require.Empty(t, rep.header.Get("WWW-Authenticate"), "no scope would help")
				rep = s.sendAs(t, op, c.id, presented{cookie: session, headers: fromTheSite})
				require.Equal(t, http.StatusUnauthorized, rep.status, string(rep.body))
				require.Equal(t, "unauthenticated", rep.code, string(rep.body))
			})
		})
	}
	t.Logf("%d operations of cases without an account scheme", len(ops))
}

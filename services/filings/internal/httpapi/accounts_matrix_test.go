package httpapi_test

import (
	"encoding/json"
	"net/http"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/api/apitest"
	"github.com/pcourt/pcourt/libs/auth"
	"github.com/pcourt/pcourt/libs/auth/authtest"
)

// The security checks with account credentials (docs/accounts.md,
// docs/security.md), as cases' accounts_matrix_test.go runs them: every
// operation of api/openapi.yaml that lists the accountOAuth scheme and
// that filings serves is sent, for a real draft the agent's account takes
// part in, each credential that must not reach it, and each refusal must
// be the documented one and change nothing in Redis. The operations come
// from the document, not from a list here, so an operation added to it is
// in the matrix from then on.

// filingsFamilies are the path families the edge routes to filings
// (services/compat-edge/internal/routing, Families: copied, since services
// do not import each other). An account operation under one of them that
// filings does not serve fails the matrix; one that filings serves but
// whose kind the matrix does not know fails it too.
var filingsFamilies = []string{
	"/api/filings", "/api/fees", "/api/authorizations",
	"/api/v2/case-drafts", "/api/v2/filings", "/api/v2/fees", "/api/v2/fee-referrals", "/api/v2/sponsorship-referrals",
	"/api/v2/authorizations", "/api/v2/integration", "/api/v2/ap2/resolution-requests", "/api/v2/ucp/resolution-requests",
}

// minFilingsAccountOperations is how many operations of filings listed
// accountOAuth when the matrix was written (prepare, read and confirm on
// both draft families): fewer means the document's reading broke, or
// operations were withdrawn, and this floor with them.
const minFilingsAccountOperations = 6

// The kinds of draft operation that take account tokens.
const (
	kindPrepare = "prepare"
	kindRead    = "read"
	kindConfirm = "confirm"
)

// filingsAccountOperation is one operation of the document that takes
// account tokens and that filings serves.
type filingsAccountOperation struct {
	method, path string // path is the document's template
	scope        auth.Scope
	kind         string
	// family is the draft family's prefix, /api/v2/case-drafts or
	// /api/filings: a draft is confirmed on the family it was prepared on.
	family string
}

func (op filingsAccountOperation) String() string { return op.method + " " + op.path }

var templateParam = regexp.MustCompile(`\{[^{}/]+\}`)

// ginPath is a document's path template as gin spells it, parameters
// renamed, for comparing shapes: /a/{id}/b and /a/:draftId/b are one route.
func ginPath(path string) string { return templateParam.ReplaceAllString(path, ":p") }

var ginParam = regexp.MustCompile(`:[^/]+`)

// filingsAccountOperations reads every operation of the document that lists
// accountOAuth and that filings serves (a route Register added, same method
// and shape).
func filingsAccountOperations(t testing.TB, s *stack) []filingsAccountOperation {
	t.Helper()
	served := map[string]bool{}
	for _, r := range s.routes {
		served[r.Method+" "+ginParam.ReplaceAllString(r.Path, ":p")] = true
	}
	var ops []filingsAccountOperation
	for _, o := range apitest.Operations(t) {
		method, path := o.Method, o.Path
		op := filingsAccountOperation{method: method, path: path}
		scope, oauth := o.Scope(t, "accountOAuth")
		if oauth {
			op.scope = auth.Scope(scope)
			require.True(t, op.scope.Valid(), "%s: scope %s", op, op.scope)
		}
		// Filings takes no sessions (auth.Middleware without
		// AcceptAccountSessions): a document saying it does is
		// wrong, or filings changed and this matrix with it.
		if _, session := o.Security["accountSession"]; session && served[method+" "+ginPath(path)] {
			t.Errorf("%s lists accountSession, which filings does not accept", op)
		}
		if !oauth {
			continue
		}
		switch {
		case served[method+" "+ginPath(path)]:
		case underAny(path, filingsFamilies):
			t.Errorf("%s lists accountOAuth under a family of filings, which serves no such route", op)
			continue
		default:
			continue // another service's (cases' matrix reads its own)
		}
		for _, family := range []string{"/api/v2/case-drafts", "/api/filings"} {
			switch {
			case method == http.MethodPost && path == family:
				op.kind, op.family = kindPrepare, family
			case method == http.MethodGet && ginPath(path) == family+"/:p":
				op.kind, op.family = kindRead, family
			case method == http.MethodPost && ginPath(path) == family+"/:p/confirmations":
				op.kind, op.family = kindConfirm, family
			}
		}
		if op.kind == "" {
			t.Errorf("%s takes account tokens and is of no kind this matrix knows: add its requests and refusals", op)
			continue
		}
		ops = append(ops, op)
	}
	sort.Slice(ops, func(i, j int) bool { return ops[i].String() < ops[j].String() })
	require.GreaterOrEqual(t, len(ops), minFilingsAccountOperations, "the document's account operations of filings")
	return ops
}

func underAny(path string, families []string) bool {
	return slices.ContainsFunc(families, func(f string) bool { return path == f || strings.HasPrefix(path, f+"/") })
}

// accountDraftBody is the draft the agent's account files for itself on
// family (byAccount), in that family's shape.
func accountDraftBody(t testing.TB, family string) map[string]any {
	t.Helper()
	switch family {
	case "/api/v2/case-drafts":
		return byAccount()
	case "/api/filings":
		return canonical(byAccount())
	}
	t.Fatalf("no draft body for the family %s", family)
	return nil
}

// matrixRequest is what one operation's request carries besides its
// credential.
type matrixRequest struct {
	path string
	body any
}

// requestFor is op's request, for d where the operation names a draft: the
// account's own draft to prepare, the draft to read, or the account's own
// participant's confirmation, exactly as served.
func requestFor(t testing.TB, op filingsAccountOperation, d draftData) matrixRequest {
	t.Helper()
	path := templateParam.ReplaceAllString(op.path, d.DraftID)
	switch op.kind {
	case kindPrepare:
		return matrixRequest{path: path, body: accountDraftBody(t, op.family)}
	case kindConfirm:
		return matrixRequest{path: path, body: confirmation(d, "p-agent", agentAccount, "agent:claims")}
	}
	return matrixRequest{path: path}
}

// matrixRefusal is one credential an operation must refuse, and how.
type matrixRefusal struct {
	name    string
	token   string
	headers []string
	status  int
	code    string
	// challenge is what WWW-Authenticate must contain, "" for no check.
	challenge string
}

func TestAccountsMatrixEveryFilingsAccountOperationRefusesWhatItMust(t *testing.T) {
	s := newStack(t)
	ops := filingsAccountOperations(t, s)

	all := slices.Clone(auth.Scopes)
	mint := func(account string, scopes []auth.Scope, opts ...func(*auth.AccountTokenRequest)) string {
		token, _ := authtest.MintAccountToken(t, s.credentials, account, publicBase, scopes, opts...)
		return token
	}
	own := mint(agentAccount, all)
	stranger := mint("acct_STRANGER03", all)
	// A token bound to a case, as an authorization code grant with case_id
	// issues it: it touches that case alone, and no draft at all.
	caseBound := mint(agentAccount, all, func(r *auth.AccountTokenRequest) { r.CaseID = "cs_0123456789abcdef0123" })
	otherTenant := mint(agentAccount, all, func(r *auth.AccountTokenRequest) { r.Tenant = "tenant-other" })
	live := mint(agentAccount, all, func(r *auth.AccountTokenRequest) { r.Environment = auth.Live })
	forMCP := mint(agentAccount, all, func(r *auth.AccountTokenRequest) { r.Audience = publicBase + "/mcp" })
	without := map[auth.Scope]string{}
	for _, scope := range all {
		without[scope] = mint(agentAccount, slices.DeleteFunc(slices.Clone(all), func(x auth.Scope) bool { return x == scope }))
	}
	session, _, err := s.credentials.StartAccountSession(t.Context(), auth.AccountSessionRequest{
		Tenant: "tenant-test", Environment: auth.Sandbox, AccountID: agentAccount, Method: auth.SignInPasskey, Lifetime: time.Hour,
	})
	require.NoError(t, err)

	// One draft of each family the account takes part in, prepared with its
	// own token: a draft is confirmed on the family it was prepared on.
	drafts := map[string]draftData{}
	for _, family := range []string{"/api/v2/case-drafts", "/api/filings"} {
		rep := s.do(t, http.MethodPost, family, own, newKey(), accountDraftBody(t, family))
		require.Equal(t, http.StatusCreated, rep.status, string(rep.body))
		drafts[family] = decodeDraft(t, rep)
	}

	checks := 0
	for _, op := range ops {
		t.Run(op.String(), func(t *testing.T) {
			d := drafts[op.family]
			invisible := func(name, token string) matrixRefusal {
				return matrixRefusal{name: name, token: token, status: http.StatusNotFound, code: "draft_not_found"}
			}
			refusals := []matrixRefusal{
				invisible("another account's token", stranger),
				invisible("the account's token bound to a case", caseBound),
				invisible("the account's token of another tenant", otherTenant),
				invisible("the account's token of the live environment", live),
				{name: "the account's token without " + string(op.scope), token: without[op.scope],
					status: http.StatusForbidden, code: "forbidden", challenge: `error="insufficient_scope", scope="` + string(op.scope) + `"`},
				{name: "a token for the MCP server", token: forMCP, status: http.StatusUnauthorized, code: "invalid_credential", challenge: `error="invalid_token"`},
				{name: "the account's session as a bearer", token: session, status: http.StatusUnauthorized, code: "invalid_credential", challenge: `error="invalid_token"`},
				// Filings takes no sessions: the cookie is no credential, from
				// the site or not.
				{name: "the account's session cookie alone", headers: []string{"Cookie", auth.SessionCookieName + "=" + session, "Origin", publicBase},
					status: http.StatusUnauthorized, code: "unauthenticated"},
			}
			if op.kind == kindPrepare {
				// There is no draft yet to hide. An account files for
				// itself: a draft whose initiator names another account is
				// an invalid draft (accounts_test.go). A token bound to a
				// case touches no draft, the one it would create included.
				// A token of another tenant or environment prepares in its
				// own (the draft's tenant and environment are the
				// credential's): that is checked below, not refused here.
				refusals = slices.DeleteFunc(refusals, func(r matrixRefusal) bool { return r.code == "draft_not_found" })
				refusals = append(refusals,
					matrixRefusal{name: "another account's token", token: stranger, status: http.StatusBadRequest, code: "invalid_draft"},
					matrixRefusal{name: "the account's token bound to a case", token: caseBound, status: http.StatusForbidden, code: "forbidden"},
				)
			}
			for _, r := range refusals {
				checks++
				t.Run(r.name, func(t *testing.T) {
					req := requestFor(t, op, d)
					s.unchanged(t, func() {
						rep := s.do(t, op.method, req.path, r.token, newKey(), req.body, r.headers...)
						require.Equal(t, r.status, rep.status, string(rep.body))
						require.Equal(t, r.code, rep.code, string(rep.body))
						if r.challenge != "" {
							require.Contains(t, rep.header.Get("WWW-Authenticate"), r.challenge)
						}
					})
				})
			}
		})
	}
	t.Logf("%d account operations of filings, %d refusals", len(ops), checks)

	// The controls: the same requests with the account's own all-scope
	// token succeed, so the refusals were the credentials', not a malformed
	// request's. Reads first, then the acts the state allows: a new draft
	// of the account's, and its own confirmation, once, which opens the case
	// (initiator_only); the draft reads as opened afterwards.
	t.Run("controls", func(t *testing.T) {
		order := map[string]int{kindRead: 0, kindPrepare: 1, kindConfirm: 2}
		controls := slices.Clone(ops)
		slices.SortStableFunc(controls, func(a, b filingsAccountOperation) int { return order[a.kind] - order[b.kind] })
		for _, op := range controls {
			d := drafts[op.family]
			req := requestFor(t, op, d)
			rep := s.do(t, op.method, req.path, own, newKey(), req.body)
			switch op.kind {
			case kindRead:
				require.Equal(t, http.StatusOK, rep.status, "%s: %s", op, rep.body)
				require.Equal(t, d.DraftID, decodeDraft(t, rep).DraftID, op.String())
			case kindPrepare:
				require.Equal(t, http.StatusCreated, rep.status, "%s: %s", op, rep.body)
				require.Contains(t, string(rep.body), `"accountId":"`+agentAccount+`"`, op.String())
			case kindConfirm:
				require.Equal(t, http.StatusCreated, rep.status, "%s: %s", op, rep.body)
				var o opened
				require.NoError(t, json.Unmarshal(rep.body, &o))
				require.Equal(t, d.ReservedCaseID, o.Data.CaseID, op.String())
			}
		}
	})

	// A token of another tenant or environment prepares in its own: the
	// draft it makes is invisible to the account's token here, and this
	// tenant's drafts are invisible to it (the refusals above).
	t.Run("another tenant's and environment's preparations stay theirs", func(t *testing.T) {
		for _, op := range ops {
			if op.kind != kindPrepare {
				continue
			}
			for _, elsewhere := range []string{otherTenant, live} {
				rep := s.do(t, op.method, op.path, elsewhere, newKey(), accountDraftBody(t, op.family))
				require.Equal(t, http.StatusCreated, rep.status, "%s: %s", op, rep.body)
				theirs := decodeDraft(t, rep)
				path := op.family + "/" + theirs.DraftID
				require.Equal(t, http.StatusOK, s.do(t, http.MethodGet, path, elsewhere, "", nil).status, path)
				here := s.do(t, http.MethodGet, path, own, "", nil)
				require.Equal(t, http.StatusNotFound, here.status, string(here.body))
				require.Equal(t, "draft_not_found", here.code, string(here.body))
			}
		}
	})
}

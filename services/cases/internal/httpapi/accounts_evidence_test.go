package httpapi_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/auth"
	"github.com/pcourt/pcourt/libs/auth/authtest"
	"github.com/pcourt/pcourt/libs/objectstore/s3test"
)

// Evidence with account tokens (docs/accounts.md, docs/evidence.md): the
// account a side's participant takes part as uploads, describes, discloses
// and challenges exhibits for that side with evidence:file, and reads the
// side's evidence with cases:read, through the membership of its side
// alone. It sees exactly what its side sees, and the tribunal's
// resolutions are never its.

// accountInEvidence opens a quick proceeding whose respondent is the
// agent's account and has the account answer with token: the evidence
// round is open to both sides.
func (s *stack) accountInEvidence(t *testing.T, token string) opened {
	t.Helper()
	c := s.openForAccount(t, quickProceeding)
	rep := s.do(t, http.MethodPost, "/api/cases/"+c.id+"/answer", token, newKey(), map[string]any{"text": "Denied: the API was provisioned on day one."})
	require.Equal(t, http.StatusCreated, rep.status, string(rep.body))
	return c
}

// exhibitIDs are the ids of the exhibits a list answer names.
func exhibitIDs(t *testing.T, rep reply) []string {
	t.Helper()
	require.Equal(t, http.StatusOK, rep.status, string(rep.body))
	ids := []string{}
	for _, e := range data[exhibitsData](t, rep).Exhibits {
		ids = append(ids, e.ID)
	}
	return ids
}

// The whole walk on the real S3 server: the account's exhibit is its
// side's alone until it discloses it, lives in the bucket and comes back
// byte for byte; it challenges the claimant's disclosed exhibit, answers
// the claimant's challenge of its own and reports a processing defect,
// on each route family.
func TestAnAgentsAccountFilesAndReadsItsSidesEvidence(t *testing.T) {
	s := newStackOn(t, s3test.NewStore(t))
	token := s.accountToken(t, []auth.Scope{auth.ScopeCasesRead, auth.ScopeCasesAct, auth.ScopeEvidenceFile})
	c := s.accountInEvidence(t, token)
	base, w := "/api/cases/"+c.id, "/api/disputes/"+c.id+"/"
	// A token bound to this case files on it like any of the account's.
	bound := s.accountToken(t, []auth.Scope{auth.ScopeCasesRead, auth.ScopeEvidenceFile}, func(r *auth.AccountTokenRequest) { r.CaseID = c.id })

	log := pngOf(t, 320, 200)
	rep := s.upload(t, base+"/evidence", bound, field("description", "The provisioning log"), file("provisioning.png", "image/png", log))
	require.Equal(t, http.StatusCreated, rep.status, string(rep.body))
	ex := data[exhibitActData](t, rep).Exhibit
	assert.Equal(t, "respondent", ex.Side, "the side the account's membership names")
	assert.Equal(t, sha(log), ex.SHA256)
	assert.True(t, ex.Candidate)
	assert.Equal(t, []string{"cases/" + c.id + "/exhibits/" + ex.ID + "/original"}, s.storedKeys(t, c.id))

	// Undisclosed, it is the account's side's alone.
	assert.Equal(t, []string{ex.ID}, exhibitIDs(t, s.do(t, http.MethodGet, base+"/evidence", token, "", nil)))
	assert.Equal(t, []string{ex.ID}, exhibitIDs(t, s.do(t, http.MethodGet, "/api/v2/cases/"+c.id+"/evidence-candidates", token, "", nil)))
	assert.Empty(t, exhibitIDs(t, s.do(t, http.MethodGet, base+"/evidence", s.claimant, "", nil)))
	rep = s.do(t, http.MethodGet, base+"/evidence/"+ex.ID, token, "", nil)
	require.Equal(t, http.StatusOK, rep.status, string(rep.body))
	assert.Equal(t, log, rep.body)
	assert.Equal(t, `"`+sha(log)+`"`, rep.header.Get("ETag"))

	rep = s.do(t, http.MethodPatch, base+"/evidence/"+ex.ID, token, newKey(), map[string]any{"description": "Provisioning log, 2026-10-01"})
	require.Equal(t, http.StatusOK, rep.status, string(rep.body))
	assert.Equal(t, "Provisioning log, 2026-10-01", data[exhibitActData](t, rep).Exhibit.Description)
	rep = s.do(t, http.MethodPost, base+"/evidence/"+ex.ID+"/disclosure", token, newKey(), nil)
	require.Equal(t, http.StatusOK, rep.status, string(rep.body))
	assert.Contains(t, s.docketTypes(t, c.id), "evidence_disclosed")
	assert.Equal(t, []string{ex.ID}, exhibitIDs(t, s.do(t, http.MethodGet, base+"/evidence", s.claimant, "", nil)), "disclosed, the claimant sees it")
	assert.Equal(t, log, s.do(t, http.MethodGet, base+"/evidence/"+ex.ID, s.claimant, "", nil).body)

	// The claimant's exhibit: the account sees it once disclosed, and
	// challenges it on the v2 family.
	rep = s.upload(t, base+"/evidence", s.claimant, file("invoice-77.txt", "text/plain", []byte("Invoice 77, never paid.\n")))
	require.Equal(t, http.StatusCreated, rep.status, string(rep.body))
	theirs := data[exhibitActData](t, rep).Exhibit
	assert.Equal(t, []string{ex.ID}, exhibitIDs(t, s.do(t, http.MethodGet, base+"/evidence", token, "", nil)), "not the claimant's undisclosed one")
	s.unchanged(t, func() {
		rep := s.do(t, http.MethodGet, base+"/evidence/"+theirs.ID, token, "", nil)
		assert.Equal(t, "exhibit_not_found", rep.code, string(rep.body))
		rep = s.do(t, http.MethodPost, base+"/evidence/"+theirs.ID+"/disclosure", token, newKey(), nil)
		assert.Equal(t, "exhibit_not_found", rep.code, string(rep.body))
	})
	rep = s.do(t, http.MethodPost, base+"/evidence/"+theirs.ID+"/disclosure", s.claimant, newKey(), nil)
	require.Equal(t, http.StatusOK, rep.status, string(rep.body))
	s.unchanged(t, func() {
		rep := s.do(t, http.MethodPost, base+"/evidence/"+theirs.ID+"/disclosure", token, newKey(), nil)
		assert.Equal(t, "not_offering_side", rep.code, "the account discloses for its own side only")
		rep = s.do(t, http.MethodPost, base+"/evidence/"+ex.ID+"/authenticity-challenges", token, newKey(), map[string]any{"grounds": "mine"})
		assert.Equal(t, "own_exhibit", rep.code)
	})
	rep = s.do(t, http.MethodPost, "/api/v2/cases/"+c.id+"/evidence/"+theirs.ID+"/authenticity-challenges", token, newKey(),
		map[string]any{"grounds": "Invoice 77 was issued after the dispute began."})
	require.Equal(t, http.StatusCreated, rep.status, string(rep.body))
	assert.Equal(t, "challenged", data[exhibitActData](t, rep).Exhibit.Authenticity)

	// The claimant challenges the account's exhibit on the website family;
	// the account answers.
	rep = s.do(t, http.MethodPost, w+"evidence/"+ex.ID+"/challenge", s.claimant, newKey(), map[string]any{"grounds": "The log's clock is wrong."})
	require.Equal(t, http.StatusCreated, rep.status, string(rep.body))
	challenge := data[exhibitActData](t, rep).ChallengeID
	rep = s.do(t, http.MethodPost, base+"/evidence/"+ex.ID+"/authenticity-challenges/"+challenge+"/answer", token, newKey(),
		map[string]any{"answer": "The log is in UTC."})
	require.Equal(t, http.StatusOK, rep.status, string(rep.body))
	assert.Equal(t, "answered", data[exhibitActData](t, rep).Exhibit.Authenticity)
	for _, path := range []string{base + "/evidence/" + ex.ID + "/authenticity-challenges", "/api/v2/cases/" + c.id + "/evidence/" + ex.ID + "/authenticity-challenges",
		w + "evidence/" + ex.ID + "/challenge"} {
		rep := s.do(t, http.MethodGet, path, token, "", nil)
		require.Equal(t, http.StatusOK, rep.status, "%s: %s", path, rep.body)
		assert.Contains(t, string(rep.body), `"authenticity":"answered"`, path)
	}

	// A processing defect of the claimant's exhibit, on the website family;
	// the processing records the account reads are its side's and the
	// disclosed ones.
	rep = s.do(t, http.MethodPost, w+"evidence-processing/"+theirs.ID+"/defects", token, newKey(), map[string]any{"kind": "text_extraction", "detail": "The date is cut off."})
	require.Equal(t, http.StatusCreated, rep.status, string(rep.body))
	for _, path := range []string{base + "/evidence-processing?include=text", w + "evidence-processing"} {
		rep := s.do(t, http.MethodGet, path, token, "", nil)
		require.Equal(t, http.StatusOK, rep.status, "%s: %s", path, rep.body)
		assert.Contains(t, string(rep.body), `"sourceId":"`+ex.ID+`"`, path)
		assert.Contains(t, string(rep.body), `"The date is cut off."`, path)
	}

	// The website's upload takes the account's token too, in the website
	// envelope.
	rep = s.upload(t, w+"evidence/file", token, file("ledger.csv", "text/csv", []byte("date,amount\n2026-10-01,420.00\n")))
	require.Equal(t, http.StatusCreated, rep.status, string(rep.body))
	assert.Equal(t, "respondent", data[exhibitActData](t, rep).Exhibit.Side)

	// The record bundle is the account's to read once the record closes.
	rep = s.do(t, http.MethodGet, base+"/record-bundle", token, "", nil)
	require.Equal(t, http.StatusConflict, rep.status, string(rep.body))
	assert.Equal(t, "record_not_closed", rep.code)
}

// evidenceRoute is one route of the evidence a test sends an account
// token to.
type evidenceRoute struct {
	method, path string
	body         any
}

// Every refusal is the one the other account routes give, and changes
// nothing: a write without evidence:file and a read without cases:read is
// 403 with the insufficient_scope challenge; another account, a token
// bound to another case, another tenant's or environment's see no case;
// the account names no other side's participant, and the claimant's
// partner names none of the account's; the tribunal's resolutions refuse
// account tokens whatever their scopes.
func TestAccountTokensFileNoEvidenceTheyHaveNoAuthorityFor(t *testing.T) {
	s := newStack(t)
	token := s.accountToken(t, []auth.Scope{auth.ScopeCasesRead, auth.ScopeCasesAct, auth.ScopeEvidenceFile})
	c := s.accountInEvidence(t, token)
	base, w, v2 := "/api/cases/"+c.id, "/api/disputes/"+c.id+"/", "/api/v2/cases/"+c.id
	rep := s.upload(t, base+"/evidence", token, file("provisioning.txt", "text/plain", []byte("key issued 2026-10-01\n")))
	require.Equal(t, http.StatusCreated, rep.status, string(rep.body))
	ex := data[exhibitActData](t, rep).Exhibit.ID
	require.Equal(t, http.StatusOK, s.do(t, http.MethodPost, base+"/evidence/"+ex+"/disclosure", token, newKey(), nil).status)
	rep = s.do(t, http.MethodPost, base+"/evidence/"+ex+"/authenticity-challenges", s.claimant, newKey(), map[string]any{"grounds": "Forged."})
	require.Equal(t, http.StatusCreated, rep.status, string(rep.body))
	challenge := data[exhibitActData](t, rep).ChallengeID
	stored := s.storedKeys(t, c.id)

	writes := []evidenceRoute{
		{http.MethodPatch, base + "/evidence/" + ex, map[string]any{"description": "Renamed"}},
		{http.MethodPost, base + "/evidence/" + ex + "/disclosure", nil},
		{http.MethodPost, base + "/evidence/" + ex + "/authenticity-challenges", map[string]any{"grounds": "g"}},
		{http.MethodPost, v2 + "/evidence/" + ex + "/authenticity-challenges", map[string]any{"grounds": "g"}},
		{http.MethodPost, w + "evidence/" + ex + "/challenge", map[string]any{"grounds": "g"}},
		{http.MethodPost, base + "/evidence/" + ex + "/authenticity-challenges/" + challenge + "/answer", map[string]any{"answer": "a"}},
		{http.MethodPost, base + "/evidence-processing/" + ex + "/defects", map[string]any{"kind": "file", "detail": "d"}},
		{http.MethodPost, w + "evidence-processing/" + ex + "/defects", map[string]any{"kind": "file", "detail": "d"}},
	}
	reads := []evidenceRoute{
		{http.MethodGet, base + "/evidence", nil},
		{http.MethodGet, v2 + "/evidence-candidates", nil},
		{http.MethodGet, base + "/evidence/" + ex, nil},
		{http.MethodGet, base + "/evidence/" + ex + "/authenticity-challenges", nil},
		{http.MethodGet, v2 + "/evidence/" + ex + "/authenticity-challenges", nil},
		{http.MethodGet, w + "evidence/" + ex + "/challenge", nil},
		{http.MethodGet, base + "/evidence-processing", nil},
		{http.MethodGet, w + "evidence-processing", nil},
		{http.MethodGet, base + "/record-bundle", nil},
		{http.MethodGet, v2 + "/record-bundle", nil},
		{http.MethodGet, w + "record-bundle", nil},
	}
	actsWithoutFiling := s.accountToken(t, []auth.Scope{auth.ScopeCasesRead, auth.ScopeCasesAct, auth.ScopeReadinessBuy, auth.ScopeExecutionsReport})
	filesWithoutReading := s.accountToken(t, []auth.Scope{auth.ScopeCasesAct, auth.ScopeEvidenceFile, auth.ScopeReadinessBuy, auth.ScopeExecutionsReport})
	for _, r := range writes {
		s.refusedScope(t, r.method, r.path, actsWithoutFiling, r.body, auth.ScopeEvidenceFile)
		s.invisible(t, r.method, r.path, r.body)
	}
	for _, r := range reads {
		s.refusedScope(t, r.method, r.path, filesWithoutReading, r.body, auth.ScopeCasesRead)
		s.invisible(t, r.method, r.path, r.body)
	}

	// The upload is refused the same ways, before a byte of the file is
	// kept.
	all := []auth.Scope{auth.ScopeCasesRead, auth.ScopeCasesAct, auth.ScopeEvidenceFile, auth.ScopeReadinessBuy, auth.ScopeExecutionsReport}
	other := s.openForAccount(t)
	stranger, _ := authtest.MintAccountToken(t, s.credentials, "acct_STRANGER03", publicBase(t).String(), all)
	for _, tt := range []struct {
		name, token string
		parts       []part
		status      int
		code        string
	}{
		{"without evidence:file", actsWithoutFiling, nil, http.StatusForbidden, "forbidden"},
		{"another account", stranger, nil, http.StatusNotFound, "case_not_found_or_opening"},
		{"a token bound to another case", s.accountToken(t, all, func(r *auth.AccountTokenRequest) { r.CaseID = other.id }), nil, http.StatusNotFound, "case_not_found_or_opening"},
		{"another tenant", s.accountToken(t, all, func(r *auth.AccountTokenRequest) { r.Tenant = "tenant-other" }), nil, http.StatusNotFound, "case_not_found_or_opening"},
		{"the live environment", s.accountToken(t, all, func(r *auth.AccountTokenRequest) { r.Environment = auth.Live }), nil, http.StatusNotFound, "case_not_found_or_opening"},
		{"a token for the MCP server", s.accountToken(t, all, func(r *auth.AccountTokenRequest) { r.Audience = "https://mcp.pcourt.test" }), nil, http.StatusUnauthorized, "invalid_credential"},
		{"the account naming the claimant's participant", token, []part{field("participantId", "p-claimant")}, http.StatusForbidden, "forbidden"},
		{"the claimant's partner naming the account's participant", s.claimant, []part{field("participantId", "p-agent")}, http.StatusForbidden, "forbidden"},
	} {
		for _, path := range []string{base + "/evidence", w + "evidence/file"} {
			t.Run("upload "+tt.name+" "+path, func(t *testing.T) {
				s.unchanged(t, func() {
					parts := append(tt.parts, file("new.txt", "text/plain", []byte("a new statement\n")))
					rep := s.upload(t, path, tt.token, parts...)
					require.Equal(t, tt.status, rep.status, string(rep.body))
					require.Equal(t, tt.code, rep.code, string(rep.body))
					if tt.code == "forbidden" && tt.token == actsWithoutFiling {
						require.Equal(t, `Bearer realm="pcourt", error="insufficient_scope", scope="evidence:file"`, rep.header.Get("WWW-Authenticate"))
					}
				})
				require.Equal(t, stored, s.storedKeys(t, c.id), "nothing new in the bucket")
				s.spoolEmpty(t)
			})
		}
	}

	// Nobody acts for the account's participant but its own tokens.
	s.unchanged(t, func() {
		rep := s.do(t, http.MethodPost, base+"/evidence/"+ex+"/authenticity-challenges/"+challenge+"/answer", s.claimant, newKey(),
			map[string]any{"participantId": "p-agent", "answer": "a"})
		require.Equal(t, http.StatusForbidden, rep.status, string(rep.body))
		require.Equal(t, "forbidden", rep.code, "the claimant's partner answers for no account")
	})

	// The tribunal's resolutions are never an account's: 403 whatever the
	// token carries, no scope would help.
	every := s.accountToken(t, all)
	for _, r := range []evidenceRoute{
		{http.MethodPost, w + "evidence/" + ex + "/challenge/resolve", map[string]any{"challengeId": challenge, "decision": "dismissed", "reasons": "r"}},
		{http.MethodPost, w + "evidence-processing/" + ex + "/defects/def_1/resolve", map[string]any{"resolution": "rejected", "note": "n"}},
	} {
		s.unchanged(t, func() {
			rep := s.do(t, r.method, r.path, every, newKey(), r.body)
			require.Equal(t, http.StatusForbidden, rep.status, "%s: %s", r.path, rep.body)
			require.Equal(t, "forbidden", rep.code, r.path)
			require.Empty(t, rep.header.Get("WWW-Authenticate"), r.path)
		})
	}
}

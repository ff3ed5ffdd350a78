package httpapi_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/auth"
	"github.com/pcourt/pcourt/libs/objectstore"
	"github.com/pcourt/pcourt/libs/objectstore/s3test"
	"github.com/pcourt/pcourt/libs/outbox"
	"github.com/pcourt/pcourt/services/cases/internal/archiveflow"
)

const retention = 90 * 24 * time.Hour

// archiver is an archiver of the stack whose clock is at now.
func (s *stack) archiver(files objectstore.Store, now time.Time) *archiveflow.Archiver {
	cfg := archiveflow.DefaultConfig()
	cfg.After = retention
	return archiveflow.New(s.cases, files, cfg, "test-replica", s.logger, func() time.Time { return now })
}

// closedCase walks a quick proceeding with an exhibit to its award, makes
// the award final by both sides' consent and has the respondent report
// that it paid: nothing can happen to the case any more. It returns the
// case, its award hash, the exhibit's id and the execution's.
func (s *stack) closedCase(t *testing.T) (c opened, awardHash, exhibitID, executionID string) {
	t.Helper()
	c = s.inEvidence(t)
	base := "/api/cases/" + c.id
	rep := s.upload(t, base+"/evidence", s.claimant, field("description", "Invoice 77"), file("invoice-77.txt", "text/plain", []byte("Invoice 77: 300.00 USD for an API key that never worked.\n")))
	require.Equal(t, http.StatusCreated, rep.status, string(rep.body))
	exhibitID = data[exhibitActData](t, rep).Exhibit.ID
	for _, st := range []struct {
		path, token string
		body        any
	}{
		{base + "/submissions", s.claimant, map[string]any{"text": "Invoice 77 and twelve support tickets saying the key never worked."}},
		{base + "/submissions", s.respondent, map[string]any{"text": "Provisioning log: key issued 2026-10-01."}},
		{base + "/record-summary/confirmations", s.claimant, nil},
		{base + "/record-summary/confirmations", s.respondent, nil},
	} {
		rep := s.do(t, http.MethodPost, st.path, st.token, newKey(), st.body)
		require.Less(t, rep.status, 300, "%s: %s", st.path, rep.body)
	}
	_, err := s.scheduler.RunOnce(context.Background())
	require.NoError(t, err)
	w := "/api/disputes/" + c.id + "/"
	pkg := data[reviewPackageData](t, s.do(t, http.MethodGet, w+"review-package", s.adjudicator, "", nil))
	item := pkg.Record.Items[1]
	proposal := map[string]any{
		"outcome":   "claim_partially_upheld",
		"remedies":  []map[string]any{{"kind": "payment", "payer": "respondent", "payee": "claimant", "amountMinor": 30000, "currency": "USD", "dueBy": dueIn(30 * 24 * time.Hour)}},
		"reasons":   "The key never worked for most of the term.",
		"citations": []map[string]any{{"itemId": item.ItemID, "digest": item.Digest, "pinpoint": "tickets"}},
	}
	for _, st := range []struct {
		path, token string
		body        any
	}{
		{"synthesize-opinion", s.adjudicator, map[string]any{"runId": pkg.Run.RunID, "inputDigest": pkg.Record.Digest, "proposal": proposal}},
		{"reviewer-opinion", s.reviewer, map[string]any{"opinion": "agree"}},
		{"reviewer-attestation", s.reviewer, map[string]any{"reviewedRecord": true, "noConflict": true}},
		{"pre-award-review", s.reviewer, nil},
		{"pre-award-review", s.claimant, map[string]any{"clericalErrors": []string{}}},
		{"pre-award-review", s.respondent, map[string]any{"clericalErrors": []string{}}},
		{"signoff", s.reviewer, nil},
	} {
		rep := s.do(t, http.MethodPost, w+st.path, st.token, newKey(), st.body)
		require.Less(t, rep.status, 300, "%s: %s", st.path, rep.body)
	}
	st := data[decisionData](t, s.do(t, http.MethodGet, "/api/v2/cases/"+c.id+"/decision-status", s.claimant, "", nil))
	require.NotEmpty(t, st.AwardHash)
	s.final(t, c)
	reporter := s.grantReport(t, c, respondentPartner, auth.Respondent)
	rep = s.do(t, http.MethodPost, base+"/executions", reporter, newKey(),
		map[string]any{"mode": "party_reported", "action": "report", "awardHash": st.AwardHash, "remedyIndex": 0, "reference": "wire 2026-11-28/0042"})
	require.Equal(t, http.StatusCreated, rep.status, string(rep.body))
	return c, st.AwardHash, exhibitID, data[executionData](t, rep).ExecutionID
}

// readRoutes are the reads of a closed case, each with a credential that
// may see it.
func (s *stack) readRoutes(c opened, awardHash, exhibitID, executionID string) [][2]string {
	id := c.id
	out := [][2]string{}
	for _, p := range []string{
		"/api/cases/" + id, "/api/v2/cases/" + id, "/api/disputes/" + id,
		"/api/cases/" + id + "/participants", "/api/cases/" + id + "/events", "/api/v2/cases/" + id + "/docket",
		"/api/disputes/" + id + "/docket", "/api/cases/" + id + "/messages", "/api/cases/" + id + "/submissions",
		"/api/cases/" + id + "/record-summary", "/api/cases/" + id + "/representatives",
		"/api/v2/cases/" + id + "/decision-status",
		"/api/cases/" + id + "/award", "/api/cases/" + id + "/award?awardHash=" + awardHash, "/api/disputes/" + id + "/decision",
		"/api/cases/" + id + "/award/artifacts/json", "/api/cases/" + id + "/award/artifacts/html",
		"/api/cases/" + id + "/award/artifacts/pdf", "/api/cases/" + id + "/award/artifacts/json/attestation",
		"/api/cases/" + id + "/award/artifacts/pdf?awardHash=" + awardHash,
		"/api/cases/" + id + "/evidence",
		"/api/cases/" + id + "/record-bundle",
		"/api/cases/" + id + "/post-award-requests", "/api/cases/" + id + "/executions", "/api/executions/" + executionID,
		"/api/v2/cases/" + id + "/settlement-executions", "/api/cases/" + id + "/appeals",
		"/api/disputes", "/api/disputes?status=awarded",
	} {
		out = append(out, [2]string{p, s.claimant}, [2]string{p, s.respondent})
	}
	// The exhibit is the claimant's, never disclosed: only its side
	// downloads it.
	return append(out, [2]string{"/api/cases/" + id + "/evidence/" + exhibitID, s.claimant})
}

type answered struct {
	status      int
	contentType string
	body        string
}

// answers reads every route with one request id, so that two readings
// of the same state give the same bytes.
func (s *stack) answers(t *testing.T, routes [][2]string) []answered {
	t.Helper()
	out := make([]answered, len(routes))
	for i, r := range routes {
		rep := s.do(t, http.MethodGet, r[0], r[1], "", nil, "X-Request-Id", "req-archive-compare")
		require.Equal(t, http.StatusOK, rep.status, "%s: %s", r[0], rep.body)
		out[i] = answered{rep.status, rep.header.Get("Content-Type"), string(rep.body)}
	}
	return out
}

// caseKeys lists the Redis keys of the case's own (its hash, docket,
// documents, sessions and markers).
func (s *stack) caseKeys(t *testing.T, id string) []string {
	t.Helper()
	keys, err := s.rdb.Keys(context.Background(), "pc:cases:*:case:"+id+"*").Result()
	require.NoError(t, err)
	return keys
}

// A closed case whose retention has passed is archived: Redis keeps only
// its tombstone, every read route answers the same bytes as before, acts
// are refused with case_archived, and another partner, tenant or
// environment still sees nothing. On a directory store and on a real S3
// server.
func TestAClosedCaseIsArchivedAndReadAsBefore(t *testing.T) {
	t.Run("directory", func(t *testing.T) {
		files, err := objectstore.NewDir(t.TempDir())
		require.NoError(t, err)
		archiveAndRead(t, files)
	})
	t.Run("s3", func(t *testing.T) { archiveAndRead(t, s3test.NewStore(t)) })
}

func archiveAndRead(t *testing.T, files objectstore.Store) {
	s := newStackOn(t, files)
	ctx := context.Background()
	c, hash, exhibitID, executionID := s.closedCase(t)
	live := s.open(t, quickProceeding) // a case whose procedure runs is never archived
	routes := s.readRoutes(c, hash, exhibitID, executionID)
	before := s.answers(t, routes)

	n, err := s.archiver(files, time.Now().Add(retention-time.Hour)).Sweep(ctx)
	require.NoError(t, err)
	require.Zero(t, n, "within its retention the case stays live")
	require.Len(t, s.caseKeys(t, c.id), 3, "the case hash, its docket and its documents")

	n, err = s.archiver(files, time.Now().Add(retention+time.Hour)).Sweep(ctx)
	require.NoError(t, err)
	require.Equal(t, 1, n)

	require.Equal(t, []string{"pc:cases:" + shardTag(c.id) + ":case:" + c.id}, s.caseKeys(t, c.id), "only the tombstone is left")
	tomb, err := s.rdb.HGetAll(ctx, s.caseKeys(t, c.id)[0]).Result()
	require.NoError(t, err)
	require.ElementsMatch(t, []string{"archive", "archive-digest", "archived-version", "archived-at", "status"}, keysOf(tomb))
	require.Equal(t, "awarded", tomb["status"])
	require.Len(t, s.caseKeys(t, live.id), 2, "the live case keeps its hash and docket")
	objects, err := files.Keys(ctx, "case-archives/")
	require.NoError(t, err)
	require.Equal(t, []string{tomb["archive"]}, objects)

	after := s.answers(t, routes)
	for i := range routes {
		require.Equal(t, before[i], after[i], "GET %s answers as before", routes[i][0])
	}

	// Acts are refused, and change nothing.
	s.unchanged(t, func() {
		for _, w := range []struct{ path, token string }{
			{"/api/cases/" + c.id + "/messages", s.claimant},
			{"/api/cases/" + c.id + "/executions", s.respondent},
		} {
			rep := s.do(t, http.MethodPost, w.path, w.token, newKey(), map[string]any{"text": "after the archive"})
			require.Equal(t, http.StatusConflict, rep.status, "%s: %s", w.path, rep.body)
			require.Equal(t, "case_archived", rep.code)
		}
		// Another partner, tenant or environment is told nothing more
		// than of a live case: it does not exist for them.
		for _, token := range []string{s.stranger, s.otherTenant, s.live} {
			rep := s.do(t, http.MethodPost, "/api/cases/"+c.id+"/messages", token, newKey(), map[string]any{"text": "x"})
			require.Equal(t, http.StatusNotFound, rep.status, string(rep.body))
			require.Equal(t, "case_not_found_or_opening", rep.code)
			for _, p := range []string{"/api/cases/" + c.id, "/api/cases/" + c.id + "/award", "/api/cases/" + c.id + "/evidence/" + exhibitID, "/api/cases/" + c.id + "/events"} {
				rep := s.do(t, http.MethodGet, p, token, "", nil)
				require.Equal(t, http.StatusNotFound, rep.status, "%s: %s", p, rep.body)
			}
		}
		// A second sweep finds nothing to do.
		n, err := s.archiver(files, time.Now().Add(retention+time.Hour)).Sweep(ctx)
		require.NoError(t, err)
		require.Zero(t, n)
	})
}

func keysOf(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// shardTag is the case's hash tag, as the store of newCases names it.
func shardTag(caseID string) string {
	return outbox.Sharding{Service: "cases", Count: outbox.DefaultShards}.Tag(caseID)
}

// failingReads is an object store whose reads fail: the archiver's read
// back after its put, as if the process stopped between the two.
type failingReads struct{ objectstore.Store }

func (failingReads) Open(context.Context, string) (io.ReadCloser, objectstore.Info, error) {
	return nil, objectstore.Info{}, errors.New("the process stopped here")
}

// A stop between writing the archive and deleting the case leaves the
// case live and whole; the next sweep archives it, over the same object.
func TestAStopBeforeTheDeleteLeavesTheCaseLive(t *testing.T) {
	files, err := objectstore.NewDir(t.TempDir())
	require.NoError(t, err)
	s := newStackOn(t, files)
	ctx := context.Background()
	c, hash, exhibitID, executionID := s.closedCase(t)
	routes := s.readRoutes(c, hash, exhibitID, executionID)
	before := s.answers(t, routes)
	due := time.Now().Add(retention + time.Hour)

	n, err := s.archiver(failingReads{files}, due).Sweep(ctx)
	require.ErrorContains(t, err, "the process stopped here")
	require.Zero(t, n)
	objects, err := files.Keys(ctx, "case-archives/")
	require.NoError(t, err)
	require.Len(t, objects, 1, "the archive was written")
	require.Len(t, s.caseKeys(t, c.id), 3, "and the case is still live, whole")
	require.Equal(t, before, s.answers(t, routes))
	n, err = s.archiver(files, due).Sweep(ctx)
	require.NoError(t, err)
	require.Equal(t, 1, n)
	require.Len(t, s.caseKeys(t, c.id), 1)
	require.Equal(t, before, s.answers(t, routes), "archived over the same object, it answers as before")
}

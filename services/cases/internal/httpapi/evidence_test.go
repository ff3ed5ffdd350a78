package httpapi_test

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"io"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/api/apitest"
	"github.com/pcourt/pcourt/libs/award"
	"github.com/pcourt/pcourt/libs/objectstore/s3test"
	"github.com/pcourt/pcourt/services/cases/internal/recordbundle"
)

type exhibitData struct {
	ID           string `json:"id"`
	Side         string `json:"side"`
	FileName     string `json:"fileName"`
	MediaType    string `json:"mediaType"`
	Size         int64  `json:"size"`
	SHA256       string `json:"sha256"`
	Description  string `json:"description"`
	Disclosed    bool   `json:"disclosed"`
	Authenticity string `json:"authenticity"`
	Candidate    bool   `json:"candidate"`
}

type exhibitActData struct {
	Exhibit     exhibitData `json:"exhibit"`
	ChallengeID string      `json:"challengeId"`
	DefectID    string      `json:"defectId"`
	Events      []struct {
		Type string `json:"type"`
	} `json:"events"`
}

type exhibitsData struct {
	Exhibits []exhibitData `json:"exhibits"`
}

// part is one part of an upload form.
type part struct {
	name, fileName, contentType string
	body                        []byte
}

func file(name, contentType string, body []byte) part {
	return part{name: "file", fileName: name, contentType: contentType, body: body}
}

func field(name, value string) part { return part{name: name, body: []byte(value)} }

// upload posts a multipart form to path and validates the answer against
// the OpenAPI document.
func (s *stack) upload(t testing.TB, path, token string, parts ...part) reply {
	t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	for _, p := range parts {
		h := textproto.MIMEHeader{}
		if p.fileName != "" {
			h.Set("Content-Disposition", fmt.Sprintf(`form-data; name=%q; filename=%q`, p.name, p.fileName))
		} else {
			h.Set("Content-Disposition", fmt.Sprintf(`form-data; name=%q`, p.name))
		}
		if p.contentType != "" {
			h.Set("Content-Type", p.contentType)
		}
		w, err := mw.CreatePart(h)
		require.NoError(t, err)
		_, err = w.Write(p.body)
		require.NoError(t, err)
	}
	require.NoError(t, mw.Close())
	req, err := http.NewRequest(http.MethodPost, s.url+path, bytes.NewReader(body.Bytes()))
	require.NoError(t, err)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("Authorization", "Bearer "+token)
	resp, raw := apitest.Do(t, http.DefaultClient, req)
	return s.reply(t, resp, raw)
}

func pngOf(t testing.TB, w, h int) []byte {
	t.Helper()
	var b bytes.Buffer
	require.NoError(t, png.Encode(&b, image.NewGray(image.Rect(0, 0, w, h))))
	return b.Bytes()
}

func sha(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// inEvidence opens a quick proceeding whose respondent joined and answered:
// its evidence round is open.
func (s *stack) inEvidence(t *testing.T) opened {
	t.Helper()
	c := s.open(t, quickProceeding)
	for _, st := range []struct {
		path, token string
		body        any
	}{
		{"/api/partner-cases/" + c.id + "/respondent", s.respondent, nil},
		{"/api/cases/" + c.id + "/answer", s.respondent, map[string]any{"text": "Denied: the API was provisioned on day one."}},
	} {
		rep := s.do(t, http.MethodPost, st.path, st.token, newKey(), st.body)
		require.Less(t, rep.status, 300, "%s: %s", st.path, rep.body)
	}
	return c
}

// storedKeys lists every object the store keeps for the case.
func (s *stack) storedKeys(t testing.TB, caseID string) []string {
	t.Helper()
	keys, err := s.files.Keys(context.Background(), "cases/"+caseID+"/")
	require.NoError(t, err)
	return keys
}

func (s *stack) spoolEmpty(t testing.TB) {
	t.Helper()
	entries, err := os.ReadDir(s.spool)
	require.NoError(t, err)
	assert.Empty(t, entries, "no upload is left in the spool")
}

func TestAnExhibitIsItsSidesOwnUntilDisclosed(t *testing.T) {
	s := newStack(t)
	c := s.inEvidence(t)
	base := "/api/cases/" + c.id
	statement := []byte("Invoice 77, issued 2026-10-01, was never paid.\nTwelve tickets follow.\n")

	rep := s.upload(t, base+"/evidence", s.claimant, field("description", "Invoice 77 and the tickets"), file("invoice-77.txt", "text/plain", statement))
	require.Equal(t, http.StatusCreated, rep.status, string(rep.body))
	ex := data[exhibitActData](t, rep).Exhibit
	assert.Equal(t, "claimant", ex.Side)
	assert.Equal(t, sha(statement), ex.SHA256)
	assert.Equal(t, "text/plain", ex.MediaType)
	assert.True(t, ex.Candidate)
	assert.False(t, ex.Disclosed)
	assert.NotContains(t, s.docketTypes(t, c.id), "evidence_disclosed")

	// Before disclosure the respondent does not know the exhibit exists.
	rep = s.do(t, http.MethodGet, base+"/evidence", s.respondent, "", nil)
	require.Equal(t, http.StatusOK, rep.status)
	assert.Empty(t, data[exhibitsData](t, rep).Exhibits)
	s.unchanged(t, func() {
		rep = s.do(t, http.MethodGet, base+"/evidence/"+ex.ID, s.respondent, "", nil)
		assert.Equal(t, "exhibit_not_found", rep.code)
		rep = s.do(t, http.MethodPost, base+"/evidence/"+ex.ID+"/authenticity-challenges", s.respondent, newKey(), map[string]any{"grounds": "forged"})
		assert.Equal(t, "exhibit_not_found", rep.code)
		rep = s.do(t, http.MethodPost, base+"/evidence/"+ex.ID+"/disclosure", s.respondent, newKey(), nil)
		assert.Equal(t, "exhibit_not_found", rep.code)
	})
	// Nobody outside the case learns anything either.
	for name, token := range map[string]string{"another partner": s.stranger, "another tenant": s.otherTenant, "live": s.live} {
		rep = s.do(t, http.MethodGet, base+"/evidence/"+ex.ID, token, "", nil)
		assert.Equal(t, "case_not_found_or_opening", rep.code, name)
	}

	// A retried upload of the same bytes answers the first exhibit.
	rep = s.upload(t, base+"/evidence", s.claimant, file("invoice-77.txt", "text/plain", statement))
	require.Equal(t, http.StatusOK, rep.status, string(rep.body))
	assert.Equal(t, ex.ID, data[exhibitActData](t, rep).Exhibit.ID)
	assert.Len(t, s.storedKeys(t, c.id), 2, "the original and its text, once")

	rep = s.do(t, http.MethodPost, base+"/evidence/"+ex.ID+"/disclosure", s.claimant, newKey(), nil)
	require.Equal(t, http.StatusOK, rep.status, string(rep.body))
	assert.Contains(t, s.docketTypes(t, c.id), "evidence_disclosed")

	rep = s.do(t, http.MethodGet, base+"/evidence", s.respondent, "", nil)
	require.Len(t, data[exhibitsData](t, rep).Exhibits, 1)
	got := data[exhibitsData](t, rep).Exhibits[0]
	assert.True(t, got.Disclosed)
	assert.False(t, got.Candidate, "the other side's exhibit is no candidate of the respondent's")

	rep = s.do(t, http.MethodGet, base+"/evidence/"+ex.ID, s.respondent, "", nil)
	require.Equal(t, http.StatusOK, rep.status)
	assert.Equal(t, statement, rep.body)
	assert.Equal(t, "attachment; filename=invoice-77.txt", rep.header.Get("Content-Disposition"))
	assert.Equal(t, "nosniff", rep.header.Get("X-Content-Type-Options"))
	assert.Equal(t, "private, no-store", rep.header.Get("Cache-Control"))
	assert.Equal(t, `"`+sha(statement)+`"`, rep.header.Get("ETag"))

	// The v2 candidates route lists the caller's side's own exhibits only.
	rep = s.do(t, http.MethodGet, "/api/v2/cases/"+c.id+"/evidence-candidates", s.respondent, "", nil)
	require.Equal(t, http.StatusOK, rep.status)
	assert.Empty(t, data[exhibitsData](t, rep).Exhibits)
	rep = s.do(t, http.MethodGet, "/api/v2/cases/"+c.id+"/evidence-candidates", s.claimant, "", nil)
	assert.Len(t, data[exhibitsData](t, rep).Exhibits, 1)
}

func TestAChallengeIsFiledAnsweredAndResolvedByTheTribunal(t *testing.T) {
	s := newStack(t)
	c := s.inEvidence(t)
	base := "/api/cases/" + c.id
	rep := s.upload(t, base+"/evidence", s.respondent, file("log.png", "image/png", pngOf(t, 40, 30)))
	require.Equal(t, http.StatusCreated, rep.status, string(rep.body))
	ex := data[exhibitActData](t, rep).Exhibit
	rep = s.do(t, http.MethodPost, base+"/evidence/"+ex.ID+"/disclosure", s.respondent, newKey(), nil)
	require.Equal(t, http.StatusOK, rep.status, string(rep.body))

	s.unchanged(t, func() {
		rep = s.do(t, http.MethodPost, base+"/evidence/"+ex.ID+"/authenticity-challenges", s.respondent, newKey(), map[string]any{"grounds": "mine"})
		assert.Equal(t, "own_exhibit", rep.code)
		rep = s.do(t, http.MethodPost, "/api/disputes/"+c.id+"/evidence/"+ex.ID+"/challenge/resolve", s.claimant, newKey(), map[string]any{"challengeId": "x", "decision": "upheld", "reasons": "r"})
		assert.Equal(t, "not_tribunal_member", rep.code)
	})
	rep = s.do(t, http.MethodPost, "/api/v2/cases/"+c.id+"/evidence/"+ex.ID+"/authenticity-challenges", s.claimant, newKey(), map[string]any{"grounds": "The log's timestamps postdate the dispute."})
	require.Equal(t, http.StatusCreated, rep.status, string(rep.body))
	challenge := data[exhibitActData](t, rep).ChallengeID
	assert.Equal(t, "challenged", data[exhibitActData](t, rep).Exhibit.Authenticity)

	rep = s.do(t, http.MethodPost, base+"/evidence/"+ex.ID+"/authenticity-challenges/"+challenge+"/answer", s.claimant, newKey(), map[string]any{"answer": "mine to answer?"})
	assert.Equal(t, "not_offering_side", rep.code)
	rep = s.do(t, http.MethodPost, base+"/evidence/"+ex.ID+"/authenticity-challenges/"+challenge+"/answer", s.respondent, newKey(), map[string]any{"answer": "The log is in UTC; the dispute's dates are local."})
	require.Equal(t, http.StatusOK, rep.status, string(rep.body))

	// The record closes; the scheduler assigns the tribunal, which resolves.
	for _, st := range []struct{ path, token string }{{base + "/submissions", s.claimant}, {base + "/submissions", s.respondent}} {
		rep = s.do(t, http.MethodPost, st.path, st.token, newKey(), map[string]any{"text": "Our position."})
		require.Less(t, rep.status, 300, string(rep.body))
	}
	for _, token := range []string{s.claimant, s.respondent} {
		rep = s.do(t, http.MethodPost, base+"/record-summary/confirmations", token, newKey(), nil)
		require.Less(t, rep.status, 300, string(rep.body))
	}
	_, err := s.scheduler.RunOnce(context.Background())
	require.NoError(t, err)

	rep = s.do(t, http.MethodPost, "/api/disputes/"+c.id+"/evidence/"+ex.ID+"/challenge/resolve", s.reviewer, newKey(),
		map[string]any{"challengeId": challenge, "decision": "dismissed", "reasons": "The offsets agree with UTC."})
	require.Equal(t, http.StatusOK, rep.status, string(rep.body))
	rep = s.do(t, http.MethodGet, "/api/disputes/"+c.id+"/evidence/"+ex.ID+"/challenge", s.claimant, "", nil)
	require.Equal(t, http.StatusOK, rep.status, string(rep.body))
	assert.Contains(t, string(rep.body), `"authenticity":"authentic"`)
	types := s.docketTypes(t, c.id)
	for _, want := range []string{"evidence_disclosed", "authenticity_challenged", "authenticity_challenge_answered", "authenticity_challenge_resolved"} {
		assert.Contains(t, types, want)
	}
}

func TestProcessingDefectsAreReportedAndResolvedByTheTribunal(t *testing.T) {
	s := newStack(t)
	c := s.inEvidence(t)
	base := "/api/cases/" + c.id
	rep := s.upload(t, base+"/evidence", s.claimant, file("ledger.csv", "text/csv", []byte("date,amount\n2026-10-01,420.00\n")))
	require.Equal(t, http.StatusCreated, rep.status, string(rep.body))
	ex := data[exhibitActData](t, rep).Exhibit
	rep = s.do(t, http.MethodPatch, base+"/evidence/"+ex.ID, s.claimant, newKey(), map[string]any{"description": "The ledger of October"})
	require.Equal(t, http.StatusOK, rep.status, string(rep.body))
	assert.Equal(t, "The ledger of October", data[exhibitActData](t, rep).Exhibit.Description)

	rep = s.do(t, http.MethodGet, base+"/evidence-processing?include=text", s.claimant, "", nil)
	require.Equal(t, http.StatusOK, rep.status, string(rep.body))
	assert.Contains(t, string(rep.body), `2026-10-01,420.00`)
	rep = s.do(t, http.MethodPost, base+"/evidence-processing/"+ex.ID+"/defects", s.claimant, newKey(), map[string]any{"kind": "text_extraction", "detail": "The second row is missing."})
	require.Equal(t, http.StatusCreated, rep.status, string(rep.body))
	defect := data[exhibitActData](t, rep).DefectID
	rep = s.do(t, http.MethodPost, "/api/disputes/"+c.id+"/evidence-processing/"+ex.ID+"/defects/"+defect+"/resolve", s.claimant, newKey(), map[string]any{"resolution": "corrected", "note": "n"})
	assert.Equal(t, "not_tribunal_member", rep.code, "internal processing resolution is restricted")
}

func TestMaliciousUploadsAreRefusedAndLeaveNothing(t *testing.T) {
	s := newStack(t)
	c := s.inEvidence(t)
	path := "/api/cases/" + c.id + "/evidence"
	zip := append([]byte("PK\x03\x04"), bytes.Repeat([]byte{0}, 60)...)
	polyglot := append(pngOf(t, 4, 4), []byte("PK\x05\x06"+strings.Repeat("\x00", 18))...)
	for name, tc := range map[string]struct {
		parts []part
		code  string
	}{
		"an archive":                    {[]part{file("a.zip", "application/zip", zip)}, "exhibit_archive_refused"},
		"an image with a zip behind it": {[]part{file("p.png", "image/png", polyglot)}, "exhibit_polyglot"},
		"content not of its type":       {[]part{file("x.png", "image/png", []byte("<html><script>alert(1)</script></html>"))}, "exhibit_type_mismatch"},
		"a name with a path":            {[]part{file("../../etc/passwd.txt", "text/plain", []byte("root"))}, "exhibit_name_invalid"},
		"a name with a control":         {[]part{file("a\x01b.txt", "text/plain", []byte("x"))}, "exhibit_name_invalid"},
		"zero bytes":                    {[]part{file("empty.txt", "text/plain", nil)}, "exhibit_empty"},
		"no file":                       {[]part{field("description", "nothing")}, "invalid_evidence_act"},
		"an unknown field":              {[]part{field("owner", "me"), file("a.txt", "text/plain", []byte("x"))}, "invalid_evidence_act"},
		"another partner's credential":  {[]part{file("a.txt", "text/plain", []byte("x"))}, "case_not_found_or_opening"},
	} {
		t.Run(name, func(t *testing.T) {
			token := s.claimant
			if name == "another partner's credential" {
				token = s.stranger
			}
			s.unchanged(t, func() {
				rep := s.upload(t, path, token, tc.parts...)
				assert.Equal(t, tc.code, rep.code, string(rep.body))
			})
			assert.Empty(t, s.storedKeys(t, c.id))
			s.spoolEmpty(t)
		})
	}

	t.Run("a body over the route's limit", func(t *testing.T) {
		s.unchanged(t, func() {
			req, err := http.NewRequest(http.MethodPost, s.url+path, strings.NewReader("x"))
			require.NoError(t, err)
			req.ContentLength = 200 << 20
			req.Header.Set("Content-Type", "multipart/form-data; boundary=x")
			req.Header.Set("Authorization", "Bearer "+s.claimant)
			req.Header.Set("Expect", "100-continue")
			resp, err := http.DefaultClient.Do(req)
			if err == nil {
				defer resp.Body.Close()
				assert.Equal(t, http.StatusRequestEntityTooLarge, resp.StatusCode)
			}
		})
		assert.Empty(t, s.storedKeys(t, c.id))
	})

	t.Run("an upload cut off midway", func(t *testing.T) {
		s.unchanged(t, func() {
			pr, pw := io.Pipe()
			mw := multipart.NewWriter(pw)
			go func() {
				w, _ := mw.CreateFormFile("file", "long.txt")
				_, _ = w.Write(bytes.Repeat([]byte("a line of the statement\n"), 40000))
				pw.CloseWithError(io.ErrUnexpectedEOF) // the client goes away
			}()
			req, err := http.NewRequest(http.MethodPost, s.url+path, pr)
			require.NoError(t, err)
			req.Header.Set("Content-Type", mw.FormDataContentType())
			req.Header.Set("Authorization", "Bearer "+s.claimant)
			if resp, err := http.DefaultClient.Do(req); err == nil {
				resp.Body.Close()
				assert.GreaterOrEqual(t, resp.StatusCode, 400)
			}
		})
		assert.Empty(t, s.storedKeys(t, c.id))
		// The client is gone before the server's read fails: wait for it.
		assert.Eventually(t, func() bool {
			entries, err := os.ReadDir(s.spool)
			return err == nil && len(entries) == 0
		}, 5*time.Second, 20*time.Millisecond, "no upload is left in the spool")
	})
}

// The same walk on a real S3 server (SeaweedFS, built by make weed): the
// file is in the bucket under its key, and comes back byte for byte.
func TestExhibitsLiveInTheBucket(t *testing.T) {
	s := newStackOn(t, s3test.NewStore(t))
	c := s.inEvidence(t)
	base := "/api/cases/" + c.id
	img := pngOf(t, 640, 480)
	rep := s.upload(t, base+"/evidence", s.claimant, file("photo.png", "image/png", img))
	require.Equal(t, http.StatusCreated, rep.status, string(rep.body))
	ex := data[exhibitActData](t, rep).Exhibit
	assert.Equal(t, []string{"cases/" + c.id + "/exhibits/" + ex.ID + "/original"}, s.storedKeys(t, c.id))
	rep = s.do(t, http.MethodGet, base+"/evidence/"+ex.ID, s.claimant, "", nil)
	require.Equal(t, http.StatusOK, rep.status)
	assert.Equal(t, img, rep.body)
}

func TestTheRecordBundleIsSignedReproducibleAndNamesEveryFile(t *testing.T) {
	s := newStack(t)
	c := s.inEvidence(t)
	base := "/api/cases/" + c.id
	img := pngOf(t, 64, 48)
	rep := s.upload(t, base+"/evidence", s.respondent, file("dispatch.png", "image/png", img))
	require.Equal(t, http.StatusCreated, rep.status, string(rep.body))
	ex := data[exhibitActData](t, rep).Exhibit
	rep = s.upload(t, base+"/evidence", s.claimant, file("draft.txt", "text/plain", []byte("never disclosed")))
	require.Equal(t, http.StatusCreated, rep.status, string(rep.body))
	rep = s.do(t, http.MethodPost, base+"/evidence/"+ex.ID+"/disclosure", s.respondent, newKey(), nil)
	require.Equal(t, http.StatusOK, rep.status, string(rep.body))

	s.unchanged(t, func() {
		rep = s.do(t, http.MethodGet, base+"/record-bundle", s.claimant, "", nil)
		assert.Equal(t, "record_not_closed", rep.code)
	})
	for _, token := range []string{s.claimant, s.respondent} {
		rep = s.do(t, http.MethodPost, base+"/submissions", token, newKey(), map[string]any{"text": "Our position."})
		require.Less(t, rep.status, 300, string(rep.body))
	}
	for _, token := range []string{s.claimant, s.respondent} {
		rep = s.do(t, http.MethodPost, base+"/record-summary/confirmations", token, newKey(), nil)
		require.Less(t, rep.status, 300, string(rep.body))
	}

	first := s.do(t, http.MethodGet, base+"/record-bundle", s.claimant, "", nil)
	require.Equal(t, http.StatusOK, first.status, string(first.body))
	assert.Equal(t, "application/zip", first.header.Get("Content-Type"))
	second := s.do(t, http.MethodGet, "/api/v2/cases/"+c.id+"/record-bundle", s.respondent, "", nil)
	require.Equal(t, first.body, second.body, "the same record gives the same bytes, whoever asks")
	website := s.do(t, http.MethodGet, "/api/disputes/"+c.id+"/record-bundle", s.respondent, "", nil)
	require.Equal(t, first.body, website.body, "the website form is the same file, with no envelope")

	zr, err := zip.NewReader(bytes.NewReader(first.body), int64(len(first.body)))
	require.NoError(t, err)
	files := map[string][]byte{}
	for _, f := range zr.File {
		rc, err := f.Open()
		require.NoError(t, err)
		b, err := io.ReadAll(rc)
		rc.Close()
		require.NoError(t, err)
		files[f.Name] = b
	}
	var manifest recordbundle.Manifest
	require.NoError(t, json.Unmarshal(files["manifest.json"], &manifest))
	paths := []string{}
	for _, e := range manifest.Files {
		paths = append(paths, e.Path)
		assert.Equal(t, e.SHA256, sha(files[e.Path]), e.Path)
	}
	assert.Contains(t, paths, "exhibits/"+ex.ID+"/dispatch.png")
	assert.Contains(t, paths, "answer.txt")
	for _, p := range paths {
		assert.NotContains(t, p, "draft.txt", "an undisclosed exhibit is not in the record")
	}
	assert.Equal(t, img, files["exhibits/"+ex.ID+"/dispatch.png"])
	jwks := s.do(t, http.MethodGet, "/api/awards/keys", "", "", nil)
	_, err = award.VerifyDetached(files["manifest.json"], string(files["manifest.jws"]), jwks.body)
	require.NoError(t, err, "the manifest is signed by a published award key")

	rep = s.do(t, http.MethodGet, base+"/record-bundle", s.stranger, "", nil)
	assert.Equal(t, "case_not_found_or_opening", rep.code)
}

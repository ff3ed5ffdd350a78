package respond_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"net/url"
	"regexp"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/problem"
	"github.com/pcourt/pcourt/services/cases/internal/evidence"
	"github.com/pcourt/pcourt/services/cases/internal/evidenceflow"
	"github.com/pcourt/pcourt/services/cases/internal/httpapi"
	"github.com/pcourt/pcourt/services/cases/internal/respond"
)

// exhibitFile is the file part of an upload form.
type exhibitFile struct {
	name, contentType string
	body              []byte
}

// uploadBody is the page's upload form as a browser sends it: its fields
// in the form's order, then the file.
func uploadBody(t testing.TB, fields url.Values, f exhibitFile) (*bytes.Buffer, string) {
	t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	for _, name := range []string{"csrf", "formId", "participantId", "description"} {
		if v, ok := fields[name]; ok {
			require.NoError(t, mw.WriteField(name, v[0]))
		}
	}
	h := textproto.MIMEHeader{}
	h.Set("Content-Disposition", fmt.Sprintf(`form-data; name="file"; filename=%q`, f.name))
	h.Set("Content-Type", f.contentType)
	w, err := mw.CreatePart(h)
	require.NoError(t, err)
	_, err = w.Write(f.body)
	require.NoError(t, err)
	require.NoError(t, mw.Close())
	return &body, mw.FormDataContentType()
}

// upload posts the upload form from the page's own origin; headers are
// name, value pairs (Accept: application/json, as the page's module asks).
func (s *stack) upload(t testing.TB, caseID, session string, fields url.Values, f exhibitFile, headers ...string) reply {
	t.Helper()
	body, ct := uploadBody(t, fields, f)
	req, err := http.NewRequest(http.MethodPost, s.url+"/respond/"+caseID+"/exhibits", body)
	require.NoError(t, err)
	req.Header.Set("Content-Type", ct)
	req.Header.Set("Origin", "null")
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	if session != "" {
		req.AddCookie(&http.Cookie{Name: respond.CookieName, Value: session})
	}
	return s.send(t, req)
}

// asModule is what the page's upload module adds to the form it sends.
var asModule = []string{"Accept", "application/json"}

// storedFiles lists the keys of the exhibits' object store.
func (s *stack) storedFiles(t testing.TB) []string {
	t.Helper()
	keys, err := s.files.Keys(context.Background(), "")
	require.NoError(t, err)
	return keys
}

// nothingChanges runs act and requires Redis and the object store to be
// as they were.
func (s *stack) nothingChanges(t testing.TB, act func()) {
	t.Helper()
	before := s.storedFiles(t)
	s.unchanged(t, act)
	require.Equal(t, before, s.storedFiles(t), "a refusal stored a file")
}

var exhibitRow = regexp.MustCompile(`data-exhibit="(exh_[0-9a-f]+)"`)

// ownExhibit is the id of the case's only exhibit of the respondent's side.
func (s *stack) ownExhibit(t testing.TB, caseID string) evidence.Exhibit {
	t.Helper()
	l, err := s.cases.Load(context.Background(), caseID)
	require.NoError(t, err)
	var own []evidence.Exhibit
	for _, e := range l.Case.Evidence.Exhibits {
		if e.Side == "respondent" {
			own = append(own, e)
		}
	}
	require.Len(t, own, 1)
	return own[0]
}

var note = exhibitFile{name: "tracking.txt", contentType: "text/plain", body: []byte("Parcel 123 delivered on 2 November.\n")}

// The respondent uploads a text file on the page, sees it as its own,
// downloads it, and discloses it: the claimant's side then has it in the
// case's evidence. A double click uploads and discloses once.
func TestTheRespondentUploadsDisclosesAndDownloadsAnExhibit(t *testing.T) {
	s := newStack(t)
	o := s.open(t)
	session := s.joinAndAnswer(t, o)
	base := "/respond/" + o.id

	form := with(s.formOf(t, o, session, "upload-exhibit"), "description", "The carrier's tracking record")
	page := s.get(t, base, session)
	require.Contains(t, page.body, `accept="application/pdf,image/png,image/jpeg,text/plain,text/csv,application/json"`)
	for range 2 { // a double click
		r := s.upload(t, o.id, session, form, note)
		require.Equal(t, http.StatusSeeOther, r.status, r.body)
		require.Equal(t, base+"#exhibits", r.header.Get("Location"))
	}
	ex := s.ownExhibit(t, o.id)
	// The page's module sending the same file is answered in JSON: the
	// exhibit and its place on the page, 200 since it is there already.
	r := s.upload(t, o.id, session, form, note, asModule...)
	require.Equal(t, http.StatusOK, r.status, r.body)
	require.Equal(t, "application/json; charset=utf-8", r.header.Get("Content-Type"))
	require.JSONEq(t, `{"data": {"exhibitId": "`+ex.ID+`", "fileName": "tracking.txt", "size": `+strconv.Itoa(len(note.body))+`, "replay": true},
	  "location": "`+base+`#exhibits"}`, r.body)
	require.Equal(t, base+"#exhibits", r.header.Get("Location"))
	require.Equal(t, "tracking.txt", ex.FileName)
	require.Equal(t, "The carrier's tracking record", ex.Description)
	require.Equal(t, "p-respondent", ex.ParticipantID)
	require.False(t, ex.Disclosed(), "an upload is the side's own until disclosed")

	page = s.get(t, base, session)
	require.Equal(t, []string{ex.ID}, exhibitIDs(page.body))
	require.Contains(t, page.body, `href="`+base+`/exhibits/`+ex.ID+`"`)

	d := s.get(t, base+"/exhibits/"+ex.ID, session)
	require.Equal(t, http.StatusOK, d.status, d.body)
	require.Equal(t, string(note.body), d.body)
	sum := sha256.Sum256(note.body)
	require.Equal(t, "sha-256=:"+base64.StdEncoding.EncodeToString(sum[:])+":", d.header.Get("Repr-Digest"))
	require.Equal(t, `"`+hex.EncodeToString(sum[:])+`"`, d.header.Get("ETag"))
	require.Equal(t, `attachment; filename=tracking.txt`, d.header.Get("Content-Disposition"))
	require.Equal(t, "nosniff", d.header.Get("X-Content-Type-Options"))
	require.Equal(t, "private, no-store", d.header.Get("Cache-Control"))
	require.Equal(t, "text/plain", d.header.Get("Content-Type"))

	fields := discloseForm(t, page.body, ex.ID)
	for range 2 {
		r := s.post(t, base+"/exhibits/"+ex.ID+"/disclose", session, fields, sameOrigin...)
		require.Equal(t, http.StatusSeeOther, r.status, r.body)
	}
	ex = s.ownExhibit(t, o.id)
	require.True(t, ex.Disclosed())
	l, err := s.cases.Load(context.Background(), o.id)
	require.NoError(t, err)
	require.Equal(t, []string{ex.ID}, ids(l.Case.Evidence.Visible("claimant")), "the claimant's side sees the disclosed exhibit")
	docket := s.docket(t, o.id)
	require.Equal(t, 1, count(docket, string(evidence.EventDisclosed)), "disclosed once: %v", docket)
	require.NotContains(t, s.get(t, base, session).body, `class="disclose"`, "a disclosed exhibit offers no disclose button")
}

// The page's upload module sends the form asking for JSON: a new exhibit
// is answered 201 with its id, name, size and place on the page, which
// then lists it, exactly as the form posted without script does.
func TestTheUploadModuleIsAnsweredInJSON(t *testing.T) {
	s := newStack(t)
	o := s.open(t)
	session := s.joinAndAnswer(t, o)
	base := "/respond/" + o.id
	r := s.upload(t, o.id, session, with(s.formOf(t, o, session, "upload-exhibit"), "description", "The carrier's tracking record"), note, asModule...)
	require.Equal(t, http.StatusCreated, r.status, r.body)
	ex := s.ownExhibit(t, o.id)
	require.JSONEq(t, `{"data": {"exhibitId": "`+ex.ID+`", "fileName": "tracking.txt", "size": `+strconv.Itoa(len(note.body))+`, "replay": false},
	  "location": "`+base+`#exhibits"}`, r.body)
	require.Equal(t, base+"#exhibits", r.header.Get("Location"))
	require.Equal(t, "The carrier's tracking record", ex.Description)
	require.Equal(t, []string{ex.ID}, exhibitIDs(s.get(t, base, session).body))
	// The case page carries the bar and the regions the module fills, and
	// loads the module.
	page := s.get(t, base, session).body
	for _, want := range []string{`<progress id="upload-bar" max="1" value="0"></progress>`, `<div id="upload-progress" class="meter" hidden>`,
		`<p id="upload-status" role="status" aria-live="polite"></p>`, `<p id="upload-error" class="field-error" role="alert" hidden></p>`,
		`<script type="module" src="/respond/static/upload.js"></script>`} {
		require.Contains(t, page, want)
	}
	js := s.get(t, "/respond/static/upload.js", "")
	require.Equal(t, http.StatusOK, js.status)
	require.Equal(t, "text/javascript; charset=utf-8", js.header.Get("Content-Type"))
}

// The respondent downloads the claimant's exhibit once it is disclosed,
// and not before: an undisclosed one does not exist for it.
func TestTheOtherSidesExhibitDownloadsOnceDisclosed(t *testing.T) {
	s := newStack(t)
	o := s.open(t)
	session := s.joinAndAnswer(t, o)
	base := "/respond/" + o.id
	up, err := s.exhibits.Upload(context.Background(), o.id, evidenceflow.Upload{Side: "claimant", ParticipantID: "p-claimant",
		File: bytes.NewReader([]byte("Invoice 42: 1200 USD.\n")), DeclaredType: "text/plain", FileName: "invoice.txt"})
	require.NoError(t, err)

	s.nothingChanges(t, func() {
		r := s.get(t, base+"/exhibits/"+up.Exhibit.ID, session)
		require.Equal(t, http.StatusNotFound, r.status)
		require.Equal(t, "exhibit_not_found", r.refusal)
	})
	require.NotContains(t, s.get(t, base, session).body, up.Exhibit.ID, "the page does not list it either")

	_, _, err = s.exhibits.Act(context.Background(), o.id, evidence.Act{Kind: evidence.ActDisclose, Side: "claimant", ParticipantID: "p-claimant", ExhibitID: up.Exhibit.ID})
	require.NoError(t, err)
	page := s.get(t, base, session)
	require.Contains(t, page.body, `href="`+base+`/exhibits/`+up.Exhibit.ID+`"`)
	require.NotContains(t, page.body, `action="`+base+`/exhibits/`+up.Exhibit.ID+`/disclose"`, "only the offering side discloses")
	r := s.get(t, base+"/exhibits/"+up.Exhibit.ID, session)
	require.Equal(t, http.StatusOK, r.status, r.body)
	require.Equal(t, "Invoice 42: 1200 USD.\n", r.body)

	// The respondent may not disclose the claimant's exhibit.
	s.nothingChanges(t, func() {
		r := s.post(t, base+"/exhibits/"+up.Exhibit.ID+"/disclose", session, url.Values{"csrf": {s.csrf(t, o, session)}}, sameOrigin...)
		require.Equal(t, http.StatusForbidden, r.status, r.body)
		require.Equal(t, "not_offering_side", r.refusal)
	})
}

// Every refused upload, disclosure or download is a refusal page with its
// status and code, and leaves Redis and the object store as they were.
func TestRefusedExhibitFormsChangeNothing(t *testing.T) {
	s := newStack(t)
	o := s.open(t)
	session := s.joinAndAnswer(t, o)
	other := s.open(t)
	otherSession := s.joinAndAnswer(t, other)
	base := "/respond/" + o.id
	form := s.formOf(t, o, session, "upload-exhibit")
	zip := exhibitFile{name: "bundle.zip", contentType: "application/zip", body: append([]byte("PK\x03\x04"), make([]byte, 60)...)}

	uploads := map[string]struct {
		session string
		fields  url.Values
		file    exhibitFile
		status  int
		code    string
	}{
		"a wrong CSRF token":      {session, with(form, "csrf", "not-the-token"), note, http.StatusForbidden, "csrf_mismatch"},
		"no CSRF token":           {session, with(form, "csrf", ""), note, http.StatusForbidden, "csrf_mismatch"},
		"no form id":              {session, with(form, "formId", ""), note, http.StatusBadRequest, "invalid_act"},
		"another case's session":  {otherSession, form, note, http.StatusForbidden, "no_session"},
		"no session":              {"", form, note, http.StatusForbidden, "no_session"},
		"another participant":     {session, with(form, "participantId", "p-claimant"), note, http.StatusForbidden, "forbidden"},
		"an archive":              {session, form, zip, http.StatusUnsupportedMediaType, "exhibit_archive_refused"},
		"a file name with a path": {session, form, exhibitFile{"../../etc/passwd.txt", "text/plain", note.body}, http.StatusUnprocessableEntity, "exhibit_name_invalid"},
		"a type the file is not":  {session, form, exhibitFile{"scan.pdf", "application/pdf", note.body}, http.StatusUnsupportedMediaType, "exhibit_type_mismatch"},
	}
	for name, tc := range uploads {
		t.Run("upload: "+name, func(t *testing.T) {
			s.nothingChanges(t, func() {
				r := s.upload(t, o.id, tc.session, tc.fields, tc.file)
				require.Equal(t, tc.code, r.refusal, r.body)
				require.Equal(t, tc.status, r.status)
			})
		})
		// The page's upload module is refused the same, in words it
		// shows beside the form: a problem with the page's title and detail.
		t.Run("upload by the module: "+name, func(t *testing.T) {
			s.nothingChanges(t, func() {
				r := s.upload(t, o.id, tc.session, tc.fields, tc.file, asModule...)
				require.Equal(t, "application/problem+json", r.header.Get("Content-Type"), r.body)
				require.Equal(t, tc.status, r.status)
				require.Equal(t, problem.Body{Type: "https://pcourt.dev/problems/" + tc.code, Title: r.problem.Title, Status: tc.status,
					Code: tc.code, Detail: r.problem.Detail, RequestID: r.header.Get("X-Request-Id")}, r.problem)
				require.NotEmpty(t, r.problem.Title)
				require.NotEmpty(t, r.problem.Detail)
				require.Equal(t, "private, no-store", r.header.Get("Cache-Control"))
			})
		})
	}

	t.Run("upload: from another site", func(t *testing.T) {
		s.nothingChanges(t, func() {
			body, ct := uploadBody(t, form, note)
			req, err := http.NewRequest(http.MethodPost, s.url+base+"/exhibits", body)
			require.NoError(t, err)
			req.Header.Set("Content-Type", ct)
			req.Header.Set("Origin", "https://evil.example")
			req.AddCookie(&http.Cookie{Name: respond.CookieName, Value: session})
			r := s.send(t, req)
			require.Equal(t, http.StatusForbidden, r.status)
			require.Equal(t, "cross_origin", r.refusal)
		})
	})

	for _, accept := range []string{"", "application/json"} {
		t.Run("upload: a form announcing more than the upload limit, accepting "+accept, func(t *testing.T) {
			s.nothingChanges(t, func() {
				req, err := http.NewRequest(http.MethodPost, s.url+base+"/exhibits", io.LimitReader(zeros{}, respond.MaxUploadBytes+1))
				require.NoError(t, err)
				req.ContentLength = respond.MaxUploadBytes + 1
				req.Header.Set("Content-Type", "multipart/form-data; boundary=x")
				req.Header.Set("Origin", "null")
				if accept != "" {
					req.Header.Set("Accept", accept)
				}
				req.AddCookie(&http.Cookie{Name: respond.CookieName, Value: session})
				r := s.send(t, req)
				require.Equal(t, http.StatusRequestEntityTooLarge, r.status)
				require.Equal(t, "too_large", r.refusal)
				require.Equal(t, accept != "", r.problem.Code == "too_large", "a problem only when asked for: %s", r.body)
			})
		})
	}

	// One exhibit of the session's own case, and one of the other case.
	require.Equal(t, http.StatusSeeOther, s.upload(t, o.id, session, form, note).status)
	own := s.ownExhibit(t, o.id)
	require.Equal(t, http.StatusSeeOther, s.upload(t, other.id, otherSession, s.formOf(t, other, otherSession, "upload-exhibit"), note).status)
	theirs := s.ownExhibit(t, other.id)

	downloads := map[string]struct {
		session, path string
	}{
		"another case's session":     {otherSession, base + "/exhibits/" + own.ID},
		"no session":                 {"", base + "/exhibits/" + own.ID},
		"an exhibit of another case": {session, base + "/exhibits/" + theirs.ID},
		"an unknown exhibit":         {session, base + "/exhibits/exh_00000000000000000000"},
	}
	for name, tc := range downloads {
		t.Run("download: "+name, func(t *testing.T) {
			s.nothingChanges(t, func() {
				r := s.get(t, tc.path, tc.session)
				require.Equal(t, http.StatusNotFound, r.status, r.body)
				require.Equal(t, "exhibit_not_found", r.refusal)
				require.NotContains(t, r.body, string(note.body))
			})
		})
	}

	disclosures := map[string]struct {
		session string
		fields  url.Values
		path    string
		status  int
		code    string
	}{
		"a wrong CSRF token":         {session, url.Values{"csrf": {"nope"}}, base + "/exhibits/" + own.ID + "/disclose", http.StatusForbidden, "csrf_mismatch"},
		"another case's session":     {otherSession, url.Values{"csrf": {s.csrf(t, other, otherSession)}}, base + "/exhibits/" + own.ID + "/disclose", http.StatusForbidden, "no_session"},
		"an unknown exhibit":         {session, url.Values{"csrf": {s.csrf(t, o, session)}}, base + "/exhibits/exh_00000000000000000000/disclose", http.StatusNotFound, "exhibit_not_found"},
		"an exhibit of another case": {session, url.Values{"csrf": {s.csrf(t, o, session)}}, base + "/exhibits/" + theirs.ID + "/disclose", http.StatusNotFound, "exhibit_not_found"},
	}
	for name, tc := range disclosures {
		t.Run("disclose: "+name, func(t *testing.T) {
			s.nothingChanges(t, func() {
				r := s.post(t, tc.path, tc.session, tc.fields, sameOrigin...)
				require.Equal(t, tc.code, r.refusal, r.body)
				require.Equal(t, tc.status, r.status)
			})
		})
	}
}

// The page takes the same largest upload as the API.
func TestThePageTakesTheAPIsUploadLimit(t *testing.T) {
	require.Equal(t, int64(httpapi.MaxUploadBytes), int64(respond.MaxUploadBytes))
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

func exhibitIDs(body string) []string {
	var out []string
	for _, m := range exhibitRow.FindAllStringSubmatch(body, -1) {
		out = append(out, m[1])
	}
	return out
}

func ids(exhibits []evidence.Exhibit) []string {
	var out []string
	for _, e := range exhibits {
		out = append(out, e.ID)
	}
	return out
}

func count(types []string, t string) int {
	n := 0
	for _, x := range types {
		if x == t {
			n++
		}
	}
	return n
}

// discloseForm reads the hidden fields of the disclose form of exhibit id
// on the case page.
func discloseForm(t testing.TB, page, id string) url.Values {
	t.Helper()
	m := regexp.MustCompile(`(?s)<form class="disclose" method="post" action="[^"]*/exhibits/` + id + `/disclose">(.*?)</form>`).FindStringSubmatch(page)
	require.NotNil(t, m, "the page offers to disclose %s", id)
	v := url.Values{}
	for _, f := range regexp.MustCompile(`<input type="hidden" name="([a-zA-Z]+)" value="([^"]*)">`).FindAllStringSubmatch(m[1], -1) {
		v.Set(f[1], f[2])
	}
	require.Equal(t, "p-respondent", v.Get("participantId"))
	return v
}

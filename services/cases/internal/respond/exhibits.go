// Exhibits on the hosted page: a joined respondent uploads a file as an
// exhibit of its side, discloses one of its side's exhibits, and downloads
// its own exhibits and the other side's disclosed ones. Each goes through
// internal/evidenceflow, the use cases the API's exhibit routes call, so a
// file is checked, stored and recorded exactly as the API does it, and the
// docket records the same events.
//
// The upload is the one form that is not application/x-www-form-urlencoded
// and not bounded by MaxBodyBytes: a multipart body up to MaxUploadBytes,
// streamed to evidenceflow (never held in memory). Its csrf, formId,
// participantId and description fields come before the file, so the form
// is refused before a byte of the file is read when any of them is wrong.
// The page's module (static/upload.js) sends the same form with
// XMLHttpRequest to show its progress, asking for JSON (answerJSON): the
// exhibit's place on the page, or the refusal as a problem it shows beside
// the form.

package respond

import (
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/pcourt/pcourt/libs/webpage"
	"github.com/pcourt/pcourt/services/cases/internal/caseflow"
	"github.com/pcourt/pcourt/services/cases/internal/evidence"
	"github.com/pcourt/pcourt/services/cases/internal/evidenceflow"
	"github.com/pcourt/pcourt/services/cases/internal/exhibitfile"
	"github.com/pcourt/pcourt/services/cases/internal/procedure"
	"github.com/pcourt/pcourt/services/cases/internal/store"
)

const (
	// MaxUploadBytes bounds the upload form: the largest file any rules
	// version takes plus the form's other fields and framing. It is
	// httpapi.MaxUploadBytes, repeated so the page does not import the
	// API's handlers; a test holds the two equal.
	MaxUploadBytes = 100<<20 + 1<<20
	// uploadTimeout is how long one upload may take to arrive, as the
	// API's upload route allows.
	uploadTimeout = 15 * time.Minute
	// maxUploadField bounds each of the upload form's fields other than
	// the file (a description, the tokens).
	maxUploadField = 16 << 10
)

// uploadAccept is the file input's accept attribute: the media types
// exhibitfile accepts. It only guides the browser's file picker; the
// file's checks are exhibitfile's.
func uploadAccept() string {
	var types []string
	for _, t := range exhibitfile.DefaultAllowed() {
		types = append(types, string(t))
	}
	return strings.Join(types, ",")
}

// uploadLimit refuses an upload whose Content-Length is over
// MaxUploadBytes with the page's refusal, before httpserver.StreamedBody
// would answer the API's problem for it.
func (p *page) uploadLimit(c *gin.Context) {
	if c.Request.ContentLength > MaxUploadBytes {
		p.refuse(c, refusal{Status: http.StatusRequestEntityTooLarge, Code: "too_large", CaseID: caseIDOrEmpty(c.Param("caseId")),
			Title: "The file is too large", Detail: fmt.Sprintf("An upload may hold at most %d MiB. Nothing was filed.", MaxUploadBytes>>20)})
		c.Abort()
		return
	}
	c.Next()
}

// uploadForm is the upload form's fields, read before its file.
type uploadForm struct {
	csrf, formID, participantID, description string
	file                                     *multipart.Part
}

// readUploadForm reads the form's fields up to the part "file", which it
// leaves unread.
func readUploadForm(r *http.Request) (uploadForm, error) {
	var f uploadForm
	mr, err := r.MultipartReader()
	if err != nil {
		return f, errors.New("the form is not multipart/form-data")
	}
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			return f, errors.New("the form holds no file")
		}
		if err != nil {
			return f, fmt.Errorf("the form is malformed or was cut off: %w", err)
		}
		if part.FormName() == "file" {
			f.file = part
			return f, nil
		}
		b, err := io.ReadAll(io.LimitReader(part, maxUploadField+1))
		if err != nil || len(b) > maxUploadField {
			return f, fmt.Errorf("the field %q is unreadable or over %d KiB", part.FormName(), maxUploadField>>10)
		}
		switch part.FormName() {
		case webpage.CSRFField:
			f.csrf = string(b)
		case "formId":
			f.formID = string(b)
		case "participantId":
			f.participantID = string(b)
		case "description":
			f.description = strings.ReplaceAll(string(b), "\r\n", "\n")
		default:
			return f, fmt.Errorf("the form has an unknown field %q", part.FormName())
		}
	}
}

// uploadExhibit answers POST /respond/{caseId}/exhibits: the guard of
// every form (origin, session, CSRF) on the fields before the file, then
// the upload through evidenceflow, which refuses what the case cannot take
// before it reads the file. A file sent twice (the same bytes under the
// same name: a double click) is evidenceflow's replay and changes nothing;
// formId only tells a form the page rendered from any other.
func (p *page) uploadExhibit(c *gin.Context) {
	id := c.Param("caseId")
	if !procedure.ValidCaseID(id) {
		p.refuse(c, refusalNotFound(id))
		return
	}
	if !p.site.SameOrigin(c.Request) {
		p.refuse(c, refusalCrossOrigin(id))
		return
	}
	v, ok := p.viewerOrRefuse(c, id)
	if !ok {
		return
	}
	f, err := readUploadForm(c.Request)
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		p.refuse(c, refusal{Status: http.StatusRequestEntityTooLarge, Code: "bad_form", CaseID: id, Back: p.pagePath(id),
			Title: "The form could not be read", Detail: "The form is over the upload limit. Nothing was filed."})
		return
	case err != nil:
		p.refuse(c, refusal{Status: http.StatusBadRequest, Code: "bad_form", CaseID: id, Back: p.pagePath(id),
			Title: "The form could not be read", Detail: "The upload form could not be read: " + err.Error() + ". Nothing was filed."})
		return
	}
	if !v.csrfMatches(f.csrf) {
		p.refuse(c, refusalCSRF(p, id))
		return
	}
	if !formIDPattern.MatchString(f.formID) || !strings.HasPrefix(f.formID, "upl_") {
		p.refuse(c, refusal{Status: http.StatusBadRequest, Code: string(procedure.CodeInvalidAct), CaseID: id, Back: p.pagePath(id),
			Title: "The form cannot be sent", Detail: "The form lacks the id the page gives it. Nothing was filed: reload the case and try again."})
		return
	}
	ctx := c.Request.Context()
	l, err := p.cases.Load(ctx, id)
	if err != nil {
		p.fail(c, id, err)
		return
	}
	pid, r := p.joinedActor(l.Case, v, f.participantID)
	if r != nil {
		p.refuse(c, *r)
		return
	}
	up, err := p.exhibits.Upload(ctx, id, evidenceflow.Upload{Side: string(procedure.Respondent), ParticipantID: pid, File: f.file,
		DeclaredType: f.file.Header.Get("Content-Type"), FileName: sentFileName(f.file), Description: f.description})
	if err != nil {
		p.refuseEvidence(c, id, err)
		return
	}
	p.logger.InfoContext(ctx, "exhibit uploaded", "case_id", id, "exhibit", up.Exhibit.ID, "bytes", up.Exhibit.Size, "replay", up.Replay,
		"form", f.formID, "by", "hosted respondent page")
	where := p.pagePath(id) + "#exhibits"
	if c.GetBool(jsonAnswersKey) {
		// The module's answer: where the exhibit now is on the page, 201
		// for a new one and 200 for the same file sent again, as the API.
		status := http.StatusCreated
		if up.Replay {
			status = http.StatusOK
		}
		c.Header("Location", where)
		c.JSON(status, uploadAnswer{Location: where, Data: uploadedView{ExhibitID: up.Exhibit.ID, FileName: up.Exhibit.FileName,
			Size: up.Exhibit.Size, Replay: up.Replay}})
		return
	}
	c.Redirect(http.StatusSeeOther, where)
}

// uploadAnswer is the JSON answer to the upload module: the exhibit, and
// the page that lists it.
type uploadAnswer struct {
	Data     uploadedView `json:"data"`
	Location string       `json:"location"`
}

type uploadedView struct {
	ExhibitID string `json:"exhibitId"`
	FileName  string `json:"fileName"`
	Size      int64  `json:"size"`
	Replay    bool   `json:"replay"`
}

// sentFileName is the file name exactly as the browser sent it.
// multipart.Part.FileName keeps only its last path element, which would
// silently rename "../../etc/passwd.txt" instead of refusing it: the
// checks of internal/exhibitfile must see what was sent.
func sentFileName(p *multipart.Part) string {
	_, params, err := mime.ParseMediaType(p.Header.Get("Content-Disposition"))
	if err != nil {
		return ""
	}
	return params["filename"]
}

// discloseExhibit answers POST /respond/{caseId}/exhibits/{exhibitId}/disclose:
// one of the side's exhibits goes into the record. An exhibit already
// disclosed is where the form wants it (a form sent twice) and goes back
// to the case page.
func (p *page) discloseExhibit(c *gin.Context) {
	id, ok := p.guard(c)
	if !ok {
		return
	}
	exhibitID := c.Param("exhibitId")
	ctx := c.Request.Context()
	l, err := p.cases.Load(ctx, id)
	if err != nil {
		p.fail(c, id, err)
		return
	}
	pid, r := p.joinedActor(l.Case, viewerFrom(c), c.Request.PostForm.Get("participantId"))
	if r != nil {
		p.refuse(c, *r)
		return
	}
	if ex, found := l.Case.Evidence.Exhibit(exhibitID); found && ex.Side == string(procedure.Respondent) && ex.Disclosed() {
		c.Redirect(http.StatusSeeOther, p.pagePath(id)+"#exhibits")
		return
	}
	_, _, err = p.exhibits.Act(ctx, id, evidence.Act{Kind: evidence.ActDisclose, Side: string(procedure.Respondent), ParticipantID: pid, ExhibitID: exhibitID})
	if err != nil {
		p.refuseEvidence(c, id, err)
		return
	}
	p.logger.InfoContext(ctx, "evidence act accepted", "case_id", id, "act", evidence.ActDisclose, "exhibit", exhibitID,
		"by", "hosted respondent page")
	c.Redirect(http.StatusSeeOther, p.pagePath(id)+"#exhibits")
}

// downloadExhibit answers GET /respond/{caseId}/exhibits/{exhibitId}: the
// original file of an exhibit the respondent's side may see (its own, or
// the other side's once disclosed), with the headers the API's download
// sends: an attachment no browser renders or sniffs and no cache keeps.
// An exhibit the side may not see does not exist for it: 404, as for an
// unknown id, and so is any exhibit without a session of the case. Links
// are plain GETs, so only the session is checked.
func (p *page) downloadExhibit(c *gin.Context) {
	id := c.Param("caseId")
	if !procedure.ValidCaseID(id) {
		p.refuse(c, refusalNotFound(id))
		return
	}
	notFound := refusal{Status: http.StatusNotFound, Code: string(evidence.CodeExhibitNotFound), CaseID: id, Back: p.pagePath(id),
		Title: "No such exhibit", Detail: "This case has no exhibit by that id that this browser's session may see."}
	v, err := p.viewer(c, id)
	if err != nil {
		p.fail(c, id, err)
		return
	}
	if !v.any() {
		// Without a session of this case (none, an ended one, another
		// case's) nothing tells whether the exhibit exists.
		p.refuse(c, notFound)
		return
	}
	ctx := c.Request.Context()
	l, err := p.cases.Load(ctx, id)
	if err != nil {
		p.fail(c, id, err)
		return
	}
	if !v.hasHosted && len(v.actable(l.Case)) == 0 {
		// An account session of nobody in this case.
		p.refuse(c, notFound)
		return
	}
	ex, found := l.Case.Evidence.Exhibit(c.Param("exhibitId"))
	if !found || !ex.VisibleTo(string(procedure.Respondent)) {
		p.refuse(c, notFound)
		return
	}
	body, err := p.exhibits.Open(ctx, id, ex)
	if err != nil {
		p.fail(c, id, err)
		return
	}
	defer body.Close()
	sum, _ := hex.DecodeString(ex.SHA256)
	hdr := c.Writer.Header()
	hdr.Set("Content-Type", ex.MediaType)
	hdr.Set("Content-Length", strconv.FormatInt(ex.Size, 10))
	hdr.Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": ex.FileName}))
	hdr.Set("X-Content-Type-Options", "nosniff")
	hdr.Set("Cache-Control", "private, no-store")
	hdr.Set("Content-Security-Policy", "default-src 'none'; sandbox")
	hdr.Set("Repr-Digest", "sha-256=:"+base64.StdEncoding.EncodeToString(sum)+":")
	hdr.Set("ETag", `"`+ex.SHA256+`"`)
	c.Status(http.StatusOK)
	if _, err := io.Copy(c.Writer, body); err != nil {
		// The status is sent: the browser sees a body shorter than its
		// Content-Length, which is how HTTP says the transfer broke.
		p.logger.WarnContext(ctx, "exhibit download broke off", "case_id", id, "exhibit", ex.ID, "err", err)
	}
}

// joinedActor is the respondent participant an evidence form acts for
// (actor), which must have joined: the evidence is a joined side's.
func (p *page) joinedActor(c procedure.Case, v viewer, named string) (string, *refusal) {
	pid, r := p.actor(c, v, named)
	if r != nil {
		return "", r
	}
	if pt, ok := c.Participant(pid); !ok || !pt.Joined() {
		return "", &refusal{Status: http.StatusForbidden, Code: string(procedure.CodeNotAParticipant), CaseID: c.ID, Back: p.pagePath(c.ID),
			Title: "Join the case first", Detail: "Only a participant that joined the case offers exhibits. Nothing was filed."}
	}
	return pid, nil
}

// refuseEvidence answers an error of evidenceflow: a refusal of the file
// (exhibitfile) or of the case (evidence, caseflow) as a refusal page with
// its status and code; anything else as the page's failure.
func (p *page) refuseEvidence(c *gin.Context, id string, err error) {
	if errors.Is(err, store.ErrNotFound) {
		p.refuse(c, refusalNotFound(id))
		return
	}
	pr := evidenceflow.Problem(err)
	if pr == nil {
		pr = caseflow.Problem(err)
	}
	if pr == nil || pr.Code.Status >= 500 {
		p.fail(c, id, err)
		return
	}
	p.refuse(c, refusal{Status: pr.Code.Status, Code: pr.Code.Name, CaseID: id, Back: p.pagePath(id),
		Title: pr.Code.Title, Detail: pr.Detail + " Nothing was filed."})
}

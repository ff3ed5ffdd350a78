package httpapi

import (
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"slices"
	"strconv"

	"github.com/gin-gonic/gin"

	"github.com/pcourt/pcourt/libs/auth"
	"github.com/pcourt/pcourt/libs/problem"
	"github.com/pcourt/pcourt/libs/requestid"
	"github.com/pcourt/pcourt/services/cases/internal/evidence"
	"github.com/pcourt/pcourt/services/cases/internal/evidenceflow"
	"github.com/pcourt/pcourt/services/cases/internal/procedure"
	"github.com/pcourt/pcourt/services/cases/internal/store"
)

// The evidence's reads and commands (docs/evidence.md): exhibits as
// files, their disclosure, descriptions, authenticity challenges and
// processing defects. Who sees an exhibit is decided here, in one place
// (exhibitsFor): a side sees its own exhibits and the other side's
// disclosed ones; the tribunal and any other caller who sees the case,
// the disclosed ones. An exhibit the caller may not see does not exist for
// it: 404 exhibit_not_found, exactly as for an unknown id.

type (
	exhibitView struct {
		ID            string `json:"id"`
		Side          string `json:"side"`
		ParticipantID string `json:"participantId"`
		FileName      string `json:"fileName"`
		MediaType     string `json:"mediaType"`
		Size          int64  `json:"size"`
		SHA256        string `json:"sha256"`
		Description   string `json:"description"`
		UploadedAt    string `json:"uploadedAt"`
		Disclosed     bool   `json:"disclosed"`
		DisclosedAt   string `json:"disclosedAt,omitempty"`
		Authenticity  string `json:"authenticity"`
		// Candidate says the exhibit is the caller's side's and not yet
		// disclosed: a candidate for adoption into the record.
		Candidate bool   `json:"candidate"`
		Download  string `json:"download"`
	}
	exhibitsView struct {
		CaseID   string        `json:"caseId"`
		Exhibits []exhibitView `json:"exhibits"`
	}
	exhibitActView struct {
		CaseID       string      `json:"caseId"`
		Exhibit      exhibitView `json:"exhibit"`
		ChallengeID  string      `json:"challengeId,omitempty"`
		DefectID     string      `json:"defectId,omitempty"`
		Events       []eventRef  `json:"events"`
		LastSequence int64       `json:"lastSequence"`
	}
	authenticityChallengeView struct {
		ID         string `json:"id"`
		ExhibitID  string `json:"exhibitId"`
		Side       string `json:"side"`
		Grounds    string `json:"grounds"`
		FiledAt    string `json:"filedAt"`
		Status     string `json:"status"`
		Answer     string `json:"answer,omitempty"`
		AnsweredAt string `json:"answeredAt,omitempty"`
		Reasons    string `json:"reasons,omitempty"`
		ResolvedAt string `json:"resolvedAt,omitempty"`
	}
	authenticityChallengesView struct {
		CaseID       string                      `json:"caseId"`
		ExhibitID    string                      `json:"exhibitId"`
		Authenticity string                      `json:"authenticity"`
		Challenges   []authenticityChallengeView `json:"challenges"`
	}
	defectView struct {
		ID         string `json:"id"`
		Side       string `json:"side"`
		Kind       string `json:"kind"`
		Detail     string `json:"detail"`
		ReportedAt string `json:"reportedAt"`
		Resolution string `json:"resolution,omitempty"`
		Note       string `json:"note,omitempty"`
		ResolvedAt string `json:"resolvedAt,omitempty"`
	}
	processingView struct {
		SourceID      string       `json:"sourceId"`
		Side          string       `json:"side"`
		MediaType     string       `json:"mediaType"`
		PageCount     int          `json:"pageCount"`
		TextChars     int          `json:"textChars"`
		TextDigest    string       `json:"textDigest,omitempty"`
		TextTruncated bool         `json:"textTruncated"`
		Text          *string      `json:"text,omitempty"`
		Description   string       `json:"description"`
		Edited        bool         `json:"descriptionEdited"`
		Defects       []defectView `json:"defects"`
	}
	processingListView struct {
		CaseID  string           `json:"caseId"`
		Records []processingView `json:"records"`
	}
)

func toExhibitView(caseID string, e evidence.Exhibit, viewerSides []string) exhibitView {
	v := exhibitView{ID: e.ID, Side: e.Side, ParticipantID: e.ParticipantID, FileName: e.FileName, MediaType: e.MediaType, Size: e.Size,
		SHA256: e.SHA256, Description: e.Description, UploadedAt: ts(e.UploadedAt), Disclosed: e.Disclosed(), Authenticity: string(e.Authenticity),
		Candidate: !e.Disclosed() && slices.Contains(viewerSides, e.Side), Download: "/api/cases/" + caseID + "/evidence/" + e.ID}
	if e.Disclosed() {
		v.DisclosedAt = ts(e.DisclosedAt)
	}
	return v
}

// viewerSides are the sides of the case the credential acts for: none for
// a tribunal member or a partner that only filed the case.
func (h *handlers) viewerSides(c *gin.Context, cred auth.Credential, cs procedure.Case) ([]string, error) {
	st, err := h.standing(c.Request.Context(), cred, cs, c.GetHeader(auth.CapabilityHeader))
	if err != nil {
		return nil, err
	}
	var sides []string
	for _, s := range []procedure.Side{procedure.Claimant, procedure.Respondent} {
		if st.actsForSide(cs, s) {
			sides = append(sides, string(s))
		}
	}
	return sides, nil
}

// exhibitsFor returns the exhibits the caller may see, in upload order,
// and the sides it acts for.
func (h *handlers) exhibitsFor(c *gin.Context, cred auth.Credential, cs procedure.Case) ([]evidence.Exhibit, []string, error) {
	sides, err := h.viewerSides(c, cred, cs)
	if err != nil {
		return nil, nil, err
	}
	var out []evidence.Exhibit
	for _, e := range cs.Evidence.Exhibits {
		if e.Disclosed() || slices.Contains(sides, e.Side) {
			out = append(out, e)
		}
	}
	return out, sides, nil
}

// exhibitFor returns one exhibit the caller may see, or exhibit_not_found.
func (h *handlers) exhibitFor(c *gin.Context, cred auth.Credential, cs procedure.Case, id string) (evidence.Exhibit, []string, error) {
	visible, sides, err := h.exhibitsFor(c, cred, cs)
	if err != nil {
		return evidence.Exhibit{}, nil, err
	}
	for _, e := range visible {
		if e.ID == id {
			return e, sides, nil
		}
	}
	return evidence.Exhibit{}, nil, &evidence.RefusalError{Code: evidence.CodeExhibitNotFound,
		Detail: fmt.Sprintf("Case %s has no exhibit %s visible to this credential.", cs.ID, problem.Clip(id))}
}

// listEvidence answers GET /api/cases/{id}/evidence: own-side exhibits,
// the other side's once disclosed.
func (h *handlers) listEvidence(c *gin.Context) { h.exhibitList(c, false) }

// listCandidates answers the v2 evidence-candidates route: the caller's
// side's own exhibits only, each saying whether it is still a candidate
// for adoption into the record.
func (h *handlers) listCandidates(c *gin.Context) { h.exhibitList(c, true) }

func (h *handlers) exhibitList(c *gin.Context, ownSideOnly bool) {
	cred, l, err := h.load(c, caseID(c))
	if err != nil {
		_ = c.Error(err)
		return
	}
	visible, sides, err := h.exhibitsFor(c, cred, l.Case)
	if err != nil {
		_ = c.Error(err)
		return
	}
	v := exhibitsView{CaseID: l.Case.ID, Exhibits: []exhibitView{}}
	for _, e := range visible {
		if !ownSideOnly || slices.Contains(sides, e.Side) {
			v.Exhibits = append(v.Exhibits, toExhibitView(l.Case.ID, e, sides))
		}
	}
	private(c, v)
}

// The upload's form fields, read before the file part; their bounds.
const (
	maxFormFieldBytes = 16 << 10
	// MaxUploadBytes bounds an upload request: the largest file any
	// rules version takes plus the form's other fields and framing.
	MaxUploadBytes = 100<<20 + 1<<20
)

// uploadExhibit answers POST /api/cases/{id}/evidence and the website's
// evidence/file: a multipart/form-data body with the optional fields
// participantId and description first, then the part "file". The file is
// streamed to internal/exhibitfile, never held in memory; the case's
// checks that need no file run before its first byte is read.
func (h *handlers) uploadExhibit(c *gin.Context) {
	cred, l, err := h.load(c, caseID(c))
	if err != nil {
		_ = c.Error(err)
		return
	}
	mr, err := c.Request.MultipartReader()
	if err != nil {
		_ = c.Error(problem.Newf(problem.UnsupportedMediaType, "Send the exhibit as multipart/form-data: the fields participantId and description (both optional), then the part \"file\" with its file name and Content-Type."))
		return
	}
	var participantID, description string
	var file io.Reader
	var declared, name string
	for file == nil {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			_ = c.Error(evidenceInvalid("the form has no part \"file\""))
			return
		}
		if err != nil {
			_ = c.Error(evidenceInvalid("the multipart body is malformed or was cut off: " + err.Error()))
			return
		}
		switch part.FormName() {
		case "participantId", "description":
			b, err := io.ReadAll(io.LimitReader(part, maxFormFieldBytes+1))
			if err != nil || len(b) > maxFormFieldBytes {
				_ = c.Error(evidenceInvalid(fmt.Sprintf("the form field %s is unreadable or over %d bytes", part.FormName(), maxFormFieldBytes)))
				return
			}
			if part.FormName() == "participantId" {
				participantID = string(b)
			} else {
				description = string(b)
			}
		case "file":
			file, declared, name = part, part.Header.Get("Content-Type"), sentFileName(part)
		default:
			_ = c.Error(evidenceInvalid(fmt.Sprintf("unknown form field %q: the form takes participantId, description and file", problem.Clip(part.FormName()))))
			return
		}
	}
	side, pid, err := h.evidenceActor(c, cred, l.Case, participantID)
	if err != nil {
		_ = c.Error(err)
		return
	}
	up, err := h.evidence.Upload(c.Request.Context(), l.Case.ID, evidenceflow.Upload{Side: side, ParticipantID: pid, File: file,
		DeclaredType: declared, FileName: name, Description: description})
	if errors.Is(err, store.ErrNotFound) {
		err = notVisible(l.Case.ID)
	}
	if err != nil {
		_ = c.Error(err)
		return
	}
	status := http.StatusCreated
	if up.Replay {
		status = http.StatusOK
	}
	h.logger.InfoContext(c.Request.Context(), "exhibit uploaded", "case_id", l.Case.ID, "exhibit", up.Exhibit.ID, "bytes", up.Exhibit.Size,
		"replay", up.Replay, "credential", cred.PublicID)
	last := up.Result.FirstSequence + int64(len(up.Result.Events)) - 1
	c.Header("Cache-Control", "no-store")
	c.JSON(status, gin.H{"data": exhibitActView{CaseID: l.Case.ID, Exhibit: toExhibitView(l.Case.ID, up.Exhibit, []string{side}),
		Events: eventRefs(l.Case.ID, up.Result.FirstSequence, up.Result.Events), LastSequence: last}, "requestId": requestid.Get(c)})
}

// sentFileName is the file name exactly as the client sent it.
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

// evidenceActor resolves the side and participant a side's evidence act
// is taken for (actor, and the participant must have joined).
func (h *handlers) evidenceActor(c *gin.Context, cred auth.Credential, cs procedure.Case, participantID string) (side, pid string, err error) {
	id, _, err := h.actor(c, cred, cs, anySide, participantID)
	if err != nil {
		return "", "", err
	}
	p, ok := cs.Participant(id)
	if !ok || !p.Joined() {
		return "", "", caseflowRefusal(procedure.CodeNotAParticipant, "case "+cs.ID+" has no joined participant "+id)
	}
	return string(p.Side), p.ID, nil
}

func evidenceInvalid(detail string) error {
	return &evidence.RefusalError{Code: evidence.CodeInvalidAct, Detail: detail}
}

// downloadExhibit answers GET /api/cases/{id}/evidence/{evidenceId}: the
// authorised original, streamed, with its digest; an attachment that a
// browser never renders or sniffs, and that no cache keeps.
func (h *handlers) downloadExhibit(c *gin.Context) {
	cred, l, err := h.load(c, caseID(c))
	if err != nil {
		_ = c.Error(err)
		return
	}
	ex, _, err := h.exhibitFor(c, cred, l.Case, c.Param("evidenceId"))
	if err != nil {
		_ = c.Error(err)
		return
	}
	body, err := h.evidence.Open(c.Request.Context(), l.Case.ID, ex)
	if err != nil {
		_ = c.Error(err)
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
		// The status is sent: the client sees a body shorter than its
		// Content-Length, which is how HTTP says the transfer broke.
		h.logger.WarnContext(c.Request.Context(), "exhibit download broke off", "case_id", l.Case.ID, "exhibit", ex.ID, "error", err)
	}
}

// The JSON commands' bodies.
type (
	describeBody struct {
		ParticipantID string `json:"participantId"`
		Description   string `json:"description"`
	}
	discloseBody struct {
		ParticipantID string `json:"participantId"`
	}
	authenticityBody struct {
		ParticipantID string `json:"participantId"`
		Grounds       string `json:"grounds"`
	}
	answerChallengeBody struct {
		ParticipantID string `json:"participantId"`
		Answer        string `json:"answer"`
	}
	resolveChallengeBody struct {
		ChallengeID string `json:"challengeId"`
		Decision    string `json:"decision"` // upheld | dismissed
		Reasons     string `json:"reasons"`
	}
	defectBody struct {
		ParticipantID string `json:"participantId"`
		Kind          string `json:"kind"`
		Detail        string `json:"detail"`
	}
	resolveDefectBody struct {
		Resolution string `json:"resolution"` // corrected | rejected
		Note       string `json:"note"`
	}
)

// exhibitSideAct answers a side's act on the exhibit in the path; read
// decodes the body into the act and returns the participant it names.
func (h *handlers) exhibitSideAct(kind evidence.ActKind, status int, read func(c *gin.Context, a *evidence.Act) (string, error)) gin.HandlerFunc {
	return func(c *gin.Context) {
		a := evidence.Act{Kind: kind, ExhibitID: exhibitParam(c)}
		participantID, err := read(c, &a)
		if err != nil {
			_ = c.Error(err)
			return
		}
		cred, l, err := h.load(c, caseID(c))
		if err != nil {
			_ = c.Error(err)
			return
		}
		if a.Side, a.ParticipantID, err = h.evidenceActor(c, cred, l.Case, participantID); err != nil {
			_ = c.Error(err)
			return
		}
		h.evidenceAct(c, cred, l.Case, a, status)
	}
}

// exhibitMemberAct answers the tribunal's act on the exhibit in the path:
// only a member assigned to the case.
func (h *handlers) exhibitMemberAct(kind evidence.ActKind, read func(c *gin.Context, a *evidence.Act) error) gin.HandlerFunc {
	return func(c *gin.Context) {
		a := evidence.Act{Kind: kind, ExhibitID: exhibitParam(c)}
		if err := read(c, &a); err != nil {
			_ = c.Error(err)
			return
		}
		cred, l, err := h.load(c, caseID(c))
		if err != nil {
			_ = c.Error(err)
			return
		}
		if !tribunalCredential(cred) {
			_ = c.Error(h.tribunalOnly(l.Case))
			return
		}
		a.TribunalMember = cred.PublicID
		h.evidenceAct(c, cred, l.Case, a, http.StatusOK)
	}
}

// exhibitParam is the exhibit named in the path; the website's defect
// routes name it sourceId, as the processing record's source.
func exhibitParam(c *gin.Context) string {
	if id := c.Param("evidenceId"); id != "" {
		return id
	}
	return c.Param("sourceId")
}

func (h *handlers) evidenceAct(c *gin.Context, cred auth.Credential, cs procedure.Case, a evidence.Act, status int) {
	res, ex, err := h.evidence.Act(c.Request.Context(), cs.ID, a)
	if errors.Is(err, store.ErrNotFound) {
		err = notVisible(cs.ID)
	}
	if err != nil {
		_ = c.Error(err)
		return
	}
	h.logger.InfoContext(c.Request.Context(), "evidence act accepted", "case_id", cs.ID, "act", a.Kind, "exhibit", a.ExhibitID,
		"credential", cred.PublicID)
	v := exhibitActView{CaseID: cs.ID, Exhibit: toExhibitView(cs.ID, ex, []string{a.Side}), Events: eventRefs(cs.ID, res.FirstSequence, res.Events),
		LastSequence: res.FirstSequence + int64(len(res.Events)) - 1}
	if a.Kind == evidence.ActChallenge || a.Kind == evidence.ActAnswerChallenge || a.Kind == evidence.ActResolveChallenge {
		v.ChallengeID = a.ChallengeID
	}
	if a.Kind == evidence.ActReportDefect || a.Kind == evidence.ActResolveDefect {
		v.DefectID = a.DefectID
	}
	c.Header("Cache-Control", "no-store")
	c.JSON(status, gin.H{"data": v, "requestId": requestid.Get(c)})
}

// The readers of each command's body.

func readDescribe(c *gin.Context, a *evidence.Act) (string, error) {
	var b describeBody
	err := decodeOptional(c, &b)
	a.Text = b.Description
	return b.ParticipantID, err
}

func readDisclose(c *gin.Context, _ *evidence.Act) (string, error) {
	var b discloseBody
	err := decodeOptional(c, &b)
	return b.ParticipantID, err
}

func readAuthenticityChallenge(c *gin.Context, a *evidence.Act) (string, error) {
	var b authenticityBody
	err := decodeOptional(c, &b)
	a.Text, a.ChallengeID = b.Grounds, newID("ach_")
	return b.ParticipantID, err
}

func readChallengeAnswer(c *gin.Context, a *evidence.Act) (string, error) {
	var b answerChallengeBody
	err := decodeOptional(c, &b)
	a.Text, a.ChallengeID = b.Answer, c.Param("challengeId")
	return b.ParticipantID, err
}

func readDefect(c *gin.Context, a *evidence.Act) (string, error) {
	var b defectBody
	err := decodeOptional(c, &b)
	a.Text, a.DefectKind, a.DefectID = b.Detail, evidence.DefectKind(b.Kind), newID("def_")
	return b.ParticipantID, err
}

func readChallengeResolution(c *gin.Context, a *evidence.Act) error {
	var b resolveChallengeBody
	if err := decodeOptional(c, &b); err != nil {
		return err
	}
	if b.Decision != "upheld" && b.Decision != "dismissed" {
		return evidenceInvalid("decision must be upheld (the exhibit is not authentic) or dismissed")
	}
	a.ChallengeID, a.Uphold, a.Text = b.ChallengeID, b.Decision == "upheld", b.Reasons
	return nil
}

func readDefectResolution(c *gin.Context, a *evidence.Act) error {
	var b resolveDefectBody
	if err := decodeOptional(c, &b); err != nil {
		return err
	}
	a.DefectID, a.Resolution, a.Text = c.Param("reportId"), evidence.DefectResolution(b.Resolution), b.Note
	return nil
}

// listAuthenticityChallenges answers GET .../authenticity-challenges of a visible
// exhibit.
func (h *handlers) listAuthenticityChallenges(c *gin.Context) {
	cred, l, err := h.load(c, caseID(c))
	if err != nil {
		_ = c.Error(err)
		return
	}
	ex, _, err := h.exhibitFor(c, cred, l.Case, c.Param("evidenceId"))
	if err != nil {
		_ = c.Error(err)
		return
	}
	v := authenticityChallengesView{CaseID: l.Case.ID, ExhibitID: ex.ID, Authenticity: string(ex.Authenticity), Challenges: []authenticityChallengeView{}}
	for _, ch := range l.Case.Evidence.Challenges {
		if ch.ExhibitID != ex.ID {
			continue
		}
		cv := authenticityChallengeView{ID: ch.ID, ExhibitID: ch.ExhibitID, Side: ch.Side, Grounds: ch.Grounds, FiledAt: ts(ch.FiledAt), Status: string(ch.Status),
			Answer: ch.Answer, Reasons: ch.Reasons}
		if !ch.AnsweredAt.IsZero() {
			cv.AnsweredAt = ts(ch.AnsweredAt)
		}
		if !ch.ResolvedAt.IsZero() {
			cv.ResolvedAt = ts(ch.ResolvedAt)
		}
		v.Challenges = append(v.Challenges, cv)
	}
	private(c, v)
}

// listProcessing answers GET evidence-processing: the processing record of
// every exhibit the caller sees, with its defect reports; ?include=text
// adds each one's extracted text.
func (h *handlers) listProcessing(c *gin.Context) {
	include := c.Query("include")
	if include != "" && include != "text" {
		_ = c.Error(problem.New(InvalidQuery, "include takes one value: text."))
		return
	}
	cred, l, err := h.load(c, caseID(c))
	if err != nil {
		_ = c.Error(err)
		return
	}
	visible, _, err := h.exhibitsFor(c, cred, l.Case)
	if err != nil {
		_ = c.Error(err)
		return
	}
	v := processingListView{CaseID: l.Case.ID, Records: []processingView{}}
	for _, e := range visible {
		r := processingView{SourceID: e.ID, Side: e.Side, MediaType: e.MediaType, PageCount: e.Processing.PageCount, TextChars: e.Processing.TextChars,
			TextDigest: e.Processing.TextDigest, TextTruncated: e.Processing.TextTruncated, Description: e.Description, Edited: !e.DescribedAt.IsZero(),
			Defects: []defectView{}}
		if include == "text" {
			text, err := h.evidence.Text(c.Request.Context(), l.Case.ID, e)
			if err != nil {
				_ = c.Error(err)
				return
			}
			r.Text = &text
		}
		for _, d := range l.Case.Evidence.Defects {
			if d.ExhibitID != e.ID {
				continue
			}
			dv := defectView{ID: d.ID, Side: d.Side, Kind: string(d.Kind), Detail: d.Detail, ReportedAt: ts(d.ReportedAt), Resolution: string(d.Resolution), Note: d.Note}
			if d.Resolved() {
				dv.ResolvedAt = ts(d.ResolvedAt)
			}
			r.Defects = append(r.Defects, dv)
		}
		v.Records = append(v.Records, r)
	}
	private(c, v)
}

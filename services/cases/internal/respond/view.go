package respond

import (
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/gin-gonic/gin/render"

	"github.com/pcourt/pcourt/libs/problem"
	"github.com/pcourt/pcourt/libs/requestid"
	"github.com/pcourt/pcourt/libs/webpage"

	"github.com/pcourt/pcourt/services/cases/internal/caseflow"
	"github.com/pcourt/pcourt/services/cases/internal/procedure"
	"github.com/pcourt/pcourt/services/cases/internal/store"
)

//go:embed templates/*.html
var templateFiles embed.FS

//go:embed static
var staticFiles embed.FS

var templates = template.Must(template.New("").Funcs(template.FuncMap{
	"when":     when,
	"duration": duration,
	"stamp":    procedure.Timestamp,
	"add":      func(a, b float64) float64 { return a + b },
	"sub":      func(a, b float64) float64 { return a - b },
	"exhibitFile": func(files bool, e exhibitView) exhibitFileView {
		return exhibitFileView{Files: files, Exhibit: e}
	},
}).ParseFS(templateFiles, "templates/*.html"))

// exhibitFileView is an exhibit's file cell: a download link when the
// page moves files.
type exhibitFileView struct {
	Files   bool
	Exhibit exhibitView
}

// frame is what every page's layout needs.
type frame struct {
	// Static prefixes the module and stylesheet.
	Static string
	// CaseID and Exchange are set on the pages of a case: Exchange is the
	// login exchange the module posts the fragment's token to.
	// Preview is where the module posts the fragment's token (it spends
	// nothing); Exchange is where the confirmation page's button posts it.
	CaseID   string
	Preview  string
	Exchange string
	Page     string // the case page's path
	// Who is set on the pages of a session: who is signed in, shown in the
	// header of every page that can act, with the sign-out.
	Who *whoView
}

// whoView is who a session acts as: the case and its respondent
// participants the page acts for.
type whoView struct {
	CaseID     string
	ExternalID string
	As         string // respondentsLabel of the case
	Since      time.Time
	CSRF       string
	SignOut    string
	// Account is the account page, set when the page acts through an
	// account session rather than the case's link: that session is signed
	// out of there, for the whole site.
	Account string
}

func (p *page) frame(caseID string) frame {
	f := frame{Static: p.prefix + "/respond/static/"}
	if caseID != "" {
		f.CaseID, f.Page = caseID, p.pagePath(caseID)
		f.Preview, f.Exchange = f.Page+"/session/preview", f.Page+"/session"
	}
	return f
}

// confirmView is the page a link's preview answers: what the token would
// sign in as, and the button that does it.
type confirmView struct {
	frame
	Login      string // the token, posted back by the button's form
	ExternalID string
	Claimants  string
	As         string
}

func (p *page) confirmView(c procedure.Case, token string) confirmView {
	var claimants []string
	for _, pt := range c.Participants {
		if pt.Side == procedure.Claimant {
			claimants = append(claimants, participantLabel(pt))
		}
	}
	return confirmView{frame: p.frame(c.ID), Login: token, ExternalID: c.ExternalID,
		Claimants: strings.Join(claimants, "; "), As: respondentsLabel(c, viewer{hasHosted: true})}
}

// respondentsLabel names the respondent participants a session of the
// case acts for (actable), "" when there is none.
func respondentsLabel(c procedure.Case, v viewer) string {
	var as []string
	for _, id := range v.actable(c) {
		if pt, ok := c.Participant(id); ok {
			as = append(as, participantLabel(pt))
		}
	}
	return strings.Join(as, "; ")
}

// participantLabel is how a person recognises a participant: the
// principal it stands for, then its id in the case.
func participantLabel(pt procedure.Participant) string {
	if pt.PrincipalID == "" {
		return "participant " + pt.ID
	}
	return pt.PrincipalID + " (participant " + pt.ID + ")"
}

// refusal is an HTML error page: a status, a stable code (in the page's
// data-refusal attribute, for tests and support), words for a person,
// and where to go next.
type refusal struct {
	frame
	Status int
	Code   string
	CaseID string
	Title  string
	Detail string
	// Back links to the case page (the session still stands); Continue
	// does too, for a browser found signed in after all.
	Back     string
	Continue string
}

func refusalNotFound(string) refusal {
	return refusal{Status: http.StatusNotFound, Code: "not_found", Title: "No such page", Detail: "This address names no case."}
}

func refusalCrossOrigin(id string) refusal {
	return refusal{Status: http.StatusForbidden, Code: "cross_origin", CaseID: id, Title: "Refused: not sent from this page",
		Detail: "The form was sent from another site, or by a browser that does not say where it came from. Nothing was filed."}
}

// refusalPost answers a post webpage.CheckPost refused.
func refusalPost(id string, err error) refusal {
	switch {
	case errors.Is(err, webpage.ErrCrossOrigin):
		return refusalCrossOrigin(id)
	case errors.Is(err, webpage.ErrFormTooLarge):
		return refusal{Status: http.StatusRequestEntityTooLarge, Code: "bad_form", CaseID: id, Title: "The form could not be read", Detail: "Nothing was filed."}
	}
	return refusal{Status: http.StatusBadRequest, Code: "bad_form", CaseID: id, Title: "The form could not be read", Detail: "Nothing was filed."}
}

// refuse renders a refusal with its status: a page, or the same words as
// a problem for the page's own module (answerJSON).
func (p *page) refuse(c *gin.Context, r refusal) {
	if r.Status == 0 {
		r.Status = http.StatusBadRequest
	}
	if c.GetBool(jsonAnswersKey) {
		c.Header("Content-Type", problem.ContentType)
		c.Render(r.Status, render.JSON{Data: problem.Body{Type: problem.TypeBase + r.Code, Title: r.Title, Status: r.Status,
			Code: r.Code, Detail: r.Detail, RequestID: requestid.Get(c)}})
		c.Abort()
		return
	}
	r.frame = p.frame(r.CaseID)
	p.render(c, r.Status, "refusal", r)
}

// jsonAnswersKey marks a request the page's own module sent asking for
// JSON: its answers, refusals included, are JSON rather than pages.
const jsonAnswersKey = "respond.jsonAnswers"

// answerJSON marks a request whose Accept names application/json (the
// upload module's): the module shows a refusal's words beside the form it
// sent instead of leaving the page. A browser's own form post asks for
// HTML and keeps its pages.
func answerJSON(c *gin.Context) {
	for _, part := range strings.Split(c.GetHeader("Accept"), ",") {
		mt, _, _ := strings.Cut(strings.TrimSpace(part), ";")
		if mt == "application/json" || mt == problem.ContentType {
			c.Set(jsonAnswersKey, true)
		}
	}
	c.Next()
}

// render answers a page (webpage.Render).
func (p *page) render(c *gin.Context, status int, name string, data any) {
	webpage.Render(c, p.logger, templates, status, name, data)
}

// caseView is the case page.
type caseView struct {
	frame
	CSRF          string
	ExternalID    string
	Status        procedure.Status
	RulesVersion  string
	Profile       procedure.Profile
	OpenedAt      time.Time
	StageDeadline time.Time // zero when the case is closed
	Participants  []participantView
	Deadlines     []deadlineView
	// Timeline draws the case's stages, milestones and today.
	Timeline *timelineView
	// Join and Answer list the participants the page can act for in each
	// form; an empty list hides the form.
	Join, Answer []string
	// JoinAsAccount offers to link the invitation to the account the
	// browser is signed in to as the participant joins.
	JoinAsAccount bool
	AnswerFiled   *answerView
	MaxAnswer     int
	Docket        docketPage
	// Taking part, once joined (participation.go): who the forms act for,
	// the messages, submissions, exhibits, record, termination and award.
	participation
}

type participantView struct {
	ID, Side, PrincipalID string
	AgentBound            bool
	JoinedAt              time.Time
}

// deadlineView is one of the respondent's deadlines: due at At, or done at
// Done, or (neither) not started yet, for Window after its stage opens.
type deadlineView struct {
	What   string
	At     time.Time
	Done   time.Time
	Window time.Duration
	Missed bool
}

type answerView struct {
	ParticipantID string
	FiledAt       time.Time
	Text          string
}

type docketEntry struct {
	Sequence       int64  `json:"sequence"`
	Type           string `json:"type"`
	OccurredAt     string `json:"occurredAt"`
	ActionRequired bool   `json:"actionRequired"`
}

// docketShown is how many docket events a page of the docket shows.
const docketShown = 50

func (p *page) caseView(ctx context.Context, l store.Loaded, who viewer, docketFrom int64) (caseView, error) {
	c := l.Case
	var err error
	v := caseView{
		frame: p.frame(c.ID), CSRF: who.csrf(), ExternalID: c.ExternalID, Status: c.Status(),
		RulesVersion: c.Rules.Version, Profile: c.Plan.Profile, OpenedAt: c.OpenedAt,
		MaxAnswer: caseflow.MaxAnswerRunes, JoinAsAccount: who.mayLink(c),
	}
	v.Who = &whoView{CaseID: c.ID, ExternalID: c.ExternalID, As: respondentsLabel(c, who), Since: who.hosted.CreatedAt,
		CSRF: who.csrf(), SignOut: p.pagePath(c.ID) + "/signout"}
	if !who.hasHosted {
		v.Who.Since, v.Who.SignOut, v.Who.Account = who.account.CreatedAt, "", p.prefix+"/account/"
	}
	if c.Closed == "" {
		v.StageDeadline = c.Stage.DeadlineAt
	}
	mine := who.actable(c)
	for _, pt := range c.Participants {
		v.Participants = append(v.Participants, participantView{
			ID: pt.ID, Side: string(pt.Side), PrincipalID: pt.PrincipalID, AgentBound: pt.AgentID != "", JoinedAt: pt.JoinedAt,
		})
		if pt.Side != procedure.Respondent || !slices.Contains(mine, pt.ID) || !c.Status().Open() {
			continue
		}
		switch {
		case !pt.Joined():
			v.Join = append(v.Join, pt.ID)
		case c.Status() == procedure.StatusAwaitingAnswer && c.Answer == nil:
			v.Answer = append(v.Answer, pt.ID)
		}
	}
	v.Deadlines = respondentDeadlines(c)
	v.Timeline = newTimeline(c, p.now())
	if c.Answer != nil {
		text, err := p.text(ctx, c.ID, c.Answer.Digest)
		if err != nil {
			return caseView{}, err
		}
		v.AnswerFiled = &answerView{ParticipantID: c.Answer.ParticipantID, FiledAt: c.Answer.FiledAt, Text: string(text)}
	}
	if v.participation, err = p.participationView(ctx, c, who); err != nil {
		return caseView{}, err
	}
	v.Docket, err = p.docketPage(ctx, c.ID, l.Sequence, docketFrom)
	if err != nil {
		return caseView{}, err
	}
	return v, nil
}

// docketPage is one page of the docket: docketShown events from From,
// with links to the pages before and after ("" at either end).
type docketPage struct {
	Entries       []docketEntry
	From, Through int64
	Older, Newer  string
}

// docketPage reads the page of the docket that starts at from; from 0
// is its latest page.
func (p *page) docketPage(ctx context.Context, caseID string, last, from int64) (docketPage, error) {
	if from < 1 || from > last {
		from = max(1, last-docketShown+1)
	}
	d := docketPage{From: from, Through: min(last, from+docketShown-1)}
	raw, err := p.cases.Docket(ctx, caseID, from, docketShown)
	if err != nil {
		return docketPage{}, err
	}
	for _, b := range raw {
		var e docketEntry
		if err := json.Unmarshal(b, &e); err != nil {
			return docketPage{}, fmt.Errorf("docket of case %s: %w", caseID, err)
		}
		d.Entries = append(d.Entries, e)
	}
	if from > 1 {
		d.Older = fmt.Sprintf("%s?docket=%d#docket", p.pagePath(caseID), max(1, from-docketShown))
	}
	if d.Through < last {
		d.Newer = fmt.Sprintf("%s?docket=%d#docket", p.pagePath(caseID), d.Through+1)
	}
	return d, nil
}

// respondentDeadlines are the respondent's deadlines from the case's
// procedure: joining, and the answer when the plan requires one. A
// deadline of the current stage has its instant; a later one its window.
func respondentDeadlines(c procedure.Case) []deadlineView {
	joined := time.Time{}
	for _, pt := range c.Participants {
		if pt.Side == procedure.Respondent && pt.Joined() && (joined.IsZero() || pt.JoinedAt.Before(joined)) {
			joined = pt.JoinedAt
		}
	}
	join := deadlineView{What: "Join the case", Done: joined, Window: c.Windows.RespondentJoin}
	if joined.IsZero() && c.Status() == procedure.StatusAwaitingRespondent {
		join.At = c.Stage.DeadlineAt
	}
	out := []deadlineView{join}
	if !c.Plan.AnswerRequired {
		return out
	}
	answer := deadlineView{What: "File the answer", Window: c.Windows.Answer, Missed: c.AnswerMissed}
	switch {
	case c.Answer != nil:
		answer.Done = c.Answer.FiledAt
	case c.Status() == procedure.StatusAwaitingAnswer:
		answer.At = c.Stage.DeadlineAt
	}
	return append(out, answer)
}

// when formats an instant for people, in UTC.
func when(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format("2 January 2006, 15:04 UTC")
}

// duration formats a deadline window in days and hours.
func duration(d time.Duration) string {
	days, hours := int(d/(24*time.Hour)), int(d%(24*time.Hour)/time.Hour)
	switch {
	case days > 0 && hours > 0:
		return fmt.Sprintf("%d days %d hours", days, hours)
	case days == 1:
		return "1 day"
	case days > 0:
		return fmt.Sprintf("%d days", days)
	default:
		return fmt.Sprintf("%d hours", hours)
	}
}

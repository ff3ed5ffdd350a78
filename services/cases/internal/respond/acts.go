// Acting on the hosted page: join and answer, each behind the origin, session
// and CSRF guard, through caseflow.

package respond

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/gin-gonic/gin"

	"github.com/pcourt/pcourt/libs/webpage"
	"github.com/pcourt/pcourt/services/cases/internal/caseflow"
	"github.com/pcourt/pcourt/services/cases/internal/procedure"
	"github.com/pcourt/pcourt/services/cases/internal/store"
)

// join makes the session's respondent participant take part.
func (p *page) join(c *gin.Context) {
	id, ok := p.guard(c)
	if !ok {
		return
	}
	p.act(c, id, func(_ procedure.Case, pid string) step {
		return step{act: procedure.Act{Kind: procedure.ActJoin, ParticipantID: pid}}
	})
}

// answer files the respondent's answer, its text kept beside the case as
// the API's answer keeps it.
func (p *page) answer(c *gin.Context) {
	id, ok := p.guard(c)
	if !ok {
		return
	}
	// A browser submits a textarea's line breaks as CRLF; the text is kept
	// as the respondent typed it.
	text := strings.ReplaceAll(c.Request.PostForm.Get("text"), "\r\n", "\n")
	if err := checkText(text); err != nil {
		p.refuse(c, refusal{Status: http.StatusBadRequest, Code: string(procedure.CodeInvalidAct), CaseID: id,
			Title: "The answer cannot be filed", Detail: "The answer " + err.Error() + ".", Back: p.pagePath(id)})
		return
	}
	p.act(c, id, func(_ procedure.Case, pid string) step {
		digest := digestOf(text)
		return step{act: procedure.Act{Kind: procedure.ActFileAnswer, ParticipantID: pid, Digest: digest},
			docs: []store.Document{{Digest: digest, Content: []byte(text)}}}
	})
}

// guard admits a form post: a valid case id, the page's own origin, a
// session of the case, and the session's CSRF token, in that order. It
// answers the refusal itself.
func (p *page) guard(c *gin.Context) (string, bool) {
	id := c.Param("caseId")
	if !procedure.ValidCaseID(id) {
		p.refuse(c, refusalNotFound(id))
		return "", false
	}
	if err := p.site.CheckPost(c.Request); err != nil {
		p.refuse(c, refusalPost(id, err))
		return "", false
	}
	sess, ok := p.sessionOrRefuse(c, id)
	if !ok {
		return "", false
	}
	if err := webpage.CheckCSRF(c.Request, sess.CSRF); err != nil {
		p.refuse(c, refusalCSRF(p, id))
		return "", false
	}
	return id, true
}

// sessionOrRefuse reads the session of the case the request carries, or
// answers the refusal (no_session) or the failure itself.
func (p *page) sessionOrRefuse(c *gin.Context, id string) (store.RespondSession, bool) {
	sess, ok, err := p.session(c, id)
	if err != nil {
		p.fail(c, id, err)
		return store.RespondSession{}, false
	}
	if !ok {
		p.refuse(c, refusal{Status: http.StatusForbidden, Code: "no_session", CaseID: id,
			Title: "You are not signed in", Detail: "This browser holds no session of this case, or it ended. Nothing was filed."})
		return store.RespondSession{}, false
	}
	return sess, true
}

// refusalCSRF answers a form whose CSRF token is not the session's.
func refusalCSRF(p *page, id string) refusal {
	return refusal{Status: http.StatusForbidden, Code: "csrf_mismatch", CaseID: id, Back: p.pagePath(id),
		Title: "The form has expired", Detail: "The form was not one this page gave your session. Nothing was filed: reload the case and try again."}
}

// step is what a form asks of the case: the act with the documents it
// keeps, or a refusal of the form itself. done, when set, tells whether
// the case already holds what the form asks (a form sent twice: a double
// click, a reload after a lost answer); such a form acts no more and goes
// back to the case page, which shows it done.
type step struct {
	act     procedure.Act
	docs    []store.Document
	done    func(procedure.Case) bool
	refusal *refusal
}

// act resolves which respondent participant the session acts for, lets
// build make the act, and applies it through caseflow; an accepted act
// goes back to the case page (post, redirect, get), a refused one answers
// the procedure's refusal with the status the API gives it. A form whose
// act the case already holds is not applied again: checked before acting
// and, for two copies racing, again when the procedure refuses the second
// (a minted id it already has, a confirmation already given).
func (p *page) act(c *gin.Context, id string, build func(procedure.Case, string) step) {
	ctx := c.Request.Context()
	l, err := p.cases.Load(ctx, id)
	if err != nil {
		p.fail(c, id, err)
		return
	}
	pid, r := p.actor(l.Case, c.Request.PostForm.Get("participantId"))
	if r != nil {
		p.refuse(c, *r)
		return
	}
	st := build(l.Case, pid)
	if st.refusal != nil {
		p.refuse(c, *st.refusal)
		return
	}
	if st.done != nil && st.done(l.Case) {
		p.logger.InfoContext(ctx, "case act already applied: the form was sent again", "case_id", id, "act", st.act.Kind)
		c.Redirect(http.StatusSeeOther, p.pagePath(id))
		return
	}
	res, err := p.flow.Act(ctx, id, st.act, st.docs...)
	if err != nil {
		if pr := caseflow.Problem(err); pr != nil && pr.Code.Status < 500 {
			if st.done != nil {
				if again, lerr := p.cases.Load(ctx, id); lerr == nil && st.done(again.Case) {
					c.Redirect(http.StatusSeeOther, p.pagePath(id))
					return
				}
			}
			p.refuse(c, refusal{Status: pr.Code.Status, Code: pr.Code.Name, CaseID: id, Back: p.pagePath(id),
				Title: pr.Code.Title, Detail: pr.Detail})
			return
		}
		p.fail(c, id, err)
		return
	}
	p.logger.InfoContext(ctx, "case act accepted", "case_id", id, "act", st.act.Kind, "by", "hosted respondent page",
		"status", res.Case.Status())
	c.Redirect(http.StatusSeeOther, p.pagePath(id))
}

// actor is the respondent participant the session acts for: the one named
// by the form, which must be one of actable(c), or the only one. The login
// token is a hosted respondent's; a participant bound to a partner is
// acted for by that partner's credentials only, never from this page.
func (p *page) actor(c procedure.Case, named string) (string, *refusal) {
	ids := actable(c)
	switch {
	case named != "" && slices.Contains(ids, named):
		return named, nil
	case named != "":
		return "", &refusal{Status: http.StatusForbidden, Code: "forbidden", CaseID: c.ID, Back: p.pagePath(c.ID),
			Title: "Not yours to act for", Detail: fmt.Sprintf("This session does not act for participant %s.", named)}
	case len(ids) == 1:
		return ids[0], nil
	case len(ids) == 0:
		return "", &refusal{Status: http.StatusForbidden, Code: "forbidden", CaseID: c.ID, Back: p.pagePath(c.ID),
			Title: "Nothing to act for here", Detail: "Every respondent of this case acts through its own partner or agent, not through this page."}
	default:
		return "", &refusal{Status: http.StatusBadRequest, Code: string(procedure.CodeInvalidAct), CaseID: c.ID, Back: p.pagePath(c.ID),
			Title: "Choose who acts", Detail: "This case has several respondents: choose the participant you act for."}
	}
}

// actable lists the respondent participants the page may act for: hosted
// respondents, before they join (the page's join binds them to this
// page's person) or after they joined here. One that a partner acts for,
// or that joined through a partner's agent, is not the page's.
func actable(c procedure.Case) []string {
	var ids []string
	for _, pt := range c.Participants {
		if pt.Side == procedure.Respondent && (pt.Unbound() || pt.Hosted) {
			ids = append(ids, pt.ID)
		}
	}
	return ids
}

func digestOf(text string) string {
	sum := sha256.Sum256([]byte(text))
	return hex.EncodeToString(sum[:])
}

// checkText accepts 1 to caseflow.MaxAnswerRunes characters without control
// characters other than tab and line breaks, as the API's answer does.
func checkText(s string) error {
	n := utf8.RuneCountInString(s)
	switch {
	case strings.TrimSpace(s) == "":
		return errors.New("is empty")
	case n > caseflow.MaxAnswerRunes:
		return fmt.Errorf("has %d characters; at most %d", n, caseflow.MaxAnswerRunes)
	}
	for _, r := range s {
		if unicode.IsControl(r) && r != '\n' && r != '\r' && r != '\t' {
			return fmt.Errorf("holds control character U+%04X", r)
		}
	}
	return nil
}

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

	"github.com/pcourt/pcourt/libs/auth"
	"github.com/pcourt/pcourt/services/cases/internal/caseflow"
	"github.com/pcourt/pcourt/services/cases/internal/procedure"
	"github.com/pcourt/pcourt/services/cases/internal/store"
)

// join makes the session's respondent participant take part. A person
// who followed the invitation while signed in to their account may link
// it to the account as they join (the form's as=account): the account's
// membership of the respondent side is granted first, then the join binds
// the participant to the account, which acts for it from then on, on this
// page and on the website routes, with no link needed again. A
// membership granted for a join that then fails admits nobody: the
// account acts only for a participant that names it.
func (p *page) join(c *gin.Context) {
	id, ok := p.guard(c)
	if !ok {
		return
	}
	v := viewerFrom(c)
	asAccount := c.Request.PostForm.Get("as") == "account"
	p.act(c, id, func(cs procedure.Case, pid string) step {
		if !asAccount {
			return step{act: procedure.Act{Kind: procedure.ActJoin, ParticipantID: pid}}
		}
		if !v.mayLink(cs) {
			return step{refusal: &refusal{Status: http.StatusForbidden, Code: "no_account_session", CaseID: id, Back: p.pagePath(id),
				Title: "Not signed in to an account", Detail: "Joining with your account needs this invitation's session and a sign-in to your pcourt account in this browser. Nothing was changed."}}
		}
		return step{act: procedure.Act{Kind: procedure.ActJoin, ParticipantID: pid, BindAccountID: v.account.AccountID},
			grant: &auth.Membership{Resource: "case:" + id, Side: auth.Respondent, Subject: auth.AccountSubject(v.account.AccountID),
				ExpiresAt: p.now().Add(AccountMembershipLifetime)}}
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
// session of the case (the hosted one, or an account's: viewer), and that
// session's CSRF token, in that order. It answers the refusal itself, and
// keeps the viewer for the act (viewerFrom).
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
	v, ok := p.viewerOrRefuse(c, id)
	if !ok {
		return "", false
	}
	if err := v.checkCSRF(c.Request); err != nil {
		p.refuse(c, refusalCSRF(p, id))
		return "", false
	}
	c.Set(viewerKey, v)
	return id, true
}

// viewerOrRefuse reads who the request signs in for the case, or answers
// the refusal (no_session) or the failure itself.
func (p *page) viewerOrRefuse(c *gin.Context, id string) (viewer, bool) {
	v, err := p.viewer(c, id)
	if err != nil {
		p.fail(c, id, err)
		return viewer{}, false
	}
	if !v.any() {
		p.refuse(c, refusal{Status: http.StatusForbidden, Code: "no_session", CaseID: id,
			Title: "You are not signed in", Detail: "This browser holds no session of this case, or it ended. Nothing was filed."})
		return viewer{}, false
	}
	return v, true
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
	// grant, when set, is granted before the act is applied: the
	// membership an account's join needs to act afterwards.
	grant *auth.Membership
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
	pid, r := p.actor(l.Case, viewerFrom(c), c.Request.PostForm.Get("participantId"))
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
	if st.grant != nil {
		if err := p.credentials.Grant(ctx, *st.grant); err != nil {
			p.fail(c, id, err)
			return
		}
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

// actor is the respondent participant the viewer acts for: the one named
// by the form, which must be one of v.actable(c), or the only one. The
// login token is a hosted respondent's, an account session its account's
// participants'; a participant bound to a partner is acted for by that
// partner's credentials only, never from this page.
func (p *page) actor(c procedure.Case, v viewer, named string) (string, *refusal) {
	ids := v.actable(c)
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
			Title: "Nothing to act for here", Detail: "Every respondent of this case acts through its own partner, agent or account, not through this session."}
	default:
		return "", &refusal{Status: http.StatusBadRequest, Code: string(procedure.CodeInvalidAct), CaseID: c.ID, Back: p.pagePath(c.ID),
			Title: "Choose who acts", Detail: "This case has several respondents: choose the participant you act for."}
	}
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

// Who the page serves: the case's hosted session, a person's account
// session, or both.

package respond

import (
	"context"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/pcourt/pcourt/libs/auth"
	"github.com/pcourt/pcourt/libs/webpage"
	"github.com/pcourt/pcourt/services/cases/internal/procedure"
	"github.com/pcourt/pcourt/services/cases/internal/store"
)

// viewer is who looks at a case's page (docs/accounts.md, "Sessions and
// membership"):
//
//   - the case's hosted session, signed in with the one-time link: it acts
//     for the invited respondent before it joins, and after it joined on
//     this page without an account (a hosted respondent);
//   - a person's account session (libs/auth, the accounts service's
//     sign-in), which acts for the respondent participants its account
//     takes part as, through the membership of their side that names the
//     account: the participants whose invitation the person linked to the
//     account when joining, on any later visit, with no link;
//   - both, when a person who followed the invitation is signed in to
//     their account: the join may then link the invitation to the account.
type viewer struct {
	hosted    store.RespondSession
	hasHosted bool
	// account is the account session's credential (zero without one);
	// accountCookie its secret, whose CSRF token the forms carry.
	account       auth.Credential
	accountCookie string
	// members are the sides of the case the account's memberships admit
	// it to.
	members map[procedure.Side]bool
}

// viewerKey keeps the viewer guard admitted in the gin context.
const viewerKey = "respond.viewer"

// any reports whether the browser holds a session the page serves.
func (v viewer) any() bool { return v.hasHosted || v.account.Session() }

// signedInTo reports whether the account session is of c's tenant and
// environment: an account of another acts for nothing in c.
func (v viewer) signedInTo(c procedure.Case) bool {
	return v.account.Session() && v.account.Tenant == c.Tenant && string(v.account.Environment) == c.Environment
}

// accountOf reports whether the account session acts for pt of c: its
// account is the participant's, and a membership of its side names the
// account.
func (v viewer) accountOf(c procedure.Case, pt procedure.Participant) bool {
	return v.signedInTo(c) && pt.AccountID != "" && pt.AccountID == v.account.AccountID && v.members[pt.Side]
}

// actable lists the respondent participants the page may act for: with
// the hosted session, the invited respondent before it joins (the page's
// join binds it to this page's person, or to their account) and one that
// joined here without an account; with an account session, the
// respondents the account takes part as. One that a partner acts for, or
// that joined through a partner's agent, is never the page's.
func (v viewer) actable(c procedure.Case) []string {
	var ids []string
	for _, pt := range c.Participants {
		if pt.Side != procedure.Respondent {
			continue
		}
		if (v.hasHosted && (pt.Unbound() || pt.Hosted)) || v.accountOf(c, pt) {
			ids = append(ids, pt.ID)
		}
	}
	return ids
}

// mayLink reports whether the join may link the invitation to the
// viewer's account: the person followed the invitation (the hosted
// session) and is signed in to an account of the case's tenant and
// environment.
func (v viewer) mayLink(c procedure.Case) bool { return v.hasHosted && v.signedInTo(c) }

// csrf is the token the page's forms carry: the hosted session's where
// there is one (its forms were first), else the account session's.
func (v viewer) csrf() string {
	if v.hasHosted {
		return v.hosted.CSRF
	}
	if v.account.Session() {
		return auth.SessionCSRF(v.accountCookie)
	}
	return ""
}

// csrfMatches reports whether token is the CSRF token of either session.
func (v viewer) csrfMatches(token string) bool {
	return (v.hasHosted && webpage.Equal(token, v.hosted.CSRF)) ||
		(v.account.Session() && webpage.Equal(token, auth.SessionCSRF(v.accountCookie)))
}

// checkCSRF accepts a parsed form carrying the token of either session.
func (v viewer) checkCSRF(r *http.Request) error {
	if !v.csrfMatches(r.PostForm.Get(webpage.CSRFField)) {
		return webpage.ErrCSRFMismatch
	}
	return nil
}

// viewer reads who the request's cookies sign in for case caseID: its
// hosted session, and an account session with the memberships it holds
// on the case (whose tenant and environment actable checks).
func (p *page) viewer(c *gin.Context, caseID string) (viewer, error) {
	var v viewer
	var err error
	if v.hosted, v.hasHosted, err = p.session(c, caseID); err != nil {
		return viewer{}, err
	}
	if p.credentials == nil {
		return v, nil
	}
	ck, cerr := c.Request.Cookie(auth.SessionCookieName)
	if cerr != nil || ck.Value == "" || len(ck.Value) > webpage.MaxCookieValue {
		return v, nil
	}
	cred, live, err := p.credentials.AccountSession(c.Request.Context(), ck.Value)
	if err != nil {
		return viewer{}, err
	}
	if !live {
		return v, nil
	}
	v.account, v.accountCookie = cred, ck.Value
	if v.members, err = p.accountMembers(c.Request.Context(), caseID, cred); err != nil {
		return viewer{}, err
	}
	return v, nil
}

// accountMembers are the sides of case caseID whose memberships admit
// the account session.
func (p *page) accountMembers(ctx context.Context, caseID string, cred auth.Credential) (map[procedure.Side]bool, error) {
	members, err := p.credentials.Memberships(ctx, "case:"+caseID)
	if err != nil {
		return nil, err
	}
	sides := map[procedure.Side]bool{}
	for _, m := range members {
		if m.Subject.Admits(cred) {
			sides[procedure.Side(m.Side)] = true
		}
	}
	return sides, nil
}

// viewerFrom is the viewer guard admitted the request with.
func viewerFrom(c *gin.Context) viewer {
	v, _ := c.Get(viewerKey)
	vw, _ := v.(viewer)
	return vw
}

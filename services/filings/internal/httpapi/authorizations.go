package httpapi

import (
	"errors"
	"net/http"
	"regexp"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/pcourt/pcourt/libs/auth"
	"github.com/pcourt/pcourt/libs/httpserver"
	"github.com/pcourt/pcourt/libs/problem"
	"github.com/pcourt/pcourt/libs/requestid"
	"github.com/pcourt/pcourt/services/filings/internal/draft"
	"github.com/pcourt/pcourt/services/filings/internal/store"
)

// consentBody records a bundled authorization: a consent the partner
// obtained for a participant to the exact draft digest.
type consentBody struct {
	DraftID          string `json:"draftId"`
	ParticipantID    string `json:"participantId"`
	DraftDigest      string `json:"draftDigest"`
	ConsentReference string `json:"consentReference"`
}

// recordConsent stands in for a bundled_authorization participant's
// confirmation. Like a confirmation, it may be the act that opens the case,
// and like one it needs authority over the participant: only an
// orchestrator of the participant's partner records its consent (the
// domain refuses anyone else with forbidden).
func (h *handlers) recordConsent(route draft.Route) gin.HandlerFunc {
	return func(c *gin.Context) {
		var b consentBody
		if err := httpserver.DecodeJSON(c, &b); err != nil {
			_ = c.Error(err)
			return
		}
		if err := validateConsent(b); err != nil {
			_ = c.Error(err)
			return
		}
		cred, _ := auth.CredentialFrom(c.Request.Context())
		h.apply(c, b.DraftID, cred, route, func(d draft.Draft) (draft.Outcome, error) {
			if b.DraftDigest != d.Digest() {
				return draft.Outcome{}, &draft.RefusalError{Code: draft.CodeDigestMismatch, Detail: "the consent names digest " + b.DraftDigest + ", the draft's is " + d.Digest()}
			}
			return d.WithConsent(b.ParticipantID, actorOf(cred, route), h.now(), b.ConsentReference)
		})
	}
}

var hex64 = regexp.MustCompile(`^[0-9a-f]{64}$`)

// validateConsent checks the consent body's own rules before the draft is
// read; each refusal is 400 invalid_consent naming the field.
func validateConsent(b consentBody) error {
	switch {
	case b.DraftID == "":
		return problem.New(InvalidConsent, "draftId is required.")
	case b.ParticipantID == "":
		return problem.New(InvalidConsent, "participantId is required.")
	case !hex64.MatchString(b.DraftDigest):
		return problem.New(InvalidConsent, "draftDigest must be 64 lowercase hex characters.")
	case !visibleASCII(b.ConsentReference, 200):
		return problem.New(InvalidConsent, "consentReference must be 1 to 200 visible ASCII characters without spaces.")
	}
	return nil
}

// visibleASCII reports whether s is 1 to max characters of 0x21 to 0x7e.
func visibleASCII(s string, max int) bool {
	if s == "" || len(s) > max {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < 0x21 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

// grantBody binds a credential or an agent identity to a side of a draft
// (and so of the case it opens). principalId names an agent identity: the
// immutable agentId of a participant of that side, which only credentials
// bound to that agent id satisfy.
type grantBody struct {
	Resource     string `json:"resource"`
	Side         string `json:"side"`
	CredentialID string `json:"credentialId,omitempty"`
	PrincipalID  string `json:"principalId,omitempty"`
}

type grantView struct {
	Resource     string `json:"resource"`
	Side         string `json:"side"`
	CredentialID string `json:"credentialId,omitempty"`
	PrincipalID  string `json:"principalId,omitempty"`
}

// InvalidGrant is an authority grant that names no usable subject or side.
var InvalidGrant = problem.Code{Name: "invalid_grant", Status: http.StatusBadRequest, Title: "Invalid authority grant"}

// grantAuthority grants a side of a draft the caller's partner acts for, to
// a credential of the same partner or to the agent identity of a
// participant of that partner on that side.
func (h *handlers) grantAuthority(c *gin.Context) {
	c.Header("Cache-Control", "no-store")
	var b grantBody
	if err := httpserver.DecodeJSON(c, &b); err != nil {
		_ = c.Error(err)
		return
	}
	cred, _ := auth.CredentialFrom(c.Request.Context())
	d, err := h.grantableDraft(c, cred, b.Resource)
	if err != nil {
		_ = c.Error(err)
		return
	}
	m := auth.Membership{Resource: b.Resource, Side: auth.Side(b.Side), ExpiresAt: membershipExpiry(d)}
	if !m.Side.Valid() {
		_ = c.Error(problem.New(InvalidGrant, "side must be claimant or respondent."))
		return
	}
	if !d.ActsFor(cred.PartnerID, draft.Side(m.Side)) {
		_ = c.Error(&draft.RefusalError{Code: draft.CodeForbidden, Detail: "partner " + cred.PartnerID + " acts for no " + b.Side + " participant of draft " + d.ID() + "; it may grant only its own sides"})
		return
	}
	switch {
	case b.CredentialID != "" && b.PrincipalID == "":
		target, err := h.credentials.Get(c.Request.Context(), b.CredentialID)
		if err != nil || target.Tenant != cred.Tenant || target.Environment != cred.Environment || target.PartnerID != cred.PartnerID {
			_ = c.Error(problem.Newf(InvalidGrant, "No credential %s of this partner in this tenant and environment.", b.CredentialID))
			return
		}
		m.Subject = auth.CredentialSubject(b.CredentialID)
	case b.PrincipalID != "" && b.CredentialID == "":
		p, ok := d.AgentOf(b.PrincipalID)
		if !ok || string(p.Side) != b.Side || d.EffectivePartner(p) != cred.PartnerID {
			_ = c.Error(problem.Newf(InvalidGrant, "principalId must be the immutable agentId of a %s participant of this partner; a principal string is never an identity.", b.Side))
			return
		}
		m.Subject = auth.PrincipalSubject(cred.PartnerID, p.AgentID)
	default:
		_ = c.Error(problem.New(InvalidGrant, "Name exactly one of credentialId and principalId."))
		return
	}
	if err := h.credentials.Grant(c.Request.Context(), m); err != nil {
		_ = c.Error(err)
		return
	}
	c.JSON(http.StatusCreated, gin.H{"data": toGrantView(m), "requestId": requestid.Get(c)})
}

// listAuthority lists the grants of the sides the caller's partner acts for.
func (h *handlers) listAuthority(c *gin.Context) {
	cred, _ := auth.CredentialFrom(c.Request.Context())
	d, err := h.grantableDraft(c, cred, c.Query("resource"))
	if err != nil {
		_ = c.Error(err)
		return
	}
	members, err := h.credentials.Memberships(c.Request.Context(), c.Query("resource"))
	if err != nil {
		_ = c.Error(err)
		return
	}
	out := make([]grantView, 0, len(members))
	for _, m := range members {
		if d.ActsFor(cred.PartnerID, draft.Side(m.Side)) {
			out = append(out, toGrantView(m))
		}
	}
	c.Header("Cache-Control", "private, no-store")
	c.JSON(http.StatusOK, gin.H{"data": out, "requestId": requestid.Get(c)})
}

// revokeAuthority removes a grant of a side the caller's partner acts for;
// a credential's grant only when the credential is the partner's own, so
// that no partner locks another's agents (or the preparer) out.
func (h *handlers) revokeAuthority(c *gin.Context) {
	c.Header("Cache-Control", "no-store")
	cred, _ := auth.CredentialFrom(c.Request.Context())
	res, credentialID, principalID := c.Query("resource"), c.Query("credentialId"), c.Query("principalId")
	d, err := h.grantableDraft(c, cred, res)
	if err != nil {
		_ = c.Error(err)
		return
	}
	var subject auth.Subject
	switch {
	case credentialID != "" && principalID == "":
		subject = auth.CredentialSubject(credentialID)
	case principalID != "" && credentialID == "":
		subject = auth.PrincipalSubject(cred.PartnerID, principalID)
	default:
		_ = c.Error(problem.New(InvalidGrant, "Name exactly one of credentialId and principalId."))
		return
	}
	members, err := h.credentials.Memberships(c.Request.Context(), res)
	if err != nil {
		_ = c.Error(err)
		return
	}
	var found *auth.Membership
	for _, m := range members {
		if m.Subject == subject && d.ActsFor(cred.PartnerID, draft.Side(m.Side)) {
			found = &m
		}
	}
	if found == nil {
		// A grant of a side the caller does not act for is not shown to it
		// either (listAuthority), so it does not exist for the caller.
		_ = c.Error(problem.New(problem.NotFound, "No such authority grant."))
		return
	}
	if credentialID != "" {
		target, err := h.credentials.Get(c.Request.Context(), credentialID)
		if err != nil || target.PartnerID != cred.PartnerID {
			_ = c.Error(&draft.RefusalError{Code: draft.CodeForbidden, Detail: "credential " + credentialID + " belongs to another partner; only its partner revokes its grants"})
			return
		}
	}
	err = h.credentials.RevokeMembership(c.Request.Context(), found.Resource, found.Subject)
	if errors.Is(err, auth.ErrNotFound) {
		_ = c.Error(problem.New(problem.NotFound, "No such authority grant."))
		return
	}
	if err != nil {
		_ = c.Error(err)
		return
	}
	c.Status(http.StatusNoContent)
}

// membershipExpiry keeps a draft's memberships as long as the draft's
// record: acts end at its expiry, and the record is kept Retention after
// its last write.
func membershipExpiry(d draft.Draft) time.Time {
	return d.ExpiresAt().Add(store.Retention)
}

// grantableDraft resolves "draft:<id>" to a draft of the caller's tenant
// and environment in which its partner acts for a participant.
func (h *handlers) grantableDraft(c *gin.Context, cred auth.Credential, res string) (draft.Draft, error) {
	id, ok := strings.CutPrefix(res, "draft:")
	if !ok || id == "" {
		return draft.Draft{}, problem.New(InvalidGrant, "resource must be draft:<draftId>.")
	}
	d, err := h.load(c.Request.Context(), id, cred)
	return d, err
}

func toGrantView(m auth.Membership) grantView {
	v := grantView{Resource: m.Resource, Side: string(m.Side)}
	if id, ok := strings.CutPrefix(string(m.Subject), "credential:"); ok {
		v.CredentialID = id
	} else if _, agentID, ok := m.Subject.Principal(); ok {
		v.PrincipalID = agentID
	}
	return v
}

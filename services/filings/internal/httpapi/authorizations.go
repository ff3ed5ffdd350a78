package httpapi

import (
	"errors"
	"net/http"
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
// confirmation. Like a confirmation, it may be the act that opens the case.
func (h *handlers) recordConsent(route draft.Route) gin.HandlerFunc {
	return func(c *gin.Context) {
		var b consentBody
		if err := httpserver.DecodeJSON(c, &b); err != nil {
			_ = c.Error(err)
			return
		}
		if b.DraftID == "" {
			_ = c.Error(&draft.ValidationError{Field: "draftId", Reason: "is required"})
			return
		}
		cred, _ := auth.CredentialFrom(c.Request.Context())
		h.apply(c, b.DraftID, cred, route, func(d draft.Draft) (draft.Outcome, error) {
			if b.DraftDigest != d.Digest() {
				return draft.Outcome{}, &draft.RefusalError{Code: draft.CodeDigestMismatch, Detail: "the consent names digest " + b.DraftDigest + ", the draft's is " + d.Digest()}
			}
			return d.WithConsent(b.ParticipantID, h.now(), b.ConsentReference)
		})
	}
}

// grantBody binds a credential or a principal to a side of a draft (and so
// of the case it opens).
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

func (h *handlers) grantAuthority(c *gin.Context) {
	var b grantBody
	if err := httpserver.DecodeJSON(c, &b); err != nil {
		_ = c.Error(err)
		return
	}
	cred, _ := auth.CredentialFrom(c.Request.Context())
	m, err := h.membership(c, cred, b.Resource, b.Side, b.CredentialID, b.PrincipalID)
	if err != nil {
		_ = c.Error(err)
		return
	}
	if err := h.credentials.Grant(c.Request.Context(), m); err != nil {
		_ = c.Error(err)
		return
	}
	c.JSON(http.StatusCreated, gin.H{"data": toGrantView(m), "requestId": requestid.Get(c)})
}

func (h *handlers) listAuthority(c *gin.Context) {
	cred, _ := auth.CredentialFrom(c.Request.Context())
	if _, err := h.grantableDraft(c, cred, c.Query("resource")); err != nil {
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
		out = append(out, toGrantView(m))
	}
	c.JSON(http.StatusOK, gin.H{"data": out, "requestId": requestid.Get(c)})
}

func (h *handlers) revokeAuthority(c *gin.Context) {
	cred, _ := auth.CredentialFrom(c.Request.Context())
	m, err := h.membership(c, cred, c.Query("resource"), string(auth.Claimant), c.Query("credentialId"), c.Query("principalId"))
	if err != nil {
		_ = c.Error(err)
		return
	}
	err = h.credentials.RevokeMembership(c.Request.Context(), m.Resource, m.Subject)
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

// membership validates a grant's parts: the resource is a draft of the
// caller's tenant, and exactly one subject is named.
func (h *handlers) membership(c *gin.Context, cred auth.Credential, res, side, credentialID, principalID string) (auth.Membership, error) {
	d, err := h.grantableDraft(c, cred, res)
	if err != nil {
		return auth.Membership{}, err
	}
	m := auth.Membership{Resource: res, Side: auth.Side(side), ExpiresAt: membershipExpiry(d)}
	switch {
	case credentialID != "" && principalID == "":
		target, err := h.credentials.Get(c.Request.Context(), credentialID)
		if err != nil || target.Tenant != cred.Tenant || target.Environment != cred.Environment {
			return auth.Membership{}, problem.Newf(InvalidGrant, "No credential %s in this tenant and environment.", credentialID)
		}
		m.Subject = auth.CredentialSubject(credentialID)
	case principalID != "" && credentialID == "":
		m.Subject = auth.PrincipalSubject(principalID)
	default:
		return auth.Membership{}, problem.New(InvalidGrant, "Name exactly one of credentialId and principalId.")
	}
	if !m.Side.Valid() {
		return auth.Membership{}, problem.New(InvalidGrant, "side must be claimant or respondent.")
	}
	return m, nil
}

// membershipExpiry keeps a draft's memberships as long as the draft's
// record: acts end at its expiry, and the record is kept Retention after
// its last write.
func membershipExpiry(d draft.Draft) time.Time {
	return d.ExpiresAt().Add(store.Retention)
}

// grantableDraft resolves "draft:<id>" to a draft of the caller's tenant.
func (h *handlers) grantableDraft(c *gin.Context, cred auth.Credential, res string) (draft.Draft, error) {
	id, ok := strings.CutPrefix(res, "draft:")
	if !ok || id == "" {
		return draft.Draft{}, problem.New(InvalidGrant, "resource must be draft:<draftId>.")
	}
	_, d, err := h.load(c.Request.Context(), id, cred)
	return d, err
}

func toGrantView(m auth.Membership) grantView {
	v := grantView{Resource: m.Resource, Side: string(m.Side)}
	if id, ok := strings.CutPrefix(string(m.Subject), "credential:"); ok {
		v.CredentialID = id
	} else {
		v.PrincipalID = strings.TrimPrefix(string(m.Subject), "principal:")
	}
	return v
}

// The administrators' changes: extensions, brownouts and notice contacts,
// each validated against the policy, stored, refreshed at once and audited.

package admin

import (
	"encoding/json"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/pcourt/pcourt/libs/httpserver"
	"github.com/pcourt/pcourt/libs/mail"
	"github.com/pcourt/pcourt/libs/problem"
	"github.com/pcourt/pcourt/libs/requestid"
	"github.com/pcourt/pcourt/services/compat-edge/internal/policy"
	"github.com/pcourt/pcourt/services/compat-edge/internal/store"
)

type extensionRequest struct {
	Sunset string `json:"sunset"`
}

// approveExtension sets an integration's deadline: later than any already
// approved, never earlier (409 extension_shortened).
func (a *API) approveExtension(c *gin.Context) {
	who, ok := actor(c)
	if !ok {
		return
	}
	f, ok := family(c)
	if !ok {
		return
	}
	integration := c.Param("integration")
	if integration == "" || len(integration) > policy.MaxIntegrationBytes {
		_ = c.Error(invalid("The integration id must be 1 to %d bytes.", policy.MaxIntegrationBytes))
		return
	}
	var req extensionRequest
	if err := httpserver.DecodeJSON(c, &req); err != nil {
		_ = c.Error(err)
		return
	}
	until, err := policy.ParseDate(req.Sunset)
	if err != nil {
		_ = c.Error(invalid("sunset: %s", err))
		return
	}
	if w := a.Policy().Window(f); !w.GA.IsZero() && !until.Time().After(w.End(nil)) {
		_ = c.Error(invalid("sunset %s is not after the window's end, %s: it would extend nothing.", until, w.End(nil).Format(time.DateOnly)))
		return
	}
	if err := a.Store.ApproveExtension(c, f, integration, until); err != nil {
		_ = c.Error(err)
		return
	}
	a.applied(c, who, "extension.approve", string(f)+"/"+integration, req)
}

type brownoutRequest struct {
	Start time.Time `json:"start"`
	End   time.Time `json:"end"`
}

// scheduleBrownout adds a brownout: at most 24 hours, after the family's
// window ends (the policy would never act on one inside it).
func (a *API) scheduleBrownout(c *gin.Context) {
	who, ok := actor(c)
	if !ok {
		return
	}
	f, ok := family(c)
	if !ok {
		return
	}
	var req brownoutRequest
	if err := httpserver.DecodeJSON(c, &req); err != nil {
		_ = c.Error(err)
		return
	}
	span := policy.Span{Start: req.Start.UTC(), End: req.End.UTC()}
	w := a.Policy().Window(f)
	switch {
	case !span.End.After(span.Start) || span.End.Sub(span.Start) > policy.MaxBrownout:
		_ = c.Error(invalid("A brownout ends after it starts and lasts at most %s.", policy.MaxBrownout))
		return
	case w.GA.IsZero():
		_ = c.Error(invalid("Family %s has no general availability date, so no window to end.", f))
		return
	case span.Start.Before(w.End(nil)):
		_ = c.Error(invalid("A brownout starts after the window ends (%s).", w.End(nil).Format(time.RFC3339)))
		return
	case !span.End.After(a.Now()):
		_ = c.Error(invalid("The brownout is over already."))
		return
	}
	st, err := a.Store.Load(c, f)
	if err != nil {
		_ = c.Error(err)
		return
	}
	st.Brownouts = append(st.Brownouts, span)
	if err := a.Store.Save(c, f, st); err != nil {
		_ = c.Error(err)
		return
	}
	a.applied(c, who, "brownout.schedule", string(f), spanView(span))
}

type contactRequest struct {
	Email string `json:"email"`
}

// setContact sets the address a partner's notices go to ("" removes it).
func (a *API) setContact(c *gin.Context) {
	who, ok := actor(c)
	if !ok {
		return
	}
	partner := c.Param("partner")
	if partner == "" || len(partner) > policy.MaxIntegrationBytes {
		_ = c.Error(invalid("The partner id must be 1 to %d bytes.", policy.MaxIntegrationBytes))
		return
	}
	var req contactRequest
	if err := httpserver.DecodeJSON(c, &req); err != nil {
		_ = c.Error(err)
		return
	}
	if req.Email != "" && !mail.ValidAddress(req.Email) {
		_ = c.Error(invalid("email %q is not a plain address.", problem.Clip(req.Email)))
		return
	}
	if err := a.Store.SetContact(c, partner, req.Email); err != nil {
		_ = c.Error(err)
		return
	}
	a.applied(c, who, "contact.set", partner, req)
}

// applied audits a change that was made, acts on it here, and answers.
// The change and its audit entry are two writes (the family's key and the
// stream are in different slots): a change whose entry cannot be written
// is answered 500 and logged with everything the entry would have held.
func (a *API) applied(c *gin.Context, who, action, target string, change any) {
	raw, _ := json.Marshal(change)
	entry := store.AuditEntry{Actor: who, At: a.Now().UTC(), Action: action, Target: target, Change: raw}
	if err := a.Store.AppendAudit(c, entry); err != nil {
		a.Logger.Error("compatibility change made but not audited", "actor", who, "action", action, "target", target, "change", string(raw), "err", err)
		_ = c.Error(err)
		return
	}
	a.Logger.Info("compatibility change", "actor", who, "action", action, "target", target, "change", string(raw))
	if a.Refresh != nil {
		if err := a.Refresh(c); err != nil {
			a.Logger.Warn("compatibility change stored; this replica acts on it at the next refresh", "err", err)
		}
	}
	c.JSON(http.StatusOK, gin.H{"data": entry, "requestId": requestid.Get(c)})
}

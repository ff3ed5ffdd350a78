package console

import (
	"crypto/rand"
	"encoding/base32"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/pcourt/pcourt/libs/auth"
	"github.com/pcourt/pcourt/libs/httpserver"
	"github.com/pcourt/pcourt/libs/problem"
	"github.com/pcourt/pcourt/libs/requestid"
	"github.com/pcourt/pcourt/libs/webpage"
)

// Capability is what a console session may do.
type Capability string

// The capabilities a link grants. View is always required: every page reads.
const (
	CapView            Capability = "view"
	CapManageEndpoints Capability = "manage_endpoints"
	CapReplay          Capability = "replay"
)

var allCapabilities = []Capability{CapView, CapManageEndpoints, CapReplay}

// Bounds of a link's lifetime (ttlSeconds).
const (
	MinLinkTTL = 5 * time.Minute
	MaxLinkTTL = 7 * 24 * time.Hour
)

// InvalidLink is the problem of a link request the console cannot issue.
var InvalidLink = problem.Code{Name: "invalid_console_link", Status: http.StatusUnprocessableEntity, Title: "Console link request invalid"}

// Codes returns the console's problem codes, the rows of owner console in
// docs/problems.md.
func Codes() []problem.Code { return []problem.Code{InvalidLink} }

// LinksPath is the API route of console links.
const LinksPath = "/api/console/links"

type createLinkRequest struct {
	Capabilities []string `json:"capabilities"`
	TTLSeconds   *int64   `json:"ttlSeconds"`
	ReturnURL    string   `json:"returnUrl"`
}

type linkView struct {
	ID           string    `json:"id"`
	URL          string    `json:"url"`
	Capabilities []string  `json:"capabilities"`
	ReturnURL    string    `json:"returnUrl"`
	ExpiresAt    time.Time `json:"expiresAt"`
}

// registerAPI adds the console's public API (console links, which the
// edge routes here) to the service's router: partner credentials only,
// bound to a partner, with a small body limit. Refusals go to c.Error and
// the server's problem middleware, like every other service's; other
// paths under /api/console are the server's 404.
func (cs *Console) registerAPI(r gin.IRouter) {
	g := r.Group(LinksPath, noStore, httpserver.BodyLimit(16<<10), auth.Middleware(cs.creds),
		auth.RequireRole(auth.RolePlatformOrchestrator), requirePartner)
	g.POST("", cs.createLink)
	g.DELETE("/:id", cs.revokeLink)
}

func noStore(c *gin.Context) { c.Header("Cache-Control", "no-store"); c.Next() }

// requirePartner refuses credentials bound to no partner: a console belongs
// to one.
func requirePartner(c *gin.Context) {
	if cred, _ := auth.CredentialFrom(c.Request.Context()); cred.PartnerID == "" {
		_ = c.Error(problem.New(problem.Forbidden, "Console links belong to a partner; use a credential bound to one."))
		c.Abort()
		return
	}
	c.Next()
}

// createLink mints a single-use console link. The token is shown once, in
// the URL's fragment; only its hash is kept. There is no Idempotency-Key:
// a stored response would keep the secret at rest. A retry mints another
// link; an unused one expires or is revoked.
func (cs *Console) createLink(c *gin.Context) {
	var req createLinkRequest
	if err := httpserver.DecodeJSON(c, &req); err != nil {
		_ = c.Error(err)
		return
	}
	caps, ttl, ret, err := cs.checkLinkRequest(req)
	if err != nil {
		_ = c.Error(problem.New(InvalidLink, err.Error()))
		return
	}
	cred, _ := auth.CredentialFrom(c.Request.Context())
	now := cs.now().UTC().Truncate(time.Millisecond)
	id := newLinkID()
	token := linkTokenPrefix + id + "." + auth.NewToken("")
	l := Link{ID: id, Scope: scopeOfCredential(cred), Minter: cred.PublicID, Capabilities: caps, ReturnURL: ret,
		CreatedAt: now, ExpiresAt: now.Add(ttl), State: LinkIssued}
	ctx := c.Request.Context()
	if err := cs.store.CreateLink(ctx, l, auth.HashToken(token)); err != nil {
		_ = c.Error(err)
		return
	}
	cs.audit(c, l.Scope, AuditEntry{Action: "link_minted", Actor: cred.PublicID, Link: id,
		Detail: fmt.Sprintf("capabilities %s; expires %s", joinCaps(caps), l.ExpiresAt.Format(time.RFC3339))})
	view := linkView{ID: id, URL: cs.origin + cs.prefix + "/console/#link=" + token, ReturnURL: ret, ExpiresAt: l.ExpiresAt}
	for _, cp := range caps {
		view.Capabilities = append(view.Capabilities, string(cp))
	}
	c.Header("Location", LinksPath+"/"+id)
	c.JSON(http.StatusCreated, gin.H{"data": view, "requestId": requestid.Get(c)})
}

func (cs *Console) checkLinkRequest(req createLinkRequest) ([]Capability, time.Duration, string, error) {
	var caps []Capability
	for _, s := range req.Capabilities {
		cp := Capability(s)
		if !slices.Contains(allCapabilities, cp) {
			return nil, 0, "", fmt.Errorf("capability %q is not one of view, manage_endpoints, replay", problem.Clip(s))
		}
		if slices.Contains(caps, cp) {
			return nil, 0, "", fmt.Errorf("capability %q is listed twice", s)
		}
		caps = append(caps, cp)
	}
	if !slices.Contains(caps, CapView) {
		return nil, 0, "", errors.New("capabilities must include view: every console page reads")
	}
	if req.TTLSeconds == nil {
		return nil, 0, "", errors.New("ttlSeconds is required")
	}
	ttl := time.Duration(*req.TTLSeconds) * time.Second
	if *req.TTLSeconds < int64(MinLinkTTL/time.Second) || *req.TTLSeconds > int64(MaxLinkTTL/time.Second) {
		return nil, 0, "", fmt.Errorf("ttlSeconds must be from %d to %d", int64(MinLinkTTL/time.Second), int64(MaxLinkTTL/time.Second))
	}
	ret, err := checkReturnURL(req.ReturnURL)
	if err != nil {
		return nil, 0, "", err
	}
	slices.SortFunc(caps, func(a, b Capability) int { return slices.Index(allCapabilities, a) - slices.Index(allCapabilities, b) })
	return caps, ttl, ret, nil
}

// checkReturnURL accepts an absolute https URL (http only for a loopback
// host), without user information or fragment, of at most 2 KiB: the page
// an expired link leads back to, in the partner's own application.
func checkReturnURL(s string) (string, error) {
	u, err := url.Parse(s)
	bad := err != nil || len(s) > 2048 || u.Host == "" || u.User != nil || u.Fragment != "" ||
		!(u.Scheme == "https" || (u.Scheme == "http" && webpage.Loopback(u.Hostname())))
	if bad {
		return "", errors.New("returnUrl must be an absolute https URL (http only on a loopback host) without user information or fragment, at most 2048 characters")
	}
	return u.String(), nil
}

// revokeLink revokes a link of the caller's partner: unused, it can no
// longer be opened; in use, its session ends and the session's credential
// is revoked. Another partner's link reads as absent.
func (cs *Console) revokeLink(c *gin.Context) {
	id := c.Param("id")
	if !validLinkID(id) {
		_ = c.Error(problem.Newf(problem.NotFound, "No console link %s.", problem.Clip(id)))
		return
	}
	cred, _ := auth.CredentialFrom(c.Request.Context())
	scope := scopeOfCredential(cred)
	prev, sessionCred, err := cs.store.Revoke(c.Request.Context(), scope, id)
	if errors.Is(err, ErrLinkNotFound) {
		_ = c.Error(problem.Newf(problem.NotFound, "No console link %s.", id))
		return
	}
	if err != nil {
		_ = c.Error(err)
		return
	}
	if sessionCred != "" {
		if err := cs.creds.Revoke(c.Request.Context(), sessionCred); err != nil && !errors.Is(err, auth.ErrNotFound) {
			_ = c.Error(err)
			return
		}
	}
	if prev != LinkRevoked {
		cs.audit(c, scope, AuditEntry{Action: "link_revoked", Actor: cred.PublicID, Link: id, Detail: "was " + prev})
	}
	c.Status(http.StatusNoContent)
}

func scopeOfCredential(c auth.Credential) Scope {
	return Scope{Tenant: c.Tenant, Environment: string(c.Environment), PartnerID: c.PartnerID}
}

// linkTokenPrefix begins every link token: pccl_<link id>.<secret>.
const linkTokenPrefix = "pccl_"

var lowerBase32 = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

func newLinkID() string {
	var b [15]byte
	_, _ = rand.Read(b[:])
	return "cl_" + lowerBase32.EncodeToString(b[:])
}

// validLinkID: cl_ and 24 characters of lowercase base32.
func validLinkID(s string) bool {
	rest, ok := strings.CutPrefix(s, "cl_")
	if !ok || len(rest) != 24 {
		return false
	}
	for _, r := range rest {
		if !(r >= 'a' && r <= 'z' || r >= '2' && r <= '7') {
			return false
		}
	}
	return true
}

// splitToken returns the link id a token or cookie names.
func splitToken(token, prefix string) (string, bool) {
	rest, ok := strings.CutPrefix(token, prefix)
	if !ok || len(token) > 200 {
		return "", false
	}
	id, secret, ok := strings.Cut(rest, ".")
	return id, ok && validLinkID(id) && secret != ""
}

func joinCaps(caps []Capability) string {
	s := make([]string, len(caps))
	for i, c := range caps {
		s[i] = string(c)
	}
	return strings.Join(s, ", ")
}

package proxy

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/pcourt/pcourt/libs/problem"
	"github.com/pcourt/pcourt/services/compat-edge/internal/inventory"
	"github.com/pcourt/pcourt/services/compat-edge/internal/legacyuse"
	"github.com/pcourt/pcourt/services/compat-edge/internal/policy"
)

// AliasRetired is the answer of a retired alias, or of one inside a
// brownout. Its body's type is about:blank, as the spec fixes it.
var AliasRetired = problem.Code{Name: "alias_retired", Status: http.StatusGone, Title: "alias retired"}

// GuidePath is where the edge serves the migration guide that every
// announcement links to (rel="deprecation").
const GuidePath = inventory.GuidePath

// Compat is what the proxy needs for the compatibility policy. The zero
// value announces nothing and records nothing.
type Compat struct {
	Index *inventory.Index
	// Policy returns the policy in force; the edge swaps it when a layer
	// changes.
	Policy func() *policy.Policy
	Now    func() time.Time
	// Integrations returns the ids (credential public id, partner id) of
	// the credential whose token has this SHA-256; asked only when a
	// family has extensions.
	Integrations func(ctx context.Context, tokenHash string) ([]string, error)
	// Record receives each request an owner served on an earlier route
	// that has a canonical successor.
	Record func(legacyuse.Hit)
}

// announcement is what the edge adds to one request's response.
type announcement struct {
	route     *inventory.Route
	decision  policy.Decision
	successor string // filled in; "" when the row has none
	tokenHash string
	at        time.Time
}

// hit is the legacy-use record of the request x, served on an earlier
// route.
func (a *announcement) hit(x *exchange) legacyuse.Hit {
	return legacyuse.Hit{TokenHash: a.tokenHash, Route: a.route.Pattern, At: a.at, RequestID: x.requestID}
}

// decide looks the request up in the inventory and asks the policy. It
// returns nil for a path or method the inventory does not list.
func (p *Proxy) decide(x *exchange) *announcement {
	cp := p.compat
	if cp.Index == nil {
		return nil
	}
	m, ok := cp.Index.Lookup(x.method, x.path)
	if !ok {
		return nil
	}
	a := &announcement{route: m.Route, at: cp.Now()}
	// The token's hash is taken only where it is used: for the legacy-use
	// record of a route with a successor, and when the policy asks which
	// integrations the caller has. A SHA-256 per request is a twentieth of
	// the edge's time on a route that needs neither.
	if m.Route.Successor != "" && cp.Record != nil {
		a.tokenHash = bearerHash(&x.fc.Request.Header)
	}
	a.successor, _ = m.Successor()
	if cp.Policy != nil {
		a.decision = cp.Policy().Decide(m.Route, a.at, func() ([]string, error) {
			if cp.Integrations == nil {
				return nil, nil
			}
			hash := a.tokenHash
			if hash == "" {
				hash = bearerHash(&x.fc.Request.Header)
			}
			if hash == "" {
				return nil, nil
			}
			return cp.Integrations(x.ctx, hash)
		})
	}
	return a
}

// bearerHash is the hex SHA-256 of the request's one bearer token, the
// form credentials are stored under; "" without exactly one.
func bearerHash(h *fasthttp.RequestHeader) string {
	values := h.PeekAll("Authorization")
	if len(values) != 1 {
		return ""
	}
	scheme, token, ok := strings.Cut(string(values[0]), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || token == "" {
		return ""
	}
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// setHeaders writes the policy headers: Deprecation as an RFC 9651 date
// (RFC 9745), Sunset as an IMF-fixdate (RFC 8594) and one Link (RFC 8288)
// to the exact successor and to the guide. Owners' own Link values stay.
func (a *announcement) setHeaders(h *fasthttp.ResponseHeader) {
	h.Set("Deprecation", "@"+strconv.FormatInt(a.decision.Deprecation.Unix(), 10))
	h.Set("Sunset", a.decision.Sunset.UTC().Format(http.TimeFormat))
	link := "<" + GuidePath + `>; rel="deprecation"; type="text/html"`
	if a.successor != "" {
		link = "<" + a.successor + `>; rel="successor-version", ` + link
	}
	h.Add("Link", link)
}

// refuse answers 410 alias_retired without calling the owner. Its body's
// type is about:blank, as the spec fixes it, so it is written here rather
// than as one of the platform's problems.
func (a *announcement) refuse(x *exchange) {
	a.setHeaders(&x.fc.Response.Header)
	why := "is retired"
	if a.decision.Brownout {
		why = "is unavailable during a scheduled brownout and will be retired"
	}
	detail := "This earlier route " + why + "; use " + x.method + " " + a.successor +
		" instead. The migration guide is at " + GuidePath + "."
	body, _ := json.Marshal(problem.Body{
		Type: "about:blank", Title: AliasRetired.Title, Status: AliasRetired.Status, Code: AliasRetired.Name,
		Detail: detail, RequestID: x.requestID,
	})
	x.fc.Response.Header.SetContentType(problem.ContentType)
	x.fc.Response.Header.Set("Cache-Control", "no-store")
	x.fc.SetStatusCode(AliasRetired.Status)
	x.fc.SetBody(append(body, '\n'))
}

package account

import (
	"net"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/pcourt/pcourt/libs/refusal"
)

// The refusals of a client registration (RFC 7591 section 3.2.2's error
// codes), in the order RegisterApp checks them.
const (
	// CodeInvalidClientMetadata: a name missing or unusable, an
	// authentication method, grant type, response type or scope this
	// server does not register.
	CodeInvalidClientMetadata RefusalCode = "invalid_client_metadata"
	// CodeInvalidRedirectURI: no redirect URI, too many, or one that is
	// not https, nor http on a loopback address, or has a fragment.
	CodeInvalidRedirectURI RefusalCode = "invalid_redirect_uri"
)

// AuthMethod is how an application's client authenticates at the token
// endpoint (RFC 7591's token_endpoint_auth_method).
type AuthMethod string

// The methods. A public client (AuthMethodNone: a browser or native
// application, which cannot keep a secret) proves itself by PKCE alone.
const (
	AuthMethodNone   AuthMethod = "none"
	AuthMethodBasic  AuthMethod = "client_secret_basic"
	AuthMethodPost   AuthMethod = "client_secret_post"
	MaxRedirectURIs             = 10
	MaxAppNameLength            = 100
)

// AppClientPrefix begins every application client's id: it tells one
// apart from an agent's client (ocl_) at the token endpoint.
const AppClientPrefix = "oapp_"

// App is an application's OAuth client, registered by the application
// itself (RFC 7591), for the authorization code grant with PKCE and its
// refresh tokens: it acts for the people who approve it, never by client
// credentials, and its name is its own claim, shown as unverified.
type App struct {
	ID           string
	Name         string
	RedirectURIs []string
	AuthMethod   AuthMethod
	// SecretHash is the SHA-256 of a confidential client's secret; "" for
	// a public one.
	SecretHash string
	// Scopes are the most its tokens may carry.
	Scopes    []Scope
	CreatedAt time.Time
}

// Public reports whether the client has no secret and proves itself by
// PKCE alone.
func (a App) Public() bool { return a.AuthMethod == AuthMethodNone }

// AppGrantTypes are the grants every application client is registered
// for: the code, and the refresh tokens it comes with.
var AppGrantTypes = []string{"authorization_code", "refresh_token"}

// AppRegistration is the metadata an application registers with (RFC
// 7591 section 2), as it sent it.
type AppRegistration struct {
	Name          string
	RedirectURIs  []string
	AuthMethod    string
	GrantTypes    []string
	ResponseTypes []string
	Scope         string // space-delimited; all account scopes when empty
}

// hostName is the alphabet of a redirect URI's host name: it is written
// into the consent page's form-action policy, so nothing that could end a
// directive may pass.
var hostName = regexp.MustCompile(`^[A-Za-z0-9.-]{1,253}$`)

// RegisterApp checks a registration, in this order, and returns the
// client (without its secret's hash, which the caller sets for a
// confidential one):
//
//  1. the name: required, at most MaxAppNameLength characters, no control
//     characters (invalid_client_metadata);
//  2. the redirect URIs: 1 to MaxRedirectURIs, distinct, each absolute
//     https, or http on a loopback IP address (RFC 8252 section 7.3; not
//     "localhost", which may resolve elsewhere), with a host, no user
//     information and no fragment (invalid_redirect_uri);
//  3. the authentication method: none, client_secret_basic (the default,
//     as RFC 7591 has it) or client_secret_post;
//  4. the grant types: authorization_code (the default) and refresh_token
//     only: client credentials are for verified agents' clients, which
//     their operators register;
//  5. the response types: code alone;
//  6. the scope: account scopes, each once; all of them when absent.
func RegisterApp(id string, r AppRegistration, now time.Time) (App, error) {
	name := strings.TrimSpace(r.Name)
	if name == "" || len([]rune(name)) > MaxAppNameLength || strings.IndexFunc(name, unicode.IsControl) >= 0 {
		return App{}, refusal.New(CodeInvalidClientMetadata, "client_name is required: 1 to %d characters, no control characters", MaxAppNameLength)
	}
	if len(r.RedirectURIs) == 0 || len(r.RedirectURIs) > MaxRedirectURIs {
		return App{}, refusal.New(CodeInvalidRedirectURI, "redirect_uris must list 1 to %d URIs", MaxRedirectURIs)
	}
	for i, u := range r.RedirectURIs {
		if err := checkRedirectURI(u); err != nil {
			return App{}, err
		}
		if slices.Contains(r.RedirectURIs[:i], u) {
			return App{}, refusal.New(CodeInvalidRedirectURI, "redirect_uris lists %q twice", u)
		}
	}
	method := AuthMethod(r.AuthMethod)
	if method == "" {
		method = AuthMethodBasic
	}
	if method != AuthMethodNone && method != AuthMethodBasic && method != AuthMethodPost {
		return App{}, refusal.New(CodeInvalidClientMetadata, "token_endpoint_auth_method must be none, client_secret_basic or client_secret_post")
	}
	for _, g := range r.GrantTypes {
		if !slices.Contains(AppGrantTypes, g) {
			return App{}, refusal.New(CodeInvalidClientMetadata, "grant_types may be authorization_code and refresh_token only: client credentials are for verified agents' clients, which their operators register")
		}
	}
	if len(r.GrantTypes) > 0 && !slices.Contains(r.GrantTypes, "authorization_code") {
		return App{}, refusal.New(CodeInvalidClientMetadata, "grant_types must include authorization_code")
	}
	for _, rt := range r.ResponseTypes {
		if rt != "code" {
			return App{}, refusal.New(CodeInvalidClientMetadata, "response_types may be code only")
		}
	}
	scopes := slices.Clone(Scopes)
	if strings.TrimSpace(r.Scope) != "" {
		scopes = nil
		for _, s := range strings.Fields(r.Scope) {
			if !slices.Contains(Scopes, Scope(s)) || slices.Contains(scopes, Scope(s)) {
				return App{}, refusal.New(CodeInvalidClientMetadata, "scope must list account scopes, each once")
			}
			scopes = append(scopes, Scope(s))
		}
	}
	return App{ID: id, Name: name, RedirectURIs: slices.Clone(r.RedirectURIs), AuthMethod: method, Scopes: scopes, CreatedAt: now}, nil
}

func checkRedirectURI(raw string) error {
	bad := func(why string) error {
		return refusal.New(CodeInvalidRedirectURI, "redirect URI %q %s", clip(raw), why)
	}
	u, err := url.Parse(raw)
	switch {
	case err != nil || len(raw) > 2000 || strings.ContainsAny(raw, " \t\r\n\\"):
		return bad("is not a URI")
	case u.Fragment != "" || strings.Contains(raw, "#"):
		return bad("has a fragment (RFC 6749 section 3.1.2)")
	case u.User != nil || u.Opaque != "" || u.Host == "":
		return bad("must be absolute, with a host and no user information")
	case !hostName.MatchString(strings.Trim(u.Hostname(), "[]")) && net.ParseIP(u.Hostname()) == nil:
		return bad("has a host name of characters other than A-Z a-z 0-9 . -")
	case u.Scheme == "https":
		return nil
	case u.Scheme == "http" && net.ParseIP(u.Hostname()) != nil && net.ParseIP(u.Hostname()).IsLoopback():
		return nil
	}
	return bad("must be https, or http on a loopback IP address (127.0.0.1, [::1])")
}

func clip(s string) string {
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}

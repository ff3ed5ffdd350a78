package auth

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"
)

// Account sessions are people's signed-in browsers (docs/accounts.md,
// "Sessions and membership"). The accounts service starts one at a sign-in
// and sets its secret as a cookie; every service whose website routes or
// hosted pages take sessions reads it here, in the credential keyspace,
// as it reads a bearer credential: the same lookup, the same cache, so a
// sign-out is refused everywhere within CacheTTL and no service asks
// accounts about a session.
//
// A session is an account credential of its own kind:
//
//   - its audience is SessionAudience, which no OAuth client can ask for,
//     so a session is never a bearer token (Middleware refuses it in an
//     Authorization header) and a token is never a session;
//   - it carries every account scope: it is the account itself acting, not
//     a grant of some of its powers to an application; what it may touch
//     is still only what the account's memberships admit it to;
//   - Middleware takes it from its cookie only where the route says so
//     (AcceptAccountSessions), refuses a mutation from another origin, and
//     makes the answer private.

// SessionCookieName is the account session's cookie, set by the accounts
// service for the whole site (path /) so that the website routes and the
// hosted pages of other services receive it: HttpOnly, SameSite=Strict,
// Secure behind TLS.
const SessionCookieName = "pc_account_session"

// SessionAudience is the audience of every account session's credential.
// It is not a URL, so no resource indicator (RFC 8707) names it.
const SessionAudience = "pcourt:account-session"

// SessionClientID is the client every account session's credential names:
// the platform's own pages, not an OAuth client.
const SessionClientID = "pcourt-account-pages"

// MaxAccountSessionLifetime bounds a session's life from its sign-in: a
// person signs in again at least once a day.
const MaxAccountSessionLifetime = 24 * time.Hour

// The ways a person signs in, kept on the session (its Label).
const (
	SignInPasskey = "passkey"
	SignInCode    = "code"
)

// AccountSessionRequest describes a session to start.
type AccountSessionRequest struct {
	Tenant      string
	Environment Environment
	AccountID   string
	// ActorID, when set, is the person who acts for AccountID, an
	// organisation of which the person is a member: the session is the
	// organisation's, as the person's is theirs.
	ActorID string
	// Method is how the person signed in: SignInPasskey or SignInCode.
	Method   string
	Lifetime time.Duration
}

// Validate reports the first missing or unusable field.
func (r AccountSessionRequest) Validate() error {
	if err := validateAccount(r.Tenant, r.Environment, r.AccountID); err != nil {
		return err
	}
	switch {
	case r.ActorID != "" && (!wellFormedID(r.ActorID) || r.ActorID == r.AccountID):
		return fmt.Errorf("actor id %q is not another account's id", r.ActorID)
	case r.Method != SignInPasskey && r.Method != SignInCode:
		return fmt.Errorf("sign-in method %q is not %s or %s", r.Method, SignInPasskey, SignInCode)
	case r.Lifetime <= 0 || r.Lifetime > MaxAccountSessionLifetime:
		return fmt.Errorf("lifetime %s is not within (0, %s]", r.Lifetime, MaxAccountSessionLifetime)
	}
	return nil
}

// StartAccountSession starts a session and returns its secret, the
// cookie's value, which is never stored and cannot be shown again.
func (s *Store) StartAccountSession(ctx context.Context, req AccountSessionRequest) (string, Credential, error) {
	if err := req.Validate(); err != nil {
		return "", Credential{}, fmt.Errorf("starting account session: %w", err)
	}
	prefix := "pc_ses_sbx_"
	if req.Environment == Live {
		prefix = "pc_ses_live_"
	}
	token := NewToken(prefix)
	now := s.now().UTC().Truncate(time.Millisecond)
	cred := Credential{
		PublicID:    "ses_" + strings.TrimPrefix(newPublicID(), "cred_"),
		Tenant:      req.Tenant,
		Environment: req.Environment,
		AccountID:   req.AccountID,
		ClientID:    SessionClientID,
		Scopes:      slices.Clone(Scopes),
		Audience:    SessionAudience,
		ActorID:     req.ActorID,
		Label:       req.Method,
		CreatedAt:   now,
		ExpiresAt:   now.Add(req.Lifetime),
	}
	if err := s.storeAccountCredential(ctx, token, cred); err != nil {
		return "", Credential{}, fmt.Errorf("storing account session: %w", err)
	}
	return token, cred, nil
}

// AccountSession returns the live session whose secret is token; false
// when there is none (unknown, ended, expired, or a credential that is not
// a session).
func (s *Store) AccountSession(ctx context.Context, token string) (Credential, bool, error) {
	if token == "" {
		return Credential{}, false, nil
	}
	cred, err := s.Authenticate(ctx, token)
	if errors.Is(err, ErrInvalidCredential) {
		return Credential{}, false, nil
	}
	if err != nil {
		return Credential{}, false, err
	}
	return cred, cred.Session(), nil
}

// EndAccountSession ends the session whose secret is token: from then on
// it signs nothing in, on this replica at once and on every other within
// CacheTTL. Ending an ended or unknown session is not an error; a token
// that is not a session's is left alone.
func (s *Store) EndAccountSession(ctx context.Context, token string) error {
	cred, live, err := s.AccountSession(ctx, token)
	if err != nil || !live {
		return err
	}
	if err := s.Revoke(ctx, cred.PublicID); err != nil && !errors.Is(err, ErrNotFound) {
		return err
	}
	s.forget(HashToken(token))
	return nil
}

// SessionCSRF is the CSRF token of the session whose secret is token: the
// token every form of the session's pages carries, on whichever service
// serves the page. It is derived, not stored, so every service computes
// the same one, and it is one-way: a page that shows it never shows the
// session's secret.
func SessionCSRF(token string) string {
	sum := sha256.Sum256([]byte("pcourt account session csrf\x00" + token))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// Session reports whether the credential is an account session's.
func (c Credential) Session() bool { return c.ForAccount() && c.Audience == SessionAudience }

// AcceptAccountSessions lets Middleware take an account session from its
// cookie when the request sends no Authorization header, on a route a
// person acts on from the site's own pages. sameOrigin decides whether a
// request comes from the site (webpage.Site.SameOrigin): a session's
// mutation from anywhere else is refused before anything reads it, which,
// with the cookie's SameSite=Strict, is the website routes' defence
// against cross-site requests. Every answer to a session is private
// (Cache-Control: private, no-store; Vary: Cookie).
func AcceptAccountSessions(sameOrigin func(*http.Request) bool) MiddlewareOption {
	return func(o *middlewareOptions) { o.sessionOrigin = sameOrigin }
}

// sessionCookie is the account session's cookie of r, if it sends one
// (exactly one: two would mean a cookie planted beside the site's own,
// and which counts would depend on their order).
func sessionCookie(r *http.Request) (string, bool) {
	var value string
	n := 0
	for _, c := range r.Cookies() {
		if c.Name == SessionCookieName {
			value, n = c.Value, n+1
		}
	}
	return value, n == 1 && value != ""
}

// safeMethod reports whether a request with method changes nothing
// (RFC 9110, section 9.2.1).
func safeMethod(method string) bool {
	return method == http.MethodGet || method == http.MethodHead || method == http.MethodOptions
}

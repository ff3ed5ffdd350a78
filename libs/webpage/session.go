package webpage

import (
	"net/http"
	"time"

	"github.com/pcourt/pcourt/libs/auth"
)

// A single-use link signs a person in. Its token rides in the URL
// fragment, which no request carries; the page's module posts it to a
// preview, which spends nothing and shows what the link signs in as with a
// "Sign in as …" button. Only that button's form posts the token with
// ConfirmField=ConfirmValue to the exchange, which spends it and sets the
// session cookie in one store step. The module never sends the field (it
// posts to the preview, and form.submit() sends no button's value), so an
// exchange carrying it is a person's click: the origin check stops other
// sites from posting, not a person opening someone else's link on the very
// page, which would sign them in as the sender.
const (
	ConfirmField = "confirm"
	ConfirmValue = "signin"
)

// Confirmed reports whether a parsed exchange form carries the person's
// confirmation.
func Confirmed(r *http.Request) bool { return r.PostForm.Get(ConfirmField) == ConfirmValue }

// MatchToken reports whether a presented token hashes to the stored hash,
// comparing the SHA-256 hashes in constant time. Only hashes are stored,
// and only hashes are compared: the one way every link, session and CSRF
// check of the pages goes.
func MatchToken(token, storedHash string) bool {
	return token != "" && Equal(auth.HashToken(token), storedHash)
}

// MaxCookieValue bounds a session cookie's value: a longer one is no
// session of the pages, and is never looked up.
const MaxCookieValue = 200

// SessionCookie is a session's cookie: HttpOnly (no script reads it),
// SameSite=Strict (no other site's request carries it) and scoped to Path.
type SessionCookie struct {
	Name   string
	Path   string // the pages' path as the browser addresses it, Site.Prefix included
	Secure bool
}

// Cookie returns the session cookie name scoped to the site's path p
// ("/console", "/respond/<case id>").
func (s Site) Cookie(name, p string) SessionCookie {
	return SessionCookie{Name: name, Path: s.Prefix + p, Secure: s.SecureCookie}
}

// Set hands the browser a session lasting lifetime; the store's record
// must expire with it.
func (k SessionCookie) Set(w http.ResponseWriter, value string, lifetime time.Duration) {
	http.SetCookie(w, &http.Cookie{Name: k.Name, Value: value, Path: k.Path, MaxAge: int(lifetime / time.Second),
		HttpOnly: true, Secure: k.Secure, SameSite: http.SameSiteStrictMode})
}

// Clear removes the browser's cookie (sign-out). The service ends the
// session in its store first: a cleared cookie alone would leave a
// session anyone holding the old value could still use.
func (k SessionCookie) Clear(w http.ResponseWriter) {
	http.SetCookie(w, &http.Cookie{Name: k.Name, Value: "", Path: k.Path, MaxAge: -1,
		HttpOnly: true, Secure: k.Secure, SameSite: http.SameSiteStrictMode})
}

// Value returns the request's session cookie, if it carries a plausible
// one; the service then looks its hash up.
func (k SessionCookie) Value(r *http.Request) (string, bool) {
	ck, err := r.Cookie(k.Name)
	if err != nil || ck.Value == "" || len(ck.Value) > MaxCookieValue {
		return "", false
	}
	return ck.Value, true
}

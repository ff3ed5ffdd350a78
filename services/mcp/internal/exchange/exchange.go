// Package exchange turns the account token an MCP client sent (its
// audience the MCP server) into one for the API, by the token exchange of
// RFC 8693 at the accounts service's token endpoint, where the MCP server
// authenticates as its own client. The MCP server never passes on a token
// issued to it: the API refuses one for another audience, and the one it
// is given instead has the same account, scopes and case and lives no
// longer than the token it was exchanged for (docs/accounts.md, "MCP").
//
// Exchanged tokens are kept in memory until shortly before they expire,
// keyed by the SHA-256 of the token they were exchanged for, so a tool
// call costs no exchange while its client's token lives. A kept token is
// only ever used behind its subject token: the MCP server authenticates
// the subject on every request (libs/auth, within its cache's two
// seconds of a revocation), and revoking the account's client revokes the
// exchanged tokens with it (they are recorded under that client).
package exchange

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

// The URNs of RFC 8693.
const (
	GrantType       = "urn:ietf:params:oauth:grant-type:token-exchange"
	AccessTokenType = "urn:ietf:params:oauth:token-type:access_token"
)

// Config is where and as whom the MCP server exchanges tokens.
type Config struct {
	// TokenURL is the authorization server's token endpoint.
	TokenURL string
	// ClientID and ClientSecret are the MCP server's own client.
	ClientID, ClientSecret string
	// Resource is the API's resource identifier, the audience asked for.
	Resource string
}

// Refused is the authorization server's refusal of an exchange (RFC 6749,
// section 5.2): invalid_grant when the subject token is expired, revoked
// or not the MCP server's; anything else is the deployment's fault.
type Refused struct {
	Status      int
	Code        string `json:"error"`
	Description string `json:"error_description"`
}

func (r *Refused) Error() string {
	return fmt.Sprintf("the token exchange was refused (%d %s): %s", r.Status, r.Code, r.Description)
}

// SubjectRefused reports whether the refusal is of the subject token
// itself (the caller's to fix by authorizing again), not of the MCP
// server's client or request.
func (r *Refused) SubjectRefused() bool { return r.Code == "invalid_grant" }

// Exchanger exchanges and keeps tokens.
type Exchanger struct {
	cfg Config
	hc  *http.Client
	now func() time.Time

	mu   sync.Mutex
	kept map[[sha256.Size]byte]kept
}

type kept struct {
	token   string
	expires time.Time
}

// keepAtMost bounds the tokens kept: past it, expired ones are dropped
// and, if none was, a new token is used without being kept.
const keepAtMost = 10000

// renewBefore is how long before its expiry a kept token is exchanged
// again, so no call starts with a token about to lapse on the way.
const renewBefore = 15 * time.Second

// New returns an exchanger; now is the clock (nil: time.Now).
func New(cfg Config, hc *http.Client, now func() time.Time) *Exchanger {
	if now == nil {
		now = time.Now
	}
	return &Exchanger{cfg: cfg, hc: hc, now: now, kept: make(map[[sha256.Size]byte]kept)}
}

// APIToken returns a token for the API acting as subject does. An error is
// a *Refused when the authorization server answered, and otherwise the
// transport's.
func (e *Exchanger) APIToken(ctx context.Context, subject string) (string, error) {
	key := sha256.Sum256([]byte(subject))
	now := e.now()
	e.mu.Lock()
	k, ok := e.kept[key]
	e.mu.Unlock()
	if ok && now.Add(renewBefore).Before(k.expires) {
		return k.token, nil
	}
	token, lifetime, err := e.exchange(ctx, subject)
	if err != nil {
		return "", err
	}
	e.keep(key, kept{token: token, expires: now.Add(lifetime)})
	return token, nil
}

func (e *Exchanger) keep(key [sha256.Size]byte, k kept) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.kept) >= keepAtMost {
		now := e.now()
		for other, old := range e.kept {
			if !now.Before(old.expires) {
				delete(e.kept, other)
			}
		}
		if len(e.kept) >= keepAtMost {
			return
		}
	}
	e.kept[key] = k
}

// maxAnswer bounds what is read of the token endpoint's answer.
const maxAnswer = 64 << 10

func (e *Exchanger) exchange(ctx context.Context, subject string) (string, time.Duration, error) {
	form := url.Values{
		"grant_type":         {GrantType},
		"subject_token":      {subject},
		"subject_token_type": {AccessTokenType},
		"resource":           {e.cfg.Resource},
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.cfg.TokenURL, strings.NewReader(form.Encode()))
	if err != nil {
		return "", 0, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	// RFC 6749, section 2.3.1: the client id and secret form-encoded
	// before they are joined.
	req.SetBasicAuth(url.QueryEscape(e.cfg.ClientID), url.QueryEscape(e.cfg.ClientSecret))
	resp, err := e.hc.Do(req)
	if err != nil {
		return "", 0, fmt.Errorf("exchanging the token: %w", err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	if err != nil {
		return "", 0, fmt.Errorf("exchanging the token: reading the answer: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		refused := &Refused{Status: resp.StatusCode}
		if json.Unmarshal(raw, refused) != nil || refused.Code == "" {
			refused.Code, refused.Description = "unexpected_answer", fmt.Sprintf("the token endpoint answered %d without an OAuth error", resp.StatusCode)
		}
		return "", 0, refused
	}
	var answer struct {
		AccessToken     string `json:"access_token"`
		IssuedTokenType string `json:"issued_token_type"`
		TokenType       string `json:"token_type"`
		ExpiresIn       int64  `json:"expires_in"`
	}
	if err := json.Unmarshal(raw, &answer); err != nil {
		return "", 0, fmt.Errorf("exchanging the token: decoding the answer: %w", err)
	}
	switch {
	case answer.AccessToken == "":
		return "", 0, fmt.Errorf("exchanging the token: the answer has no access_token")
	case answer.IssuedTokenType != AccessTokenType:
		return "", 0, fmt.Errorf("exchanging the token: issued_token_type %q, not an access token", answer.IssuedTokenType)
	case !strings.EqualFold(answer.TokenType, "Bearer"):
		return "", 0, fmt.Errorf("exchanging the token: token_type %q, not Bearer", answer.TokenType)
	case answer.ExpiresIn <= 0:
		return "", 0, fmt.Errorf("exchanging the token: expires_in %d", answer.ExpiresIn)
	}
	return answer.AccessToken, time.Duration(answer.ExpiresIn) * time.Second, nil
}

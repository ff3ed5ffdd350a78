// Dynamic client registration (RFC 7591) for the authorization code
// grant, where the operator allows it (OAUTH_DYNAMIC_REGISTRATION).
// zitadel/oidc has no registration endpoint, so this one is ours; it
// answers in RFC 7591's own formats.

package oauth

import (
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/pcourt/pcourt/libs/httpserver"
	"github.com/pcourt/pcourt/libs/ratelimit"
	"github.com/pcourt/pcourt/services/accounts/internal/account"
)

// RegistrationRate bounds the registrations one client address makes: a
// registration costs nothing to ask and a key to keep.
var RegistrationRate = ratelimit.Rule{Rate: 20, Period: time.Hour, Burst: 20}

// MaxRegistrationBytes bounds a registration's JSON.
const MaxRegistrationBytes = 16 << 10

// registrationRequest is the client metadata this server reads (RFC 7591
// section 2). Other members are ignored, as section 2 asks of a server
// that does not know them (an MCP client sends client_uri, logo_uri,
// software_id…); a known member of the wrong type is refused.
type registrationRequest struct {
	RedirectURIs            []string `json:"redirect_uris"`
	ClientName              string   `json:"client_name"`
	TokenEndpointAuthMethod string   `json:"token_endpoint_auth_method"`
	GrantTypes              []string `json:"grant_types"`
	ResponseTypes           []string `json:"response_types"`
	Scope                   string   `json:"scope"`
}

// registrationResponse is RFC 7591 section 3.2.1's answer: the client's
// id, when it was issued, its secret for a confidential client alone
// (which never expires: client_secret_expires_at 0), and the metadata as
// registered.
type registrationResponse struct {
	ClientID                string   `json:"client_id"`
	ClientIDIssuedAt        int64    `json:"client_id_issued_at"`
	ClientSecret            string   `json:"client_secret,omitempty"`
	ClientSecretExpiresAt   *int64   `json:"client_secret_expires_at,omitempty"`
	ClientName              string   `json:"client_name"`
	RedirectURIs            []string `json:"redirect_uris"`
	TokenEndpointAuthMethod string   `json:"token_endpoint_auth_method"`
	GrantTypes              []string `json:"grant_types"`
	ResponseTypes           []string `json:"response_types"`
	Scope                   string   `json:"scope"`
}

// registrationError is RFC 7591 section 3.2.2's error.
type registrationError struct {
	Error       string `json:"error"`
	Description string `json:"error_description"`
}

func writeRegistration(w http.ResponseWriter, status int, body any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(body)
}

// RegistrationHandler answers POST /oauth/register: 404 where
// registration is off; else, counted per client address
// (RegistrationRate; 429 with Retry-After past it), a JSON body of client
// metadata registers a client for the authorization code grant
// (account.RegisterApp's checks, 400 invalid_redirect_uri or
// invalid_client_metadata) and answers it, 201.
func (s *Server) RegistrationHandler(limiter *ratelimit.Limiter) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := r.Context()
		if !s.Registration() {
			writeRegistration(w, http.StatusNotFound, registrationError{Error: "invalid_request", Description: "this server does not register clients dynamically: ask its operator"})
			return
		}
		addr := httpserver.ClientAddr(ctx)
		if addr == "" {
			addr = "unknown"
		}
		decision, err := limiter.Allow(ctx, addr, RegistrationRate)
		if err != nil {
			s.logger.ErrorContext(ctx, "registration rate limit failed", "err", err)
			writeRegistration(w, http.StatusServiceUnavailable, registrationError{Error: "temporarily_unavailable", Description: "the server could not answer; retry"})
			return
		}
		if !decision.Allowed {
			w.Header().Set("Retry-After", strconv.Itoa(decision.RetryAfterSeconds()))
			writeRegistration(w, http.StatusTooManyRequests, registrationError{Error: "temporarily_unavailable",
				Description: "too many registrations from this address: " + strconv.Itoa(RegistrationRate.Rate) + " an hour"})
			return
		}
		req, err := readRegistration(w, r)
		if err != nil {
			writeRegistration(w, http.StatusBadRequest, registrationError{Error: string(account.CodeInvalidClientMetadata), Description: err.Error()})
			return
		}
		registered, err := s.grants.RegisterApp(ctx, account.AppRegistration{
			Name: req.ClientName, RedirectURIs: req.RedirectURIs, AuthMethod: req.TokenEndpointAuthMethod,
			GrantTypes: req.GrantTypes, ResponseTypes: req.ResponseTypes, Scope: req.Scope,
		})
		var refused *account.RefusalError
		switch {
		case errors.As(err, &refused):
			writeRegistration(w, http.StatusBadRequest, registrationError{Error: string(refused.Code), Description: refused.Detail})
			return
		case err != nil:
			s.logger.ErrorContext(ctx, "registering a client failed", "err", err)
			writeRegistration(w, http.StatusInternalServerError, registrationError{Error: "server_error", Description: "the server could not answer; retry"})
			return
		}
		app := registered.App
		scopes := make([]string, len(app.Scopes))
		for i, sc := range app.Scopes {
			scopes[i] = string(sc)
		}
		resp := registrationResponse{ClientID: app.ID, ClientIDIssuedAt: app.CreatedAt.Unix(), ClientName: app.Name,
			RedirectURIs: app.RedirectURIs, TokenEndpointAuthMethod: string(app.AuthMethod), GrantTypes: account.AppGrantTypes,
			ResponseTypes: []string{"code"}, Scope: strings.Join(scopes, " ")}
		if registered.Secret != "" {
			never := int64(0)
			resp.ClientSecret, resp.ClientSecretExpiresAt = registered.Secret, &never
		}
		writeRegistration(w, http.StatusCreated, resp)
	})
}

// readRegistration decodes the JSON body: application/json, within
// MaxRegistrationBytes, one object with no trailing data.
func readRegistration(w http.ResponseWriter, r *http.Request) (registrationRequest, error) {
	var req registrationRequest
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		return req, errors.New("the body must be the client metadata as application/json")
	}
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, MaxRegistrationBytes))
	if err := dec.Decode(&req); err != nil {
		var typeErr *json.UnmarshalTypeError
		if errors.As(err, &typeErr) {
			return req, errors.New("member " + typeErr.Field + " has the wrong type")
		}
		return req, errors.New("the body is not one JSON object of client metadata within 16 KiB")
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return req, errors.New("the body has data after its JSON object")
	}
	return req, nil
}

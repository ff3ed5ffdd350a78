// Package authtest mints real credentials for tests of authenticated routes.
package authtest

import (
	"context"
	"testing"
	"time"

	"github.com/pcourt/pcourt/libs/auth"
)

// Mint creates a sandbox credential of role for tenant "tenant-test" and
// partner "partner-test" (a tribunal role: "tribunal-test", since a
// partner id is a party's or the tribunal's, never both) and returns its
// bearer token and record.
func Mint(tb testing.TB, store *auth.Store, role auth.Role, opts ...func(*auth.MintRequest)) (string, auth.Credential) {
	tb.Helper()
	partner := "partner-test"
	if role.Tribunal() {
		partner = "tribunal-test"
	}
	req := auth.MintRequest{Tenant: "tenant-test", Environment: auth.Sandbox, Role: role, PartnerID: partner, Label: tb.Name()}
	for _, o := range opts {
		o(&req)
	}
	token, cred, err := store.Mint(context.Background(), req)
	if err != nil {
		tb.Fatalf("minting %s credential: %v", role, err)
	}
	return token, cred
}

// WithAgent binds the credential to an immutable agent id.
func WithAgent(agentID string) func(*auth.MintRequest) {
	return func(r *auth.MintRequest) { r.AgentID = agentID }
}

// WithTenant mints the credential for another tenant.
func WithTenant(tenant string) func(*auth.MintRequest) {
	return func(r *auth.MintRequest) { r.Tenant = tenant }
}

// WithPartner mints the credential for another partner of the tenant.
func WithPartner(partnerID string) func(*auth.MintRequest) {
	return func(r *auth.MintRequest) { r.PartnerID = partnerID }
}

// WithEnvironment mints the credential for another environment.
func WithEnvironment(env auth.Environment) func(*auth.MintRequest) {
	return func(r *auth.MintRequest) { r.Environment = env }
}

// MintAccountToken issues an account token of accountID for audience with
// scopes, in tenant "tenant-test" and the sandbox, as services/accounts
// would issue it to client "ocl_test"; opts change the request (a case
// binding, another tenant).
func MintAccountToken(tb testing.TB, store *auth.Store, accountID, audience string, scopes []auth.Scope, opts ...func(*auth.AccountTokenRequest)) (string, auth.Credential) {
	tb.Helper()
	req := auth.AccountTokenRequest{Tenant: "tenant-test", Environment: auth.Sandbox, AccountID: accountID, ClientID: "ocl_test",
		Scopes: scopes, Audience: audience, Lifetime: 10 * time.Minute}
	for _, o := range opts {
		o(&req)
	}
	token, cred, err := store.MintAccountToken(context.Background(), req)
	if err != nil {
		tb.Fatalf("minting account token of %s: %v", accountID, err)
	}
	return token, cred
}

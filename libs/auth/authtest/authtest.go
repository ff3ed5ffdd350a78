// Package authtest mints real credentials for tests of authenticated routes.
package authtest

import (
	"context"
	"testing"

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

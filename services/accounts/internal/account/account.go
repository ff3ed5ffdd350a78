// Package account is the pure domain of accounts: the autonomous-agent
// accounts an operator registers, the attestation that verifies one, the
// OAuth clients through which a verified agent gets its own tokens, and
// what a token exchanged for one of them may carry (exchange.go); and
// people's individual accounts with their passkeys (people.go) and the
// one-time codes sent to their addresses (code.go).
//
// The package does no I/O. Each act takes the current state and the
// instant and returns the next state or a refusal, checked in the order
// the act's documentation gives; on a refusal nothing changes, so a store
// can apply the result in one atomic step. docs/accounts.md describes the
// rules and lists the refusal codes.
package account

import (
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/pcourt/pcourt/libs/refusal"
)

// RefusalCode names why an act was refused.
type RefusalCode string

// The refusals, in the order the acts check them.
const (
	// CodeInvalidAccount: a registration or attestation field is missing
	// or unusable.
	CodeInvalidAccount RefusalCode = "invalid_account"
	// CodeNotOperator: the caller's partner is not the account's operator.
	CodeNotOperator RefusalCode = "not_account_operator"
	// CodeAlreadyVerified: the agent was verified before; an attestation
	// is filed once.
	CodeAlreadyVerified RefusalCode = "account_already_verified"
	// CodeNotVerified: client credentials are for verified agents only.
	CodeNotVerified RefusalCode = "account_not_verified"
	// CodeInvalidScope: a scope is not one of the account scopes, or not
	// one the client was registered with.
	CodeInvalidScope RefusalCode = "invalid_scope"
	// CodeTooManyClients: an account keeps at most MaxClients active.
	CodeTooManyClients RefusalCode = "too_many_clients"
	// CodeClientNotFound: the account has no client of that id.
	CodeClientNotFound RefusalCode = "client_not_found"
)

// RefusalError is a refused act of this domain.
type RefusalError = refusal.Error[RefusalCode]

// Kind is a public principal kind (the spec's individual, organization,
// autonomous_agent).
type Kind string

// The kinds. An operator registers autonomous agents; a person signs up
// for an individual account (people.go); organisations are not built.
const (
	KindIndividual      Kind = "individual"
	KindOrganization    Kind = "organization"
	KindAutonomousAgent Kind = "autonomous_agent"
)

// Status is where an account stands.
type Status string

// The statuses. An agent is unverified from its registration until its
// operator files the attestation. An operator stops a verified agent by
// revoking its clients, which revokes their live tokens. A person's
// account is StatusActive (people.go).
const (
	StatusUnverified Status = "unverified"
	StatusVerified   Status = "verified"
)

// Scope is one power an account token may carry; the values are
// libs/auth's Scope values, repeated here so the domain stays pure.
type Scope string

// Scopes are the account scopes (docs/accounts.md, "Tokens").
var Scopes = []Scope{"cases:read", "cases:act", "evidence:file", "readiness:buy", "executions:report"}

// MaxClients bounds an account's OAuth clients: an agent rotates its
// secret by registering a new client and revoking the old one.
const MaxClients = 5

// Account is one account of a tenant and environment.
type Account struct {
	ID          string
	Tenant      string
	Environment string
	Kind        Kind
	DisplayName string
	// OperatorPartnerID is the partner that registered the agent and
	// answers for it; only its orchestrators attest or manage it.
	OperatorPartnerID string
	Status            Status
	Attestation       Attestation // zero until verified
	// Clients are the account's OAuth clients, revoked ones included, in
	// the order they were registered.
	Clients []Client
	// Email is a person's address, normalised (NormalizeEmail): one
	// account per confirmed address in a tenant and environment.
	Email string
	// EmailVerifiedAt is when a code sent to Email confirmed it
	// (ConfirmEmail); zero while it is unconfirmed, and an unconfirmed
	// address is nobody's: it is not claimed and no code signs in by it.
	EmailVerifiedAt time.Time
	// Passkeys are a person's credentials, in the order registered.
	Passkeys  []Passkey
	CreatedAt time.Time
}

// Attestation is the operator's statement that verifies an agent: who the
// agent is, what runs it, and that the operator answers for its acts.
type Attestation struct {
	// Model and Provider name what the agent runs on, as the operator
	// states it ("gpt-5", "acme-labs").
	Model    string
	Provider string
	// Contact is where the operator can be reached about the agent's acts.
	Contact string
	// AcceptsResponsibility must be true: the operator answers for the
	// agent's acts on the platform.
	AcceptsResponsibility bool
	// AttestedBy is the public id of the operator credential that filed it.
	AttestedBy string
	AttestedAt time.Time
}

// Registration is an operator's request to register an agent account.
type Registration struct {
	DisplayName string
}

// textPattern is a display name, model, provider or contact: 1 to 200
// printable characters without control characters.
var textPattern = regexp.MustCompile(`^[^\x00-\x1f\x7f]{1,200}$`)

func usableText(s string) bool { return textPattern.MatchString(s) && strings.TrimSpace(s) == s }

// RegisterAgent returns a new, unverified agent account operated by
// partnerID. Refusals: invalid_account.
func RegisterAgent(id, tenant, env, partnerID string, r Registration, now time.Time) (Account, error) {
	if !usableText(r.DisplayName) {
		return Account{}, refusal.New(CodeInvalidAccount, "displayName must be 1 to 200 printable characters without leading or trailing spaces")
	}
	return Account{
		ID: id, Tenant: tenant, Environment: env, Kind: KindAutonomousAgent, DisplayName: r.DisplayName,
		OperatorPartnerID: partnerID, Status: StatusUnverified, CreatedAt: now,
	}, nil
}

// OperatedBy checks that partnerID operates a. Refusals: not_account_operator.
func (a Account) OperatedBy(partnerID string) error {
	if partnerID == "" || a.OperatorPartnerID != partnerID {
		return refusal.New(CodeNotOperator, "account %s is operated by another partner", a.ID)
	}
	return nil
}

// Attest verifies an agent account with the operator's attestation.
// Refusals, in order: not_account_operator, account_already_verified,
// invalid_account.
func (a Account) Attest(partnerID string, att Attestation, now time.Time) (Account, error) {
	if err := a.OperatedBy(partnerID); err != nil {
		return a, err
	}
	switch {
	case a.Status == StatusVerified:
		return a, refusal.New(CodeAlreadyVerified, "account %s was verified at %s", a.ID, a.Attestation.AttestedAt.Format(time.RFC3339))
	case !usableText(att.Model) || !usableText(att.Provider) || !usableText(att.Contact):
		return a, refusal.New(CodeInvalidAccount, "model, provider and contact must each be 1 to 200 printable characters")
	case !att.AcceptsResponsibility:
		return a, refusal.New(CodeInvalidAccount, "acceptsResponsibility must be true: the operator answers for the agent's acts")
	case att.AttestedBy == "":
		return a, refusal.New(CodeInvalidAccount, "the attestation names no operator credential")
	}
	att.AttestedAt = now
	a.Status, a.Attestation = StatusVerified, att
	return a, nil
}

// MayUseClientCredentials checks that the account may get a token with
// client credentials: a verified agent only. Refusals: account_not_verified.
func (a Account) MayUseClientCredentials() error {
	if a.Kind != KindAutonomousAgent || a.Status != StatusVerified {
		return refusal.New(CodeNotVerified, "account %s is not a verified autonomous agent; its operator files the attestation first", a.ID)
	}
	return nil
}

// Client is an OAuth client of an account: a confidential client of which
// only the secret's hash is kept.
type Client struct {
	ID         string
	AccountID  string
	SecretHash string
	// Scopes bound every token the client gets.
	Scopes    []Scope
	CreatedAt time.Time
	RevokedAt time.Time // zero while active
}

// Active reports whether the client has not been revoked.
func (c Client) Active() bool { return c.RevokedAt.IsZero() }

// ActiveClients counts the clients not revoked.
func (a Account) ActiveClients() int {
	n := 0
	for _, c := range a.Clients {
		if c.Active() {
			n++
		}
	}
	return n
}

// Client returns the account's client id, revoked or not.
func (a Account) Client(id string) (Client, bool) {
	for _, c := range a.Clients {
		if c.ID == id {
			return c, true
		}
	}
	return Client{}, false
}

// AddClient registers a confidential client of the account, with the
// scopes every token it gets is bounded by. An unverified agent may have
// clients (its operator prepares them); they get tokens once it is
// verified. Refusals, in order: not_account_operator, invalid_scope,
// too_many_clients.
func (a Account) AddClient(partnerID, id, secretHash string, scopes []Scope, now time.Time) (Account, Client, error) {
	if err := a.OperatedBy(partnerID); err != nil {
		return a, Client{}, err
	}
	if err := validScopes(scopes); err != nil {
		return a, Client{}, err
	}
	if len(scopes) == 0 {
		return a, Client{}, refusal.New(CodeInvalidScope, "a client needs at least one scope")
	}
	if n := a.ActiveClients(); n >= MaxClients {
		return a, Client{}, refusal.New(CodeTooManyClients, "account %s has %d active clients; revoke one first", a.ID, n)
	}
	c := Client{ID: id, AccountID: a.ID, SecretHash: secretHash, Scopes: slices.Clone(scopes), CreatedAt: now}
	a.Clients = append(slices.Clone(a.Clients), c)
	return a, c, nil
}

// RevokeClient revokes one of the account's clients: it gets no token
// from now on, and the store revokes the tokens it holds. Revoking a
// revoked client changes nothing and is not refused, so a retry is safe.
// Refusals, in order: not_account_operator, client_not_found.
func (a Account) RevokeClient(partnerID, id string, now time.Time) (Account, error) {
	if err := a.OperatedBy(partnerID); err != nil {
		return a, err
	}
	i := slices.IndexFunc(a.Clients, func(c Client) bool { return c.ID == id })
	if i < 0 {
		return a, refusal.New(CodeClientNotFound, "account %s has no client %s", a.ID, id)
	}
	if !a.Clients[i].Active() {
		return a, nil
	}
	a.Clients = slices.Clone(a.Clients)
	a.Clients[i].RevokedAt = now
	return a, nil
}

// Grant returns the scopes a token gets when the client asks for
// requested: all of the client's scopes when it asks for none, else the
// requested ones, each of which the client must hold. OAuth never widens a
// client's scopes. Refusals: invalid_scope.
func (c Client) Grant(requested []Scope) ([]Scope, error) {
	if len(requested) == 0 {
		return slices.Clone(c.Scopes), nil
	}
	if err := validScopes(requested); err != nil {
		return nil, err
	}
	for _, s := range requested {
		if !slices.Contains(c.Scopes, s) {
			return nil, refusal.New(CodeInvalidScope, "client %s was not registered with scope %s", c.ID, s)
		}
	}
	return slices.Clone(requested), nil
}

func validScopes(scopes []Scope) error {
	for i, s := range scopes {
		if !slices.Contains(Scopes, s) {
			return refusal.New(CodeInvalidScope, "scope %q is not one of %s", s, joinScopes(Scopes))
		}
		if slices.Contains(scopes[:i], s) {
			return refusal.New(CodeInvalidScope, "scope %s is named twice", s)
		}
	}
	return nil
}

func joinScopes(scopes []Scope) string {
	out := make([]string, len(scopes))
	for i, s := range scopes {
		out[i] = string(s)
	}
	return strings.Join(out, ", ")
}

package auth

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// Side is a side of a case or draft.
type Side string

// The two sides of a dispute.
const (
	Claimant   Side = "claimant"
	Respondent Side = "respondent"
)

// Valid reports whether s is claimant or respondent.
func (s Side) Valid() bool { return s == Claimant || s == Respondent }

// Subject is who a membership is granted to: a credential ("credential:<publicId>")
// or a principal ("principal:<partnerId>/<agentId>"). A principal subject
// names an immutable agent identity of one partner, and only a credential
// of that partner bound to that agent id (Credential.PartnerID and
// Credential.AgentID) satisfies it: an agent id is an identity within its
// partner, never across partners, and a principal string a partner or a
// request supplies is never an identity. Ids never hold "/" (their
// alphabet is A-Z a-z 0-9 . _ : -), so the separator is unambiguous.
type Subject string

// CredentialSubject names a credential as a membership subject.
func CredentialSubject(publicID string) Subject { return Subject("credential:" + publicID) }

// PrincipalSubject names the agent identity agentID of partner partnerID as
// a membership subject.
func PrincipalSubject(partnerID, agentID string) Subject {
	return Subject("principal:" + partnerID + "/" + agentID)
}

// IsCredential reports whether the subject names a credential.
func (s Subject) IsCredential() bool { return strings.HasPrefix(string(s), "credential:") }

// Principal returns the partner and agent id a principal subject names.
// A subject of the earlier form "principal:<agentId>", which named no
// partner, is not a principal any credential satisfies: ok is false.
func (s Subject) Principal() (partnerID, agentID string, ok bool) {
	rest, found := strings.CutPrefix(string(s), "principal:")
	if !found {
		return "", "", false
	}
	partnerID, agentID, ok = strings.Cut(rest, "/")
	return partnerID, agentID, ok && partnerID != "" && agentID != ""
}

// Admits reports whether the subject admits cred: a credential subject
// names cred itself; a principal subject names cred's partner and its
// immutable agent id.
func (s Subject) Admits(cred Credential) bool {
	if account, ok := s.account(); ok {
		return cred.ForAccount() && cred.AccountID == account
	}
	if cred.ForAccount() {
		return false // an account acts through its account's memberships only
	}
	if s == CredentialSubject(cred.PublicID) {
		return true
	}
	partnerID, agentID, ok := s.Principal()
	return ok && cred.AgentID != "" && agentID == cred.AgentID && partnerID == cred.PartnerID
}

// Membership binds a subject to one side of a resource ("draft:<id>", "case:<id>").
type Membership struct {
	Resource string
	Side     Side
	Subject  Subject
	// ExpiresAt is when the resource itself is gone (a draft's expiry plus
	// its retention): the resource's memberships are kept until the latest
	// ExpiresAt any grant named, and no longer.
	ExpiresAt time.Time
}

// Validate reports the first unusable field.
func (m Membership) Validate() error {
	switch {
	case m.Resource == "":
		return errors.New("membership resource required")
	case !m.Side.Valid():
		return fmt.Errorf("side %q is not claimant or respondent", m.Side)
	case !m.Subject.IsCredential() && !isPrincipal(m.Subject) && !isAccount(m.Subject):
		return fmt.Errorf("subject %q is not credential:<id>, principal:<partnerId>/<agentId> or account:<accountId>", m.Subject)
	case m.ExpiresAt.IsZero():
		return errors.New("membership expiry required: it follows the resource's lifetime")
	}
	return nil
}

func isAccount(s Subject) bool {
	id, ok := s.account()
	return ok && wellFormedID(id)
}

func isPrincipal(s Subject) bool {
	_, _, ok := s.Principal()
	return ok
}

// membersKey holds one hash per resource, subject → side; the hash tag keeps a
// resource's memberships in one slot.
func membersKey(resource string) string { return "pc:auth:members:{" + resource + "}" }

// Grant records the membership; granting it again is a no-op. The
// resource's membership key expires at the latest ExpiresAt granted, so it
// never outlives the resource.
func (s *Store) Grant(ctx context.Context, m Membership) error {
	if err := m.Validate(); err != nil {
		return fmt.Errorf("granting membership: %w", err)
	}
	if !m.ExpiresAt.After(s.now()) {
		return fmt.Errorf("granting membership on %s: the resource has expired", m.Resource)
	}
	err := grantScript.Run(ctx, s.rdb, []string{membersKey(m.Resource)},
		string(m.Subject), string(m.Side), m.ExpiresAt.UnixMilli()).Err()
	if err != nil {
		return fmt.Errorf("granting membership on %s: %w", m.Resource, err)
	}
	return nil
}

// grantScript sets subject → side and moves the key's expiry to ARGV[3]
// (Unix ms) unless it already expires later.
var grantScript = redis.NewScript(`
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
local at = tonumber(ARGV[3])
local ttl = redis.call('PTTL', KEYS[1])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
if ttl < 0 or now + ttl < at then
  redis.call('PEXPIREAT', KEYS[1], at)
end
return 1
`)

// RevokeMembership removes the subject's membership of the resource.
func (s *Store) RevokeMembership(ctx context.Context, resource string, subject Subject) error {
	n, err := s.rdb.HDel(ctx, membersKey(resource), string(subject)).Result()
	if err != nil {
		return fmt.Errorf("revoking membership on %s: %w", resource, err)
	}
	if n == 0 {
		return fmt.Errorf("membership of %s on %s: %w", subject, resource, ErrNotFound)
	}
	return nil
}

// Memberships lists the memberships of a resource.
func (s *Store) Memberships(ctx context.Context, resource string) ([]Membership, error) {
	all, err := s.rdb.HGetAll(ctx, membersKey(resource)).Result()
	if err != nil {
		return nil, fmt.Errorf("reading memberships of %s: %w", resource, err)
	}
	out := make([]Membership, 0, len(all))
	for subject, side := range all {
		out = append(out, Membership{Resource: resource, Side: Side(side), Subject: Subject(subject)})
	}
	return out, nil
}

// Capability is a bearer capability for one side of one resource, such as
// the respondent invitation of a newly opened case.
type Capability struct {
	Resource  string
	Side      Side
	Purpose   string
	ExpiresAt time.Time
}

func capabilityKey(hash string) string { return "pc:auth:cap:" + hash }

// MintCapability stores a new capability and returns its secret, shown once.
func (s *Store) MintCapability(ctx context.Context, c Capability) (string, error) {
	token := NewToken("pc_cap_")
	if err := s.RegisterCapability(ctx, token, c); err != nil {
		return "", err
	}
	return token, nil
}

// RegisterCapability stores the hash of a secret minted elsewhere (a case
// opening mints its show-once secrets in the same step that records their
// hashes), so that it works as X-PC-Case-Capability.
func (s *Store) RegisterCapability(ctx context.Context, token string, c Capability) error {
	if c.Resource == "" || !c.Side.Valid() || c.Purpose == "" || token == "" {
		return errors.New("registering capability: token, resource, side and purpose required")
	}
	ttl := c.ExpiresAt.Sub(s.now())
	if ttl <= 0 {
		return errors.New("registering capability: expiry must be in the future")
	}
	key := capabilityKey(HashToken(token))
	_, err := s.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.HSet(ctx, key, map[string]any{
			"resource":   c.Resource,
			"side":       string(c.Side),
			"purpose":    c.Purpose,
			"expires_at": c.ExpiresAt.UTC().Format(time.RFC3339Nano),
		})
		p.PExpire(ctx, key, ttl)
		return nil
	})
	if err != nil {
		return fmt.Errorf("storing capability: %w", err)
	}
	return nil
}

// LookupCapability returns the unexpired capability behind token, or ErrNotFound.
func (s *Store) LookupCapability(ctx context.Context, token string) (Capability, error) {
	rec, err := s.rdb.HGetAll(ctx, capabilityKey(HashToken(token))).Result()
	if err != nil && !errors.Is(err, redis.Nil) {
		return Capability{}, fmt.Errorf("reading capability: %w", err)
	}
	if len(rec) == 0 {
		return Capability{}, ErrNotFound
	}
	exp, err := time.Parse(time.RFC3339Nano, rec["expires_at"])
	if err != nil {
		return Capability{}, fmt.Errorf("capability: bad expires_at: %w", err)
	}
	if !s.now().Before(exp) {
		return Capability{}, ErrNotFound
	}
	return Capability{Resource: rec["resource"], Side: Side(rec["side"]), Purpose: rec["purpose"], ExpiresAt: exp}, nil
}

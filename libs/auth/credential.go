// Package auth holds the platform's bearer credentials, membership grants and
// per-case capability tokens, all hashed at rest in Redis, and the Gin
// middleware and checks that turn them into decisions.
//
// Secrets are random tokens shown once at minting; Redis keeps only their
// SHA-256. Each replica caches a looked-up credential for at most CacheTTL,
// which bounds how long a revoked credential can still be accepted anywhere.
package auth

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base32"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/pcourt/pcourt/libs/envconf"
	"github.com/pcourt/pcourt/libs/ratelimit"
)

// Role is what a credential may do.
type Role string

// The party roles: the spec's draft confirmation security schemes. A
// credential of one acts for a partner and its participants.
const (
	RolePlatformOrchestrator Role = "platform_orchestrator"
	RoleClaimantAgent        Role = "claimant_agent"
	RoleRespondentAgent      Role = "respondent_agent"
)

// The tribunal roles: members of a tenant's and environment's tribunal
// pool (AddTribunalMember), who decide the cases they are assigned to and
// are never a party. Their credentials are minted with `pcadm tribunal
// add`, under a partner id of their own that no party credential shares
// (ErrPartnerIDTaken).
const (
	// RoleAdjudicator is the AI adjudicator: an autonomous agent that
	// reads an assigned case's record and files a proposed opinion.
	RoleAdjudicator Role = "adjudicator"
	// RoleReviewer is the human reviewer who decides on the proposal and
	// signs the award.
	RoleReviewer Role = "reviewer"
)

// Valid reports whether r is one of the known roles.
func (r Role) Valid() bool {
	return r == RolePlatformOrchestrator || r == RoleClaimantAgent || r == RoleRespondentAgent || r.Tribunal()
}

// Tribunal reports whether r is a tribunal role (adjudicator or reviewer)
// rather than a party's.
func (r Role) Tribunal() bool { return r == RoleAdjudicator || r == RoleReviewer }

// Environment separates test traffic from real traffic; a credential works in one only.
type Environment string

// The two environments.
const (
	Sandbox Environment = "sandbox"
	Live    Environment = "live"
)

// Valid reports whether e is sandbox or live.
func (e Environment) Valid() bool { return e == Sandbox || e == Live }

// Credential is the stored, non-secret description of a bearer token.
type Credential struct {
	PublicID    string
	Tenant      string
	Environment Environment
	Role        Role
	PartnerID   string
	AgentID     string // the immutable agent id, when the credential belongs to one agent
	Label       string
	CreatedAt   time.Time
	RevokedAt   time.Time // zero while active
	// ExpiresAt ends a short-lived credential (one minted for a console
	// session, an account token); zero for a credential that lasts until
	// revoked.
	ExpiresAt time.Time

	// The fields of an account token (account.go); empty on a partner's
	// credential, which has a Role and a PartnerID instead.
	AccountID string
	ClientID  string
	Scopes    []Scope
	Audience  string
	CaseID    string // the one case a delegation is bound to, or ""
	// ActorID is the person who acts, on an account session whose account
	// is an organisation the person acts for (a member's); "" when the
	// account acts itself. Every service sees the organisation's account;
	// the person is who did it.
	ActorID string
}

// Active reports whether the credential has not been revoked.
func (c Credential) Active() bool { return c.RevokedAt.IsZero() }

// ActiveAt reports whether the credential is neither revoked nor expired at now.
func (c Credential) ActiveAt(now time.Time) bool {
	return c.Active() && (c.ExpiresAt.IsZero() || now.Before(c.ExpiresAt))
}

// MintRequest describes a credential to create.
type MintRequest struct {
	Tenant      string
	Environment Environment
	Role        Role
	PartnerID   string
	AgentID     string
	Label       string
	// ExpiresAt, when set, makes the credential short-lived: it is refused
	// from then on and its token's key expires with it.
	ExpiresAt time.Time
}

// Validate reports the first missing or unknown field.
func (m MintRequest) Validate() error {
	switch {
	case m.Tenant == "":
		return errors.New("tenant required")
	case !m.Environment.Valid():
		return fmt.Errorf("environment %q is not sandbox or live", m.Environment)
	case !m.Role.Valid():
		return fmt.Errorf("role %q is not one of platform_orchestrator, claimant_agent, respondent_agent, adjudicator, reviewer", m.Role)
	case m.PartnerID == "":
		return errors.New("partner id required")
	}
	return nil
}

// ExpiredRetention is how long the record of a short-lived credential
// outlives its expiry, so that `pcadm list` still shows a recent console
// session as expired; then it is gone, and List drops it from the index.
// (A session's trail is the console's audit stream, which does not
// expire.)
const ExpiredRetention = 7 * 24 * time.Hour

// Errors of credential lookups.
var (
	ErrInvalidCredential = errors.New("credential unknown or revoked")
	ErrNotFound          = errors.New("not found")
)

// StoreConfig configures a Store.
type StoreConfig struct {
	// CacheTTL bounds how long a replica trusts a credential it looked up,
	// and so how long a revocation takes to reach every replica.
	CacheTTL time.Duration
	// CacheSize bounds the number of cached credentials per replica.
	CacheSize int
	// PerCredential limits the requests of one credential across every
	// replica; Middleware answers 429 rate_limited beyond it.
	PerCredential ratelimit.Rule
	// FailedAuth limits failed bearer lookups per client address: past it,
	// Middleware answers 429 before looking the bearer up, so guessing
	// tokens costs the guesser, not Redis.
	FailedAuth ratelimit.Rule
}

// DefaultStoreConfig revokes everywhere within two seconds, allows a
// credential 50 requests per second with bursts of 100, and an address 20
// failed bearer lookups per minute. The limits are generous for partners
// and real against floods; benchmarks switch them off with ratelimit.Off.
func DefaultStoreConfig() StoreConfig {
	return StoreConfig{
		CacheTTL:      2 * time.Second,
		CacheSize:     10000,
		PerCredential: ratelimit.Rule{Rate: 50, Period: time.Second, Burst: 100},
		FailedAuth:    ratelimit.Rule{Rate: 20, Period: time.Minute, Burst: 20},
	}
}

// StoreConfigFromEnv reads RATE_LIMIT_CREDENTIAL_{RATE,PERIOD,BURST} and
// RATE_LIMIT_AUTH_FAILURES_{RATE,PERIOD,BURST} over the defaults; a RATE
// of 0 switches that limit off.
func StoreConfigFromEnv(r *envconf.Reader) StoreConfig {
	c := DefaultStoreConfig()
	c.PerCredential = ratelimit.FromEnv(r, "RATE_LIMIT_CREDENTIAL", c.PerCredential)
	c.FailedAuth = ratelimit.FromEnv(r, "RATE_LIMIT_AUTH_FAILURES", c.FailedAuth)
	return c
}

// Validate reports an unusable limit.
func (c StoreConfig) Validate() error {
	if err := c.PerCredential.Validate(); err != nil {
		return fmt.Errorf("credential rate limit: %w", err)
	}
	if err := c.FailedAuth.Validate(); err != nil {
		return fmt.Errorf("failed authentication limit: %w", err)
	}
	return nil
}

// Store reads and writes credentials, memberships and capabilities.
type Store struct {
	rdb     redis.UniversalClient
	cfg     StoreConfig
	now     func() time.Time
	limiter *ratelimit.Limiter

	mu    sync.Mutex
	cache map[string]cachedCredential // by token hash
}

type cachedCredential struct {
	cred    Credential
	expires time.Time
}

// NewStore returns a Store over rdb.
func NewStore(rdb redis.UniversalClient, cfg StoreConfig) *Store {
	if cfg.CacheTTL <= 0 {
		cfg.CacheTTL = DefaultStoreConfig().CacheTTL
	}
	if cfg.CacheSize <= 0 {
		cfg.CacheSize = DefaultStoreConfig().CacheSize
	}
	return &Store{rdb: rdb, cfg: cfg, now: time.Now, limiter: ratelimit.New(rdb, "pc:auth:rl"), cache: map[string]cachedCredential{}}
}

func credentialKey(publicID string) string { return "pc:auth:cred:" + publicID }
func tokenKey(hash string) string          { return "pc:auth:token:" + hash }

const credentialIndexKey = "pc:auth:creds"

// HashToken returns the hex SHA-256 under which a secret is stored.
func HashToken(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// NewToken returns a fresh secret with a readable prefix (pc_sbx_, pc_live_,
// pc_cap_ …) followed by 256 random bits.
func NewToken(prefix string) string {
	var b [32]byte
	_, _ = rand.Read(b[:])
	return prefix + base64.RawURLEncoding.EncodeToString(b[:])
}

// base32NoPad spells public ids with no character that needs escaping anywhere.
var base32NoPad = base32.StdEncoding.WithPadding(base32.NoPadding)

func newPublicID() string {
	var b [10]byte
	_, _ = rand.Read(b[:])
	return "cred_" + strings.ToLower(base32NoPad.EncodeToString(b[:]))
}

// Mint creates a credential and returns its secret token, which is never
// stored and cannot be shown again.
func (s *Store) Mint(ctx context.Context, req MintRequest) (string, Credential, error) {
	if err := req.Validate(); err != nil {
		return "", Credential{}, fmt.Errorf("minting credential: %w", err)
	}
	prefix := "pc_sbx_"
	if req.Environment == Live {
		prefix = "pc_live_"
	}
	token := NewToken(prefix)
	cred := Credential{
		PublicID:    newPublicID(),
		Tenant:      req.Tenant,
		Environment: req.Environment,
		Role:        req.Role,
		PartnerID:   req.PartnerID,
		AgentID:     req.AgentID,
		Label:       req.Label,
		CreatedAt:   s.now().UTC().Truncate(time.Millisecond),
	}
	var tokenTTL time.Duration // 0: the token key does not expire
	if !req.ExpiresAt.IsZero() {
		cred.ExpiresAt = req.ExpiresAt.UTC().Truncate(time.Millisecond)
		if tokenTTL = cred.ExpiresAt.Sub(s.now()); tokenTTL <= 0 {
			return "", Credential{}, errors.New("minting credential: expiry is not in the future")
		}
	}
	if err := s.claimPartnerID(ctx, cred); err != nil {
		return "", Credential{}, err
	}
	if cred.AgentID != "" {
		if err := s.claimAgentID(ctx, cred); err != nil {
			return "", Credential{}, err
		}
	}
	// The credential record is written before the token that points at it, so
	// a crash in between leaves an unusable record, never a dangling token.
	// A short-lived credential's record expires ExpiredRetention after the
	// credential, in the same transaction: a console session mints one per
	// sign-in, and kept for good they would grow the keyspace and the index
	// without end.
	_, err := s.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.HSet(ctx, credentialKey(cred.PublicID), toRecord(cred))
		if !cred.ExpiresAt.IsZero() {
			p.PExpireAt(ctx, credentialKey(cred.PublicID), cred.ExpiresAt.Add(ExpiredRetention))
		}
		return nil
	})
	if err != nil {
		return "", Credential{}, fmt.Errorf("storing credential: %w", err)
	}
	if err := s.rdb.Set(ctx, tokenKey(HashToken(token)), cred.PublicID, tokenTTL).Err(); err != nil {
		return "", Credential{}, fmt.Errorf("storing token hash: %w", err)
	}
	if err := s.rdb.SAdd(ctx, credentialIndexKey, cred.PublicID).Err(); err != nil {
		return "", Credential{}, fmt.Errorf("indexing credential: %w", err)
	}
	return token, cred, nil
}

// ErrAgentIDTaken means an agent id is already another partner's in the
// tenant and environment: an immutable agent id names one agent of one
// partner, so a second partner may not mint credentials under it.
var ErrAgentIDTaken = errors.New("agent id belongs to another partner")

// agentKey records which partner an agent id belongs to in a tenant and
// environment. It never expires: agent ids are immutable identities, and
// revoking every credential of an agent does not free its id for another
// partner (memberships and case participants may still name it).
func agentKey(tenant string, env Environment, agentID string) string {
	return "pc:auth:agent:" + tenant + ":" + string(env) + ":" + agentID
}

// claimAgentID binds cred's agent id to cred's partner on its first
// minting, and refuses a credential of another partner under the same id.
func (s *Store) claimAgentID(ctx context.Context, cred Credential) error {
	owner, err := claimScript.Run(ctx, s.rdb, []string{agentKey(cred.Tenant, cred.Environment, cred.AgentID)}, cred.PartnerID).Text()
	if err != nil {
		return fmt.Errorf("claiming agent id %s: %w", cred.AgentID, err)
	}
	if owner != cred.PartnerID {
		return fmt.Errorf("minting credential: agent id %s in %s/%s is partner %s's: %w", cred.AgentID, cred.Tenant, cred.Environment, owner, ErrAgentIDTaken)
	}
	return nil
}

// AgentPartner returns the partner that agent id agentID belongs to in
// tenant and env: the partner of the first credential minted under it,
// for good. ErrNotFound means no credential was ever minted under it, so
// a principal subject naming it names nobody.
func (s *Store) AgentPartner(ctx context.Context, tenant string, env Environment, agentID string) (string, error) {
	owner, err := s.rdb.Get(ctx, agentKey(tenant, env, agentID)).Result()
	if errors.Is(err, redis.Nil) {
		return "", fmt.Errorf("agent id %s in %s/%s: %w", agentID, tenant, env, ErrNotFound)
	}
	if err != nil {
		return "", fmt.Errorf("reading agent id %s: %w", agentID, err)
	}
	return owner, nil
}

// claimScript sets KEYS[1] to ARGV[1] unless it has a value, and returns
// the value it has: the first claim of an identity wins, for good.
var claimScript = redis.NewScript(`
local owner = redis.call('GET', KEYS[1])
if not owner then
  redis.call('SET', KEYS[1], ARGV[1])
  return ARGV[1]
end
return owner
`)

// ErrPartnerIDTaken means a partner id is a party's where a tribunal
// credential is minted, or the tribunal's where a party credential is: a
// tribunal member is never a credential of a party's partner, whose
// endpoints, deliveries and case participants it would otherwise share.
var ErrPartnerIDTaken = errors.New("partner id belongs to the other kind of partner (party or tribunal)")

// The kinds of partner a partner id is claimed for.
const (
	partyPartner    = "party"
	tribunalPartner = "tribunal"
)

// partnerKey records whether a partner id is a party's or the tribunal's
// in a tenant and environment. Like agentKey it never expires: a partner
// id is an identity (endpoints, deliveries and case participants name it),
// and revoking every credential under it does not hand it to the other
// kind.
func partnerKey(tenant string, env Environment, partnerID string) string {
	return "pc:auth:partner:" + tenant + ":" + string(env) + ":" + partnerID
}

// claimPartnerID binds cred's partner id to its kind (party or tribunal)
// on its first minting, and refuses a credential of the other kind under
// it.
func (s *Store) claimPartnerID(ctx context.Context, cred Credential) error {
	kind, other := partyPartner, tribunalPartner
	if cred.Role.Tribunal() {
		kind, other = tribunalPartner, partyPartner
	}
	key := partnerKey(cred.Tenant, cred.Environment, cred.PartnerID)
	if kind == tribunalPartner {
		// Party credentials minted before partner ids were claimed left no
		// claim, so an unclaimed id is checked against the credentials
		// themselves. Minting a tribunal member is an administrator's rare
		// act; reading the credential index then is affordable.
		n, err := s.rdb.Exists(ctx, key).Result()
		if err != nil {
			return fmt.Errorf("reading partner id %s: %w", cred.PartnerID, err)
		}
		if n == 0 {
			party, err := s.hasPartyCredential(ctx, cred.Tenant, cred.Environment, cred.PartnerID)
			if err != nil {
				return err
			}
			if party {
				return fmt.Errorf("minting credential: partner id %s in %s/%s is a party's: %w", cred.PartnerID, cred.Tenant, cred.Environment, ErrPartnerIDTaken)
			}
		}
	}
	holder, err := claimScript.Run(ctx, s.rdb, []string{key}, kind).Text()
	if err != nil {
		return fmt.Errorf("claiming partner id %s: %w", cred.PartnerID, err)
	}
	if holder != kind {
		return fmt.Errorf("minting %s credential: partner id %s in %s/%s is a %s partner's: %w", cred.Role, cred.PartnerID, cred.Tenant, cred.Environment, other, ErrPartnerIDTaken)
	}
	return nil
}

// hasPartyCredential reports whether a party credential, revoked or not,
// was ever minted under partnerID in tenant and env.
func (s *Store) hasPartyCredential(ctx context.Context, tenant string, env Environment, partnerID string) (bool, error) {
	creds, err := s.List(ctx, tenant)
	if err != nil {
		return false, err
	}
	return slices.ContainsFunc(creds, func(c Credential) bool {
		return c.Environment == env && c.PartnerID == partnerID && !c.Role.Tribunal()
	}), nil
}

// Authenticate returns the active credential behind token, or
// ErrInvalidCredential. Other errors mean Redis could not be asked.
func (s *Store) Authenticate(ctx context.Context, token string) (Credential, error) {
	return s.AuthenticateHash(ctx, HashToken(token))
}

// AuthenticateHash is Authenticate for a caller that kept only the token's
// HashToken, such as a background worker that attributes requests to
// credentials after the fact: it never has to hold the secret. It shares
// Authenticate's cache.
func (s *Store) AuthenticateHash(ctx context.Context, hash string) (Credential, error) {
	if cred, ok := s.verified(hash); ok {
		return cred, nil
	}
	now := s.now()

	publicID, err := s.rdb.Get(ctx, tokenKey(hash)).Result()
	if errors.Is(err, redis.Nil) {
		return Credential{}, ErrInvalidCredential
	}
	if err != nil {
		return Credential{}, fmt.Errorf("looking up token: %w", err)
	}
	cred, err := s.Get(ctx, publicID)
	if errors.Is(err, ErrNotFound) {
		return Credential{}, ErrInvalidCredential
	}
	if err != nil {
		return Credential{}, err
	}
	if !cred.ActiveAt(now) {
		s.forget(hash)
		return Credential{}, ErrInvalidCredential
	}
	s.remember(hash, cred, now)
	return cred, nil
}

// verified returns the credential behind hash when this replica looked it
// up within the cache's lifetime and it is still active: no round trip.
func (s *Store) verified(hash string) (Credential, bool) {
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	if c, ok := s.cache[hash]; ok && now.Before(c.expires) && c.cred.ActiveAt(now) {
		return c.cred, true
	}
	return Credential{}, false
}

func (s *Store) remember(hash string, cred Credential, now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.cache) >= s.cfg.CacheSize {
		// Dropping everything is crude but bounded and rare: the cache only
		// saves round trips, and a cold replica refills it within one TTL.
		clear(s.cache)
	}
	s.cache[hash] = cachedCredential{cred: cred, expires: now.Add(s.cfg.CacheTTL)}
}

func (s *Store) forget(hash string) {
	s.mu.Lock()
	delete(s.cache, hash)
	s.mu.Unlock()
}

// Get reads a credential by public id, revoked or not.
func (s *Store) Get(ctx context.Context, publicID string) (Credential, error) {
	rec, err := s.rdb.HGetAll(ctx, credentialKey(publicID)).Result()
	if err != nil {
		return Credential{}, fmt.Errorf("reading credential %s: %w", publicID, err)
	}
	if len(rec) == 0 {
		return Credential{}, fmt.Errorf("credential %s: %w", publicID, ErrNotFound)
	}
	return fromRecord(publicID, rec)
}

// revokeScript marks a credential's record revoked, keeping the first
// revocation time when revoked twice (HSETNX), and only if the record
// exists: one step, so a record that expires between a read and the mark
// (an account token lives minutes) is never recreated as a hash holding
// revoked_at alone and no expiry. KEYS: the record. ARGV: the time.
var revokeScript = redis.NewScript(`
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('HSETNX', KEYS[1], 'revoked_at', ARGV[1])
return 1
`)

// Revoke marks the credential revoked. Every replica refuses it within CacheTTL.
func (s *Store) Revoke(ctx context.Context, publicID string) error {
	at := s.now().UTC().Truncate(time.Millisecond).Format(time.RFC3339Nano)
	marked, err := revokeScript.Run(ctx, s.rdb, []string{credentialKey(publicID)}, at).Int()
	if err != nil {
		return fmt.Errorf("revoking credential %s: %w", publicID, err)
	}
	if marked == 0 {
		return fmt.Errorf("credential %s: %w", publicID, ErrNotFound)
	}
	return nil
}

// List returns every credential of tenant ("" for all), oldest first.
func (s *Store) List(ctx context.Context, tenant string) ([]Credential, error) {
	ids, err := s.rdb.SMembers(ctx, credentialIndexKey).Result()
	if err != nil {
		return nil, fmt.Errorf("listing credentials: %w", err)
	}
	var out []Credential
	for _, id := range ids {
		c, err := s.Get(ctx, id)
		if errors.Is(err, ErrNotFound) {
			// A short-lived credential whose record expired: its index
			// entry goes too. (Best effort: the next List retries.)
			_ = s.rdb.SRem(ctx, credentialIndexKey, id).Err()
			continue
		}
		if err != nil {
			return nil, err
		}
		if !c.ExpiresAt.IsZero() && s.now().After(c.ExpiresAt.Add(ExpiredRetention)) {
			// Minted before records expired by themselves: gone now.
			_ = s.rdb.Del(ctx, credentialKey(id)).Err()
			_ = s.rdb.SRem(ctx, credentialIndexKey, id).Err()
			continue
		}
		if tenant == "" || c.Tenant == tenant {
			out = append(out, c)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].CreatedAt.Equal(out[j].CreatedAt) {
			return out[i].CreatedAt.Before(out[j].CreatedAt)
		}
		return out[i].PublicID < out[j].PublicID
	})
	return out, nil
}

func toRecord(c Credential) map[string]any {
	rec := map[string]any{
		"tenant":      c.Tenant,
		"environment": string(c.Environment),
		"role":        string(c.Role),
		"partner_id":  c.PartnerID,
		"agent_id":    c.AgentID,
		"label":       c.Label,
		"created_at":  c.CreatedAt.Format(time.RFC3339Nano),
	}
	if !c.ExpiresAt.IsZero() {
		rec["expires_at"] = c.ExpiresAt.Format(time.RFC3339Nano)
	}
	if c.ForAccount() {
		scopes := make([]string, len(c.Scopes))
		for i, sc := range c.Scopes {
			scopes[i] = string(sc)
		}
		rec["account_id"], rec["client_id"], rec["audience"], rec["case_id"] = c.AccountID, c.ClientID, c.Audience, c.CaseID
		if c.ActorID != "" {
			rec["actor_id"] = c.ActorID
		}
		rec["scopes"] = strings.Join(scopes, " ")
	}
	return rec
}

func fromRecord(publicID string, rec map[string]string) (Credential, error) {
	c := Credential{
		PublicID:    publicID,
		Tenant:      rec["tenant"],
		Environment: Environment(rec["environment"]),
		Role:        Role(rec["role"]),
		PartnerID:   rec["partner_id"],
		AgentID:     rec["agent_id"],
		Label:       rec["label"],
		AccountID:   rec["account_id"],
		ClientID:    rec["client_id"],
		Audience:    rec["audience"],
		CaseID:      rec["case_id"],
		ActorID:     rec["actor_id"],
	}
	for _, sc := range strings.Fields(rec["scopes"]) {
		c.Scopes = append(c.Scopes, Scope(sc))
	}
	var err error
	if c.CreatedAt, err = time.Parse(time.RFC3339Nano, rec["created_at"]); err != nil {
		return Credential{}, fmt.Errorf("credential %s: bad created_at: %w", publicID, err)
	}
	if v := rec["expires_at"]; v != "" {
		if c.ExpiresAt, err = time.Parse(time.RFC3339Nano, v); err != nil {
			return Credential{}, fmt.Errorf("credential %s: bad expires_at: %w", publicID, err)
		}
	}
	if v := rec["revoked_at"]; v != "" {
		if c.RevokedAt, err = time.Parse(time.RFC3339Nano, v); err != nil {
			return Credential{}, fmt.Errorf("credential %s: bad revoked_at: %w", publicID, err)
		}
	}
	return c, nil
}

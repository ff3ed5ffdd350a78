package auth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/redis/go-redis/v9"
)

// The tribunal pool: per tenant and environment, the adjudicator and
// reviewer credentials cases may be assigned to, each with the record it
// was added with (an adjudicator's configuration, which a case pins when
// it is assigned).
//
// The pool lives in the credential keyspace (pc:auth:) rather than under
// a service's prefix: it is a fact about credentials, written by pcadm and
// read by the cases service, both through this package, and the
// credential keyspace is the one every service may read. A member is
// listed only while its credential is active, which TribunalPool checks
// against the credential record beside it; revoking the credential is
// enough to take a member out of every future assignment.
//
// Keys, both under the hash tag {<tenant>:<env>} so that one script adds
// or removes a member atomically on Redis Cluster too:
//
//	pc:auth:tribunal:{<tenant>:<env>}              set of member public ids
//	pc:auth:tribunal:{<tenant>:<env>}:<publicID>   hash: configuration, added_at[, configured_at]

// TribunalMember is an active credential of a tribunal pool and the record
// it was added with.
type TribunalMember struct {
	Credential Credential
	// Configuration is an adjudicator's configuration as the caller
	// validated and stored it (JSON; pcadm stores award.Configuration's
	// canonical bytes); nil for a reviewer.
	Configuration []byte
	AddedAt       time.Time
}

// Refusals of the tribunal pool. An unknown credential, or one that is
// not a member, is ErrNotFound; a revoked or expired one is
// ErrInvalidCredential.
var (
	ErrNotTribunal   = errors.New("credential's role is not a tribunal role")
	ErrAlreadyMember = errors.New("credential is already a member of its tribunal pool")
	ErrConfiguration = errors.New("configuration does not fit the member's role")
)

func tribunalPoolKey(tenant string, env Environment) string {
	return "pc:auth:tribunal:{" + tenant + ":" + string(env) + "}"
}

func tribunalMemberKey(tenant string, env Environment, publicID string) string {
	return tribunalPoolKey(tenant, env) + ":" + publicID
}

// AddTribunalMember adds the credential publicID to the tribunal pool of
// its tenant and environment. The credential must exist, be active and
// have a tribunal role. An adjudicator needs its configuration (JSON the
// caller validated: award.Configuration); a reviewer has none. Adding a
// member twice is ErrAlreadyMember: its configuration changes through
// ConfigureTribunalMember.
func (s *Store) AddTribunalMember(ctx context.Context, publicID string, configuration []byte) error {
	cred, err := s.tribunalCredential(ctx, publicID)
	if err != nil {
		return err
	}
	if err := checkConfiguration(cred.Role, configuration); err != nil {
		return fmt.Errorf("adding %s to the tribunal pool: %w", publicID, err)
	}
	at := s.now().UTC().Truncate(time.Millisecond).Format(time.RFC3339Nano)
	added, err := addTribunalMemberScript.Run(ctx, s.rdb,
		[]string{tribunalPoolKey(cred.Tenant, cred.Environment), tribunalMemberKey(cred.Tenant, cred.Environment, publicID)},
		publicID, string(configuration), at).Int()
	if err != nil {
		return fmt.Errorf("adding %s to the tribunal pool: %w", publicID, err)
	}
	if added == 0 {
		return fmt.Errorf("adding %s to the tribunal pool of %s/%s: %w", publicID, cred.Tenant, cred.Environment, ErrAlreadyMember)
	}
	return nil
}

// addTribunalMemberScript writes the member's record and lists it, unless
// it is a member already (returns 0).
var addTribunalMemberScript = redis.NewScript(`
if redis.call('EXISTS', KEYS[2]) == 1 then
  return 0
end
redis.call('HSET', KEYS[2], 'configuration', ARGV[2], 'added_at', ARGV[3])
redis.call('SADD', KEYS[1], ARGV[1])
return 1
`)

// ConfigureTribunalMember replaces an adjudicator's configuration. A case
// pins the configuration when it is assigned, so this changes future
// assignments only. The credential must be an active adjudicator of the
// pool (a reviewer has no configuration: ErrConfiguration).
func (s *Store) ConfigureTribunalMember(ctx context.Context, publicID string, configuration []byte) error {
	cred, err := s.tribunalCredential(ctx, publicID)
	if err != nil {
		return err
	}
	if cred.Role != RoleAdjudicator {
		return fmt.Errorf("configuring %s: a %s has no configuration: %w", publicID, cred.Role, ErrConfiguration)
	}
	if err := checkConfiguration(cred.Role, configuration); err != nil {
		return fmt.Errorf("configuring %s: %w", publicID, err)
	}
	at := s.now().UTC().Truncate(time.Millisecond).Format(time.RFC3339Nano)
	changed, err := configureTribunalMemberScript.Run(ctx, s.rdb,
		[]string{tribunalMemberKey(cred.Tenant, cred.Environment, publicID)}, string(configuration), at).Int()
	if err != nil {
		return fmt.Errorf("configuring %s: %w", publicID, err)
	}
	if changed == 0 {
		return fmt.Errorf("configuring %s: not a member of the tribunal pool of %s/%s: %w", publicID, cred.Tenant, cred.Environment, ErrNotFound)
	}
	return nil
}

// configureTribunalMemberScript changes a member's configuration, or
// returns 0 for a credential that is not a member.
var configureTribunalMemberScript = redis.NewScript(`
if redis.call('EXISTS', KEYS[1]) == 0 then
  return 0
end
redis.call('HSET', KEYS[1], 'configuration', ARGV[1], 'configured_at', ARGV[2])
return 1
`)

// RemoveTribunalMember takes the credential publicID out of its tribunal
// pool, revoked or not: no case is assigned to it from then on. Cases
// already assigned to it keep it; revoking the credential is what stops
// it acting anywhere.
func (s *Store) RemoveTribunalMember(ctx context.Context, publicID string) error {
	cred, err := s.Get(ctx, publicID)
	if err != nil {
		return err
	}
	removed, err := removeTribunalMemberScript.Run(ctx, s.rdb,
		[]string{tribunalPoolKey(cred.Tenant, cred.Environment), tribunalMemberKey(cred.Tenant, cred.Environment, publicID)},
		publicID).Int()
	if err != nil {
		return fmt.Errorf("removing %s from the tribunal pool: %w", publicID, err)
	}
	if removed == 0 {
		return fmt.Errorf("removing %s: not a member of the tribunal pool of %s/%s: %w", publicID, cred.Tenant, cred.Environment, ErrNotFound)
	}
	return nil
}

// removeTribunalMemberScript deletes the member's record and unlists it;
// it returns how many of the two existed.
var removeTribunalMemberScript = redis.NewScript(`
return redis.call('DEL', KEYS[2]) + redis.call('SREM', KEYS[1], ARGV[1])
`)

// TribunalPool returns the members of tenant's and env's tribunal pool
// whose credentials are active (neither revoked nor expired), sorted by
// public id. A revoked member drops out whether or not it was removed.
func (s *Store) TribunalPool(ctx context.Context, tenant string, env Environment) ([]TribunalMember, error) {
	if tenant == "" || !env.Valid() {
		return nil, fmt.Errorf("tribunal pool of %q/%q: tenant and environment (sandbox or live) required", tenant, env)
	}
	ids, err := s.rdb.SMembers(ctx, tribunalPoolKey(tenant, env)).Result()
	if err != nil {
		return nil, fmt.Errorf("listing the tribunal pool of %s/%s: %w", tenant, env, err)
	}
	slices.Sort(ids)
	now := s.now()
	out := []TribunalMember{}
	for _, id := range ids {
		cred, err := s.Get(ctx, id)
		if errors.Is(err, ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		// The key already says tenant and environment; the record is
		// checked too, so a member can only ever be what its credential
		// says it is.
		if !cred.ActiveAt(now) || !cred.Role.Tribunal() || cred.Tenant != tenant || cred.Environment != env {
			continue
		}
		rec, err := s.rdb.HGetAll(ctx, tribunalMemberKey(tenant, env, id)).Result()
		if err != nil {
			return nil, fmt.Errorf("reading tribunal member %s: %w", id, err)
		}
		if len(rec) == 0 {
			continue // removed since SMEMBERS
		}
		m := TribunalMember{Credential: cred}
		if c := rec["configuration"]; c != "" {
			m.Configuration = []byte(c)
		}
		if m.AddedAt, err = time.Parse(time.RFC3339Nano, rec["added_at"]); err != nil {
			return nil, fmt.Errorf("tribunal member %s: bad added_at: %w", id, err)
		}
		out = append(out, m)
	}
	return out, nil
}

// tribunalCredential reads publicID and checks that it can be a member:
// active, with a tribunal role.
func (s *Store) tribunalCredential(ctx context.Context, publicID string) (Credential, error) {
	cred, err := s.Get(ctx, publicID)
	if err != nil {
		return Credential{}, err
	}
	if !cred.ActiveAt(s.now()) {
		return Credential{}, fmt.Errorf("credential %s: %w", publicID, ErrInvalidCredential)
	}
	if !cred.Role.Tribunal() {
		return Credential{}, fmt.Errorf("credential %s is a %s: %w", publicID, cred.Role, ErrNotTribunal)
	}
	return cred, nil
}

// checkConfiguration checks what this package can know of a member's
// configuration: an adjudicator has one, a JSON document; a reviewer has
// none. What the document says is the caller's to check.
func checkConfiguration(role Role, configuration []byte) error {
	switch {
	case role == RoleReviewer && len(configuration) > 0:
		return fmt.Errorf("a reviewer has no configuration: %w", ErrConfiguration)
	case role == RoleAdjudicator && len(configuration) == 0:
		return fmt.Errorf("an adjudicator needs its configuration: %w", ErrConfiguration)
	case role == RoleAdjudicator && !json.Valid(configuration):
		return fmt.Errorf("an adjudicator's configuration must be JSON: %w", ErrConfiguration)
	}
	return nil
}

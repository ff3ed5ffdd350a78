// The authorization code grant's keys: the applications' clients, the
// authorization requests waiting for a person's decision, and the grants
// with their refresh token families.
//
//	pc:acct:{c:<clientId>}:app     an application's client (JSON, written once)
//	pc:acct:authz:<hash>           an authorization request waiting for consent (JSON, AuthorizationLifetime, taken once with GETDEL)
//	pc:acct:{g:<grantId>}:grant    a grant (hash): its binding, its code's hash, its current refresh token's hash, revoked
//	pc:acct:{g:<grantId>}:spent    the hashes of the family's refresh tokens rotated out (set), for reuse detection
//	pc:acct:{g:<grantId>}:tokens   the access tokens the grant issued (sorted set by expiry), revoked with it
//
// A code and a refresh token carry their grant's id, so every step on a
// grant is one script over keys of one slot ({g:<grantId>}), and only the
// SHA-256 of a code or a refresh token is stored.

package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/pcourt/pcourt/services/accounts/internal/account"
)

// ErrAuthorizationNotFound is an authorization request that expired, was
// decided already, or never was.
var ErrAuthorizationNotFound = errors.New("no such authorization request")

// ErrGrantNotFound is a code or refresh token that names no grant, or
// whose hash is not the grant's.
var ErrGrantNotFound = errors.New("no such grant")

// ErrGrantReused is a spent code or rotated refresh token presented
// again: the script revoked the grant, and the caller revokes the access
// tokens it returned.
var ErrGrantReused = errors.New("grant secret reused")

// ErrGrantChanged is a grant that was redeemed, rotated, expired or
// revoked between its load and its step: the caller refuses the request.
var ErrGrantChanged = errors.New("grant changed concurrently")

func appKey(clientID string) string       { return prefix + "{c:" + clientID + "}:app" }
func authorizationKey(hash string) string { return prefix + "authz:" + hash }
func grantTag(id string) string           { return "{g:" + id + "}" }
func grantKey(id string) string           { return prefix + grantTag(id) + ":grant" }
func spentKey(id string) string           { return prefix + grantTag(id) + ":spent" }
func grantTokensKey(id string) string     { return prefix + grantTag(id) + ":tokens" }

type appRecord struct {
	ID           string    `json:"id"`
	Name         string    `json:"name"`
	RedirectURIs []string  `json:"redirectUris"`
	AuthMethod   string    `json:"authMethod"`
	SecretHash   string    `json:"secretHash,omitempty"`
	Scopes       []string  `json:"scopes"`
	CreatedAt    time.Time `json:"createdAt"`
}

// CreateApp stores an application's new client.
func (s *Accounts) CreateApp(ctx context.Context, a account.App) error {
	b, err := json.Marshal(appRecord{ID: a.ID, Name: a.Name, RedirectURIs: a.RedirectURIs, AuthMethod: string(a.AuthMethod),
		SecretHash: a.SecretHash, Scopes: scopeStrings(a.Scopes), CreatedAt: a.CreatedAt.UTC()})
	if err != nil {
		return fmt.Errorf("encoding client %s: %w", a.ID, err)
	}
	ok, err := s.rdb.SetNX(ctx, appKey(a.ID), b, 0).Result()
	if err != nil {
		return fmt.Errorf("creating client %s: %w", a.ID, err)
	}
	if !ok {
		return fmt.Errorf("creating client %s: id taken", a.ID)
	}
	return nil
}

// App loads an application's client; ErrNotFound when there is none.
func (s *Accounts) App(ctx context.Context, clientID string) (account.App, error) {
	raw, err := s.rdb.Get(ctx, appKey(clientID)).Bytes()
	if errors.Is(err, redis.Nil) {
		return account.App{}, ErrNotFound
	}
	if err != nil {
		return account.App{}, fmt.Errorf("loading client %s: %w", clientID, err)
	}
	var r appRecord
	if err := json.Unmarshal(raw, &r); err != nil {
		return account.App{}, fmt.Errorf("decoding client %s: %w", clientID, err)
	}
	return account.App{ID: r.ID, Name: r.Name, RedirectURIs: r.RedirectURIs, AuthMethod: account.AuthMethod(r.AuthMethod),
		SecretHash: r.SecretHash, Scopes: toScopes(r.Scopes), CreatedAt: r.CreatedAt}, nil
}

type authorizationRecord struct {
	ClientID    string   `json:"clientId"`
	RedirectURI string   `json:"redirectUri"`
	State       string   `json:"state"`
	Challenge   string   `json:"challenge"`
	Scopes      []string `json:"scopes"`
	Resource    string   `json:"resource"`
	CaseID      string   `json:"caseId,omitempty"`
}

// SaveAuthorization keeps a checked authorization request under the hash
// of its id until the person decides, for account.AuthorizationLifetime.
func (s *Accounts) SaveAuthorization(ctx context.Context, hash string, a account.Authorization) error {
	b, err := json.Marshal(authorizationRecord{ClientID: a.ClientID, RedirectURI: a.RedirectURI, State: a.State, Challenge: a.Challenge,
		Scopes: scopeStrings(a.Scopes), Resource: a.Resource, CaseID: a.CaseID})
	if err != nil {
		return fmt.Errorf("encoding authorization request: %w", err)
	}
	if err := s.rdb.Set(ctx, authorizationKey(hash), b, account.AuthorizationLifetime).Err(); err != nil {
		return fmt.Errorf("storing authorization request: %w", err)
	}
	return nil
}

// Authorization reads a waiting authorization request (the consent page);
// TakeAuthorization reads and deletes it (the decision), so it is decided
// once.
func (s *Accounts) Authorization(ctx context.Context, hash string) (account.Authorization, error) {
	return decodeAuthorization(s.rdb.Get(ctx, authorizationKey(hash)).Bytes())
}

// TakeAuthorization reads and deletes a waiting authorization request.
func (s *Accounts) TakeAuthorization(ctx context.Context, hash string) (account.Authorization, error) {
	return decodeAuthorization(s.rdb.GetDel(ctx, authorizationKey(hash)).Bytes())
}

func decodeAuthorization(raw []byte, err error) (account.Authorization, error) {
	if errors.Is(err, redis.Nil) {
		return account.Authorization{}, ErrAuthorizationNotFound
	}
	if err != nil {
		return account.Authorization{}, fmt.Errorf("reading authorization request: %w", err)
	}
	var r authorizationRecord
	if err := json.Unmarshal(raw, &r); err != nil {
		return account.Authorization{}, fmt.Errorf("decoding authorization request: %w", err)
	}
	return account.Authorization{ClientID: r.ClientID, RedirectURI: r.RedirectURI, State: r.State, Challenge: r.Challenge,
		Scopes: toScopes(r.Scopes), Resource: r.Resource, CaseID: r.CaseID}, nil
}

// CreateGrant stores an approved grant with its code's hash; it expires
// with its code unless the code is redeemed.
func (s *Accounts) CreateGrant(ctx context.Context, g account.Grant, codeHash string) error {
	fields := map[string]any{
		"tenant": g.Tenant, "environment": g.Environment, "account": g.AccountID, "client": g.ClientID,
		"redirect": g.RedirectURI, "challenge": g.Challenge, "scopes": strings.Join(scopeStrings(g.Scopes), " "),
		"resource": g.Resource, "case": g.CaseID, "created": g.CreatedAt.UnixMilli(),
		"code_hash": codeHash, "code_exp": g.CodeExpiresAt.UnixMilli(), "code_used": "0", "revoked": "0",
	}
	_, err := s.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.HSet(ctx, grantKey(g.ID), fields)
		p.PExpireAt(ctx, grantKey(g.ID), g.CodeExpiresAt)
		return nil
	})
	if err != nil {
		return fmt.Errorf("storing grant %s: %w", g.ID, err)
	}
	return nil
}

// StoredGrant is a grant with the hashes of its code and its current
// refresh token, which the caller compares with what it was given.
type StoredGrant struct {
	account.Grant
	CodeHash    string
	RefreshHash string
}

// Grant loads a grant; ErrGrantNotFound when there is none.
func (s *Accounts) Grant(ctx context.Context, id string) (StoredGrant, error) {
	h, err := s.rdb.HGetAll(ctx, grantKey(id)).Result()
	if err != nil {
		return StoredGrant{}, fmt.Errorf("loading grant %s: %w", id, err)
	}
	if len(h) == 0 {
		return StoredGrant{}, ErrGrantNotFound
	}
	ms := func(field string) time.Time {
		n, _ := strconv.ParseInt(h[field], 10, 64)
		if n == 0 {
			return time.Time{}
		}
		return time.UnixMilli(n).UTC()
	}
	return StoredGrant{Grant: account.Grant{
		ID: id, Tenant: h["tenant"], Environment: h["environment"], AccountID: h["account"],
		Authorization: account.Authorization{ClientID: h["client"], RedirectURI: h["redirect"], Challenge: h["challenge"],
			Scopes: toScopes(strings.Fields(h["scopes"])), Resource: h["resource"], CaseID: h["case"]},
		CreatedAt: ms("created"), CodeExpiresAt: ms("code_exp"), CodeRedeemed: h["code_used"] == "1",
		RefreshExpiresAt: ms("refresh_exp"), Revoked: h["revoked"] == "1",
	}, CodeHash: h["code_hash"], RefreshHash: h["refresh_hash"]}, nil
}

// redeemScript KEYS: grant, tokens. ARGV: code hash, now (ms), the first
// refresh token's hash, its expiry (ms). A code redeemed before revokes
// the grant and answers the access tokens to revoke.
var redeemScript = redis.NewScript(`
local g = redis.call('HMGET', KEYS[1], 'code_hash', 'code_used', 'code_exp', 'revoked')
if not g[1] or g[1] ~= ARGV[1] then return {'not_found'} end
if g[4] == '1' then return {'changed'} end
if g[2] == '1' then
  redis.call('HSET', KEYS[1], 'revoked', '1')
  return {'reused', unpack(redis.call('ZRANGE', KEYS[2], 0, -1))}
end
if tonumber(g[3]) <= tonumber(ARGV[2]) then return {'changed'} end
redis.call('HSET', KEYS[1], 'code_used', '1', 'refresh_hash', ARGV[3], 'refresh_exp', ARGV[4])
redis.call('PEXPIREAT', KEYS[1], ARGV[4])
return {'ok'}
`)

// RedeemCode marks the grant's code redeemed and records its first
// refresh token, in one script: of two exchanges of one code exactly one
// succeeds, and the other revokes the grant (ErrGrantReused, with the
// access tokens to revoke).
func (s *Accounts) RedeemCode(ctx context.Context, id, codeHash, refreshHash string, refreshExpiresAt, now time.Time) ([]string, error) {
	return runGrantScript(ctx, s.rdb, redeemScript, []string{grantKey(id), grantTokensKey(id)},
		codeHash, now.UnixMilli(), refreshHash, refreshExpiresAt.UnixMilli())
}

// rotateScript KEYS: grant, spent, tokens. ARGV: presented refresh hash,
// now (ms), the new hash, its expiry (ms). The current token rotates; a
// rotated one presented again revokes the grant.
var rotateScript = redis.NewScript(`
local g = redis.call('HMGET', KEYS[1], 'refresh_hash', 'refresh_exp', 'revoked')
if not g[1] then return {'not_found'} end
if g[3] == '1' then return {'changed'} end
if g[1] == ARGV[1] then
  if tonumber(g[2]) <= tonumber(ARGV[2]) then return {'changed'} end
  redis.call('SADD', KEYS[2], ARGV[1])
  redis.call('HSET', KEYS[1], 'refresh_hash', ARGV[3], 'refresh_exp', ARGV[4])
  redis.call('PEXPIREAT', KEYS[1], ARGV[4])
  redis.call('PEXPIREAT', KEYS[2], ARGV[4])
  return {'ok'}
end
if redis.call('SISMEMBER', KEYS[2], ARGV[1]) == 1 then
  redis.call('HSET', KEYS[1], 'revoked', '1')
  return {'reused', unpack(redis.call('ZRANGE', KEYS[3], 0, -1))}
end
return {'not_found'}
`)

// RotateRefresh replaces the grant's current refresh token (presented
// as its hash) with a new one, in one script. A token rotated out before
// revokes the grant (ErrGrantReused, with the access tokens to revoke);
// one the grant never issued is ErrGrantNotFound.
func (s *Accounts) RotateRefresh(ctx context.Context, id, presentedHash, newHash string, newExpiresAt, now time.Time) ([]string, error) {
	return runGrantScript(ctx, s.rdb, rotateScript, []string{grantKey(id), spentKey(id), grantTokensKey(id)},
		presentedHash, now.UnixMilli(), newHash, newExpiresAt.UnixMilli())
}

// IssuedRefresh reports whether hash is a refresh token the grant issued:
// its current one, or one rotated out.
func (s *Accounts) IssuedRefresh(ctx context.Context, id, hash string) (current, rotated bool, err error) {
	g, err := s.Grant(ctx, id)
	if errors.Is(err, ErrGrantNotFound) {
		return false, false, nil
	}
	if err != nil {
		return false, false, err
	}
	if g.RefreshHash != "" && g.RefreshHash == hash {
		return true, false, nil
	}
	rotated, err = s.rdb.SIsMember(ctx, spentKey(id), hash).Result()
	if err != nil {
		return false, false, fmt.Errorf("reading grant %s: %w", id, err)
	}
	return false, rotated, nil
}

// revokeScript KEYS: grant, tokens. Marks the grant revoked and answers
// the access tokens it issued.
var revokeScript = redis.NewScript(`
if redis.call('EXISTS', KEYS[1]) == 0 then return {'ok'} end
redis.call('HSET', KEYS[1], 'revoked', '1')
return {'ok', unpack(redis.call('ZRANGE', KEYS[2], 0, -1))}
`)

// RevokeGrant marks the grant revoked (no code, refresh or token of it is
// honoured from then) and returns the access tokens it issued, which the
// caller revokes.
func (s *Accounts) RevokeGrant(ctx context.Context, id string) ([]string, error) {
	return runGrantScript(ctx, s.rdb, revokeScript, []string{grantKey(id), grantTokensKey(id)})
}

func runGrantScript(ctx context.Context, rdb redis.UniversalClient, script *redis.Script, keys []string, args ...any) ([]string, error) {
	res, err := script.Run(ctx, rdb, keys, args...).StringSlice()
	if err != nil {
		return nil, fmt.Errorf("running the grant's script on %s: %w", keys[0], err)
	}
	switch res[0] {
	case "ok":
		return res[1:], nil
	case "reused":
		return res[1:], ErrGrantReused
	case "changed":
		return nil, ErrGrantChanged
	}
	return nil, ErrGrantNotFound
}

// HoldGrantToken records an access token the grant issued, so revoking
// the grant revokes it, and reports whether the grant is still live:
// a grant revoked in between leaves the caller to revoke the token.
func (s *Accounts) HoldGrantToken(ctx context.Context, id, publicID string, expiresAt, now time.Time) (bool, error) {
	key := grantTokensKey(id)
	var revoked *redis.StringCmd
	_, err := s.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.ZRemRangeByScore(ctx, key, "-inf", fmt.Sprint(now.UnixMilli()))
		p.ZAdd(ctx, key, redis.Z{Score: float64(expiresAt.UnixMilli()), Member: publicID})
		p.PExpireAt(ctx, key, expiresAt)
		revoked = p.HGet(ctx, grantKey(id), "revoked")
		return nil
	})
	if err != nil && !errors.Is(err, redis.Nil) {
		return false, fmt.Errorf("recording token of grant %s: %w", id, err)
	}
	return revoked.Val() == "0", nil
}

func scopeStrings(scopes []account.Scope) []string {
	out := make([]string, len(scopes))
	for i, s := range scopes {
		out[i] = string(s)
	}
	return out
}

func toScopes(ss []string) []account.Scope {
	out := make([]account.Scope, len(ss))
	for i, s := range ss {
		out[i] = account.Scope(s)
	}
	return out
}

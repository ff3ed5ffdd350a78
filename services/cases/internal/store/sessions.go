package store

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// The hosted respondent page's sessions. The one-time login token filings
// shows once (its SHA-256 is the case's respondent_login capability) is
// spent by recording the spending instant beside the case, under the
// token's own hash, in the same step that creates the session it buys:
//
//	pc:cases:{cases.NN}:case:<id>:login-spent:<t>      string: when the login token hashing to <t> was spent (ms); never expires
//	pc:cases:{cases.NN}:case:<id>:respond-session:<h>  hash: csrf, created (ms); expires
//
// <h> is the SHA-256 of the session id the browser holds in its cookie:
// Redis never sees the session id itself, so a copy of Redis opens no
// session.
//
// The marker is per token because the claimant's partner may reissue the
// link (reissue_login puts a new hash in respondent_login): the new
// token's marker does not exist, so it signs in once, while the old
// token no longer matches the case at all. Sessions are keys of their
// own, so a reissue ends none of them: a session ends by signing out or
// by expiring, never silently.

// Refusals of a login exchange.
var (
	// ErrLoginSpent: the case's login token was exchanged before.
	ErrLoginSpent = errors.New("login token already used")
	// ErrLoginStale: the token is no longer the case's (the link was
	// reissued after the caller checked it).
	ErrLoginStale = errors.New("login token no longer the case's")
)

// RespondSession is a hosted respondent session of one case.
type RespondSession struct {
	// CSRF is the synchronizer token every form of the session carries.
	CSRF      string
	CreatedAt time.Time
}

// spendLoginScript: KEYS[1] the case hash, KEYS[2] the token's spent
// marker, KEYS[3] the new session, KEYS[4] the case's marker of the
// earlier form (legacyLoginSpentKey);
// ARGV[1] now ms, ARGV[2] csrf, ARGV[3] ttl ms, ARGV[4] the token's hash.
// The caller has compared the token with the case's respondent_login
// hash in constant time; a reissue may have replaced that hash since, so
// the step reads it again from the stored record ('stale' when it is no
// longer the token's) before it spends. Spending and creating the session
// are one act that a second exchange, concurrent or later, cannot repeat.
var spendLoginScript = redis.NewScript(`
local record = redis.call('HGET', KEYS[1], 'record')
if not record then return 'missing' end
local caps = cjson.decode(record)['capabilities']
if type(caps) ~= 'table' or caps['respondent_login'] ~= ARGV[4] then return 'stale' end
if redis.call('EXISTS', KEYS[4]) == 1 then return 'spent' end
if not redis.call('SET', KEYS[2], ARGV[1], 'NX') then return 'spent' end
redis.call('HSET', KEYS[3], 'csrf', ARGV[2], 'created', ARGV[1])
redis.call('PEXPIRE', KEYS[3], ARGV[3])
return 'ok'
`)

func (s *Cases) loginSpentKey(caseID, loginHash string) string {
	return s.keysFor(caseID).caseKey + ":login-spent:" + loginHash
}

// legacyLoginSpentKey is the one spent marker per case that sign-ins
// wrote before links could be reissued. While it exists no reissue has
// happened since (MigrateLegacyLogin moves it first), so the case's
// current link is the one it marks: spent.
func (s *Cases) legacyLoginSpentKey(caseID string) string {
	return s.keysFor(caseID).caseKey + ":login-spent"
}

// migrateLoginScript: KEYS[1] the case hash, KEYS[2] the legacy marker.
// It moves the legacy marker to the per-token marker of the link the case
// holds now, the one it marked, so that a reissue (which replaces that
// link) leaves the old link spent and the new one unspent.
var migrateLoginScript = redis.NewScript(`
local at = redis.call('GET', KEYS[2])
if not at then return 0 end
local record = redis.call('HGET', KEYS[1], 'record')
if record then
  local caps = cjson.decode(record)['capabilities']
  if type(caps) == 'table' and caps['respondent_login'] then
    redis.call('SET', KEYS[1] .. ':login-spent:' .. caps['respondent_login'], at, 'NX')
  end
end
redis.call('DEL', KEYS[2])
return 1
`)

// MigrateLegacyLogin moves a case's spent marker of the earlier form to
// its per-token form. The reissue calls it before it replaces the link.
func (s *Cases) MigrateLegacyLogin(ctx context.Context, caseID string) error {
	k := s.keysFor(caseID)
	if err := migrateLoginScript.Run(ctx, s.rdb, []string{k.caseKey, s.legacyLoginSpentKey(caseID)}).Err(); err != nil {
		return fmt.Errorf("migrating the login marker of case %s: %w", caseID, err)
	}
	return nil
}

func (s *Cases) sessionKey(caseID, sessionHash string) string {
	return s.keysFor(caseID).caseKey + ":respond-session:" + sessionHash
}

// SpendLogin spends the case's one-time login token, whose SHA-256 is
// loginHash, and creates the session whose id hashes to sessionHash,
// expiring after ttl. A token spent before is ErrLoginSpent, one that is no
// longer the case's respondent_login is ErrLoginStale, and both create
// nothing; a case that does not exist is ErrNotFound.
func (s *Cases) SpendLogin(ctx context.Context, caseID, loginHash, sessionHash, csrf string, now time.Time, ttl time.Duration) error {
	res, err := spendLoginScript.Run(ctx, s.rdb, []string{s.keysFor(caseID).caseKey, s.loginSpentKey(caseID, loginHash), s.sessionKey(caseID, sessionHash), s.legacyLoginSpentKey(caseID)},
		now.UnixMilli(), csrf, ttl.Milliseconds(), loginHash).Text()
	if err != nil {
		return fmt.Errorf("spending the login of case %s: %w", caseID, err)
	}
	switch res {
	case "ok":
		return nil
	case "spent":
		return ErrLoginSpent
	case "stale":
		return ErrLoginStale
	case "missing":
		return ErrNotFound
	}
	return fmt.Errorf("spending the login of case %s: unexpected answer %q", caseID, res)
}

// LoginSpent reports whether the login token hashing to loginHash was
// spent. It only reads: the sign-in page's preview of a link uses it to
// answer a spent token as the exchange would, without spending anything.
func (s *Cases) LoginSpent(ctx context.Context, caseID, loginHash string) (bool, error) {
	n, err := s.rdb.Exists(ctx, s.loginSpentKey(caseID, loginHash), s.legacyLoginSpentKey(caseID)).Result()
	if err != nil {
		return false, fmt.Errorf("reading the login of case %s: %w", caseID, err)
	}
	return n > 0, nil
}

// EndRespondSession deletes the case's session whose id hashes to
// sessionHash (signing out); the login token stays spent.
func (s *Cases) EndRespondSession(ctx context.Context, caseID, sessionHash string) error {
	if err := s.rdb.Del(ctx, s.sessionKey(caseID, sessionHash)).Err(); err != nil {
		return fmt.Errorf("ending a respondent session of case %s: %w", caseID, err)
	}
	return nil
}

// RespondSession returns the case's session whose id hashes to
// sessionHash, and false when there is none (never made, or expired).
func (s *Cases) RespondSession(ctx context.Context, caseID, sessionHash string) (RespondSession, bool, error) {
	v, err := s.rdb.HMGet(ctx, s.sessionKey(caseID, sessionHash), "csrf", "created").Result()
	if err != nil {
		return RespondSession{}, false, fmt.Errorf("reading a respondent session of case %s: %w", caseID, err)
	}
	csrf, _ := v[0].(string)
	if csrf == "" {
		return RespondSession{}, false, nil
	}
	ms, err := strconv.ParseInt(str(v[1]), 10, 64)
	if err != nil {
		return RespondSession{}, false, fmt.Errorf("a respondent session of case %s: bad created %q", caseID, str(v[1]))
	}
	return RespondSession{CSRF: csrf, CreatedAt: time.UnixMilli(ms).UTC()}, true, nil
}

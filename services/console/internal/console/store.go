package console

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/pcourt/pcourt/libs/webpage"
)

// Scope is the partner a link, a session and an audit trail belong to:
// the minting credential's tenant, environment and partner.
type Scope struct {
	Tenant      string
	Environment string
	PartnerID   string
}

// Link is a console link as stored: never its token, only the token's hash.
type Link struct {
	ID           string
	Scope        Scope
	Minter       string // the public id of the credential that minted it
	Capabilities []Capability
	ReturnURL    string
	CreatedAt    time.Time
	ExpiresAt    time.Time
	State        string // issued, spent, revoked
}

// Link states.
const (
	LinkIssued  = "issued"
	LinkSpent   = "spent"
	LinkRevoked = "revoked"
)

// Session is a console session: the link it came from and the short-lived
// credential minted for it, whose token is kept sealed under a key only the
// session cookie derives.
type Session struct {
	Link       Link
	CSRF       string
	Credential string // public id
	sealed     string
}

// Errors of the store.
var (
	ErrLinkNotFound = errors.New("no such console link")
	ErrLinkForged   = errors.New("console link token does not match")
	ErrLinkSpent    = errors.New("console link already used")
	ErrLinkRevoked  = errors.New("console link revoked")
	ErrLinkExpired  = errors.New("console link expired")
)

// Store keeps links, sessions and the audit trail in Redis under the
// console's prefix, pc:console:. A link's keys share the hash tag of its id, so spending
// it and creating the session is one script on Redis Cluster too.
type Store struct {
	rdb redis.UniversalClient
	// AuditMaxLen bounds each partner's audit stream (approximately).
	auditMaxLen int64
}

// NewStore returns a store over rdb.
func NewStore(rdb redis.UniversalClient) *Store { return &Store{rdb: rdb, auditMaxLen: 100000} }

func linkKey(id string) string    { return "pc:console:{" + id + "}:link" }
func sessionKey(id string) string { return "pc:console:{" + id + "}:session" }

// auditKey is one partner's append-only trail. The scope is hashed into
// the hash tag so that no tenant or partner id can break the tag.
func auditKey(s Scope) string {
	sum := sha256.Sum256([]byte(s.Tenant + "\x00" + s.Environment + "\x00" + s.PartnerID))
	return "pc:console:audit:{" + hex.EncodeToString(sum[:16]) + "}"
}

// expiredGrace keeps a link's record past its expiry, so that an expired
// link is told apart from a forged one and leads back to its return URL.
const expiredGrace = 7 * 24 * time.Hour

// CreateLink stores a new link with the hash of its token.
func (s *Store) CreateLink(ctx context.Context, l Link, tokenHash string) error {
	caps := make([]string, len(l.Capabilities))
	for i, c := range l.Capabilities {
		caps[i] = string(c)
	}
	key := linkKey(l.ID)
	_, err := s.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.HSet(ctx, key, map[string]any{
			"token": tokenHash, "tenant": l.Scope.Tenant, "env": l.Scope.Environment, "partner": l.Scope.PartnerID,
			"minter": l.Minter, "caps": strings.Join(caps, ","), "return": l.ReturnURL,
			"created": l.CreatedAt.UnixMilli(), "expires": l.ExpiresAt.UnixMilli(), "state": LinkIssued,
		})
		p.PExpireAt(ctx, key, l.ExpiresAt.Add(expiredGrace))
		return nil
	})
	if err != nil {
		return fmt.Errorf("storing console link %s: %w", l.ID, err)
	}
	return nil
}

// GetLink reads a link by id.
func (s *Store) GetLink(ctx context.Context, id string) (Link, error) {
	rec, err := s.rdb.HGetAll(ctx, linkKey(id)).Result()
	if err != nil {
		return Link{}, fmt.Errorf("reading console link %s: %w", id, err)
	}
	if len(rec) == 0 {
		return Link{}, ErrLinkNotFound
	}
	return linkFromRecord(id, rec)
}

func linkFromRecord(id string, rec map[string]string) (Link, error) {
	created, err1 := strconv.ParseInt(rec["created"], 10, 64)
	expires, err2 := strconv.ParseInt(rec["expires"], 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return Link{}, fmt.Errorf("console link %s: %w", id, err)
	}
	l := Link{ID: id, Scope: Scope{Tenant: rec["tenant"], Environment: rec["env"], PartnerID: rec["partner"]},
		Minter: rec["minter"], ReturnURL: rec["return"], State: rec["state"],
		CreatedAt: time.UnixMilli(created).UTC(), ExpiresAt: time.UnixMilli(expires).UTC()}
	for _, c := range strings.Split(rec["caps"], ",") {
		if c != "" {
			l.Capabilities = append(l.Capabilities, Capability(c))
		}
	}
	return l, nil
}

// exchangeScript spends a link and creates its session in one step: the
// token's hash must match, the link must be issued and unexpired. The
// session ends when the link's lifetime does.
var exchangeScript = redis.NewScript(`
local l = redis.call('HMGET', KEYS[1], 'token', 'state', 'expires')
if not l[1] then return 'missing' end
if l[1] ~= ARGV[1] then return 'forged' end
if l[2] ~= 'issued' then return l[2] end
if tonumber(l[3]) <= tonumber(ARGV[6]) then return 'expired' end
redis.call('HSET', KEYS[1], 'state', 'spent', 'spent', ARGV[6])
redis.call('DEL', KEYS[2])
redis.call('HSET', KEYS[2], 'cookie', ARGV[2], 'csrf', ARGV[3], 'cred', ARGV[4], 'sealed', ARGV[5])
redis.call('PEXPIREAT', KEYS[2], l[3])
return 'ok'
`)

// Exchange spends the link's token for a session whose cookie hashes to
// cookieHash, holding the sealed credential token.
func (s *Store) Exchange(ctx context.Context, linkID, tokenHash, cookieHash, csrf, credential, sealed string, now time.Time) error {
	res, err := exchangeScript.Run(ctx, s.rdb, []string{linkKey(linkID), sessionKey(linkID)},
		tokenHash, cookieHash, csrf, credential, sealed, now.UnixMilli()).Text()
	if err != nil {
		return fmt.Errorf("exchanging console link %s: %w", linkID, err)
	}
	switch res {
	case "ok":
		return nil
	case "missing":
		return ErrLinkNotFound
	case "forged":
		return ErrLinkForged
	case LinkSpent:
		return ErrLinkSpent
	case LinkRevoked:
		return ErrLinkRevoked
	case "expired":
		return ErrLinkExpired
	}
	return fmt.Errorf("exchanging console link %s: unexpected %q", linkID, res)
}

// Session returns the session whose cookie hashes to cookieHash, or false.
func (s *Store) Session(ctx context.Context, linkID, cookieHash string) (Session, bool, error) {
	var linkCmd, sessCmd *redis.MapStringStringCmd
	_, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		linkCmd = p.HGetAll(ctx, linkKey(linkID))
		sessCmd = p.HGetAll(ctx, sessionKey(linkID))
		return nil
	})
	if err != nil {
		return Session{}, false, fmt.Errorf("reading console session: %w", err)
	}
	rec, lrec := sessCmd.Val(), linkCmd.Val()
	if len(rec) == 0 || len(lrec) == 0 || !webpage.Equal(rec["cookie"], cookieHash) {
		return Session{}, false, nil
	}
	l, err := linkFromRecord(linkID, lrec)
	if err != nil {
		return Session{}, false, err
	}
	if l.State != LinkSpent {
		return Session{}, false, nil // revoked
	}
	return Session{Link: l, CSRF: rec["csrf"], Credential: rec["cred"], sealed: rec["sealed"]}, true, nil
}

// revokeScript revokes a link of the scope and ends its session,
// returning the session credential's public id ("" when none).
var revokeScript = redis.NewScript(`
local l = redis.call('HMGET', KEYS[1], 'tenant', 'env', 'partner', 'state')
if not l[1] or l[1] ~= ARGV[1] or l[2] ~= ARGV[2] or l[3] ~= ARGV[3] then return {'missing', ''} end
local cred = redis.call('HGET', KEYS[2], 'cred') or ''
redis.call('DEL', KEYS[2])
if l[4] ~= 'revoked' then redis.call('HSET', KEYS[1], 'state', 'revoked') end
return {l[4], cred}
`)

// Revoke revokes a link of scope and ends its session. It returns the
// state the link had and the session credential to revoke ("" for none).
func (s *Store) Revoke(ctx context.Context, scope Scope, linkID string) (string, string, error) {
	res, err := revokeScript.Run(ctx, s.rdb, []string{linkKey(linkID), sessionKey(linkID)},
		scope.Tenant, scope.Environment, scope.PartnerID).StringSlice()
	if err != nil {
		return "", "", fmt.Errorf("revoking console link %s: %w", linkID, err)
	}
	if res[0] == "missing" {
		return "", "", ErrLinkNotFound
	}
	return res[0], res[1], nil
}

// EndSession removes a session (sign-out); the link stays spent.
func (s *Store) EndSession(ctx context.Context, linkID string) error {
	if err := s.rdb.Del(ctx, sessionKey(linkID)).Err(); err != nil {
		return fmt.Errorf("ending console session %s: %w", linkID, err)
	}
	return nil
}

// AuditEntry is one line of a partner's console trail.
type AuditEntry struct {
	ID     string
	At     time.Time
	Action string
	Actor  string // a credential public id or a console link id
	Link   string
	Detail string
}

// Audit appends an entry to the scope's trail. The stream is only ever
// appended to; it is capped at about auditMaxLen entries per partner.
func (s *Store) Audit(ctx context.Context, scope Scope, e AuditEntry) error {
	err := s.rdb.XAdd(ctx, &redis.XAddArgs{Stream: auditKey(scope), MaxLen: s.auditMaxLen, Approx: true, Values: map[string]any{
		"at": e.At.UnixMilli(), "action": e.Action, "actor": e.Actor, "link": e.Link, "detail": e.Detail,
	}}).Err()
	if err != nil {
		return fmt.Errorf("appending to the console audit trail: %w", err)
	}
	return nil
}

// AuditTrail returns the scope's latest entries, newest first.
func (s *Store) AuditTrail(ctx context.Context, scope Scope, limit int64) ([]AuditEntry, error) {
	msgs, err := s.rdb.XRevRangeN(ctx, auditKey(scope), "+", "-", limit).Result()
	if err != nil {
		return nil, fmt.Errorf("reading the console audit trail: %w", err)
	}
	out := make([]AuditEntry, 0, len(msgs))
	for _, m := range msgs {
		str := func(k string) string { v, _ := m.Values[k].(string); return v }
		ms, _ := strconv.ParseInt(str("at"), 10, 64)
		out = append(out, AuditEntry{ID: m.ID, At: time.UnixMilli(ms).UTC(), Action: str("action"), Actor: str("actor"),
			Link: str("link"), Detail: str("detail")})
	}
	return out, nil
}

// seal encrypts a session's credential token under a key derived from the
// session cookie, which only the browser holds: what Redis keeps cannot
// be used as a bearer without the cookie.
func seal(cookie, linkID, token string) (string, error) {
	gcm, err := sealer(cookie)
	if err != nil {
		return "", err
	}
	nonce := make([]byte, gcm.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return "", err
	}
	return base64.RawStdEncoding.EncodeToString(gcm.Seal(nonce, nonce, []byte(token), []byte(linkID))), nil
}

func unseal(cookie, linkID, sealed string) (string, error) {
	gcm, err := sealer(cookie)
	if err != nil {
		return "", err
	}
	raw, err := base64.RawStdEncoding.DecodeString(sealed)
	if err != nil || len(raw) < gcm.NonceSize() {
		return "", errors.New("sealed credential is malformed")
	}
	plain, err := gcm.Open(nil, raw[:gcm.NonceSize()], raw[gcm.NonceSize():], []byte(linkID))
	if err != nil {
		return "", fmt.Errorf("opening the sealed credential: %w", err)
	}
	return string(plain), nil
}

func sealer(cookie string) (cipher.AEAD, error) {
	key := sha256.Sum256([]byte("pcourt console credential seal v1\x00" + cookie))
	block, err := aes.NewCipher(key[:])
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}

// People's keys: the address index, the codes sent to an address and the
// WebAuthn ceremonies in flight. The account sessions are libs/auth's, in
// the credential keyspace, where every service that takes them reads them.
//
//	pc:acct:{e:<address>}:account        the account that confirmed the address (its claim: one account per address)
//	pc:acct:{e:<address>}:code           the address's sign-in codes (JSON, compare and set on its version)
//	pc:acct:{e:<address>}:confirm:<id>   account <id>'s codes confirming the address (the same JSON)
//	pc:acct:ceremony:<hash>         a ceremony in flight (JSON, 5 minutes, taken once with GETDEL)
//
// <address> is the SHA-256 of tenant, environment and normalised address
// (so no address is in a key, and none of its characters ends the hash
// tag early), so an address's claim and its codes share a slot and one
// script both spends a confirmation's code and claims; <hash> is the SHA-256 of the browser's cookie value: only
// hashes are stored, as for every session and link of the hosted pages.

package store

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/pcourt/pcourt/services/accounts/internal/account"
)

// ErrEmailTaken is an address another account of the tenant and
// environment confirmed, and so holds.
var ErrEmailTaken = errors.New("another account confirmed this address")

// ErrCeremonyNotFound is a ceremony that expired, was taken already, or
// never began.
var ErrCeremonyNotFound = errors.New("no such ceremony")

func addressTag(tenant, env, email string) string {
	sum := sha256.Sum256([]byte(tenant + "\x00" + env + "\x00" + email))
	return "{e:" + hex.EncodeToString(sum[:16]) + "}"
}

func addressKey(tenant, env, email string) string {
	return prefix + addressTag(tenant, env, email) + ":account"
}

func codeKey(tenant, env, email string) string {
	return prefix + addressTag(tenant, env, email) + ":code"
}

func confirmKey(tenant, env, email, accountID string) string {
	return prefix + addressTag(tenant, env, email) + ":confirm:" + accountID
}

func ceremonyKey(hash string) string { return prefix + "ceremony:" + hash }

// CreatePerson stores a person's new account, its address unconfirmed
// and so not claimed (ClaimEmail claims it). An address another account
// confirmed is ErrEmailTaken, and nothing is written. The claim and the
// record are in different slots: an address confirmed between the check
// and the write leaves an account that can never confirm it and that no
// code reaches, which is harmless.
func (s *Accounts) CreatePerson(ctx context.Context, a account.Account) error {
	taken, err := s.AccountByEmail(ctx, a.Tenant, a.Environment, a.Email)
	if err != nil {
		return err
	}
	if taken != "" {
		return ErrEmailTaken
	}
	b, err := json.Marshal(toRecord(Versioned{Account: a}))
	if err != nil {
		return fmt.Errorf("encoding account %s: %w", a.ID, err)
	}
	ok, err := s.rdb.SetNX(ctx, accountKey(a.ID), b, 0).Result()
	if err != nil {
		return fmt.Errorf("creating account %s: %w", a.ID, err)
	}
	if !ok {
		return fmt.Errorf("creating account %s: id taken", a.ID)
	}
	return nil
}

// AccountByEmail returns the id of the account that confirmed a
// normalised address in a tenant and environment, "" when none did (an
// account whose address is unconfirmed is never returned).
func (s *Accounts) AccountByEmail(ctx context.Context, tenant, env, email string) (string, error) {
	id, err := s.rdb.Get(ctx, addressKey(tenant, env, email)).Result()
	if errors.Is(err, redis.Nil) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("looking up an address: %w", err)
	}
	return id, nil
}

// codeRecord is an address's codes as stored.
type codeRecord struct {
	AccountID   string    `json:"accountId"`
	Salt        []byte    `json:"salt"`
	Hash        string    `json:"hash"`
	IssuedAt    time.Time `json:"issuedAt"`
	ExpiresAt   time.Time `json:"expiresAt"`
	Attempts    int       `json:"attempts"`
	WindowStart time.Time `json:"windowStart"`
	Issued      int       `json:"issued"`
	Version     int64     `json:"version"`
}

// codeScript KEYS: the code. ARGV: json, expected version ("0": none
// stored), expiry in Unix milliseconds.
var codeScript = redis.NewScript(`
local cur = redis.call('GET', KEYS[1])
local v = '0'
if cur then v = tostring(cjson.decode(cur)['version']) end
if v ~= ARGV[2] then return 'conflict' end
redis.call('SET', KEYS[1], ARGV[1], 'PXAT', ARGV[3])
return 'ok'
`)

// ModifyCode loads an address's sign-in codes (zero when none is kept),
// applies change and stores what it returns if no other request changed
// them in between, retrying a few times. What change returns is stored
// even with an error (a wrong code is refused and its attempt counted),
// unless it is the state it was given; the error is returned as it is.
func (s *Accounts) ModifyCode(ctx context.Context, tenant, env, email string, change func(account.EmailCode) (account.EmailCode, error)) (account.EmailCode, error) {
	return s.modifyCode(ctx, codeKey(tenant, env, email), change)
}

// ModifyConfirmationCode is ModifyCode for the codes confirming an
// address for one account (issuing them: ClaimEmail spends them).
func (s *Accounts) ModifyConfirmationCode(ctx context.Context, tenant, env, email, accountID string, change func(account.EmailCode) (account.EmailCode, error)) (account.EmailCode, error) {
	return s.modifyCode(ctx, confirmKey(tenant, env, email, accountID), change)
}

func (s *Accounts) loadCode(ctx context.Context, key string) (codeRecord, error) {
	var cur codeRecord
	raw, err := s.rdb.Get(ctx, key).Bytes()
	switch {
	case errors.Is(err, redis.Nil):
	case err != nil:
		return cur, fmt.Errorf("loading an address's codes: %w", err)
	default:
		if err := json.Unmarshal(raw, &cur); err != nil {
			return cur, fmt.Errorf("decoding an address's codes: %w", err)
		}
	}
	return cur, nil
}

func (s *Accounts) modifyCode(ctx context.Context, key string, change func(account.EmailCode) (account.EmailCode, error)) (account.EmailCode, error) {
	for range 5 {
		cur, err := s.loadCode(ctx, key)
		if err != nil {
			return account.EmailCode{}, err
		}
		was := fromCodeRecord(cur)
		next, refused := change(was)
		before, _ := json.Marshal(toCodeRecord(was, cur.Version))
		after, err := json.Marshal(toCodeRecord(next, cur.Version))
		if err != nil {
			return was, fmt.Errorf("encoding an address's codes: %w", err)
		}
		if bytes.Equal(before, after) {
			return next, refused
		}
		after, _ = json.Marshal(toCodeRecord(next, cur.Version+1))
		res, err := codeScript.Run(ctx, s.rdb, []string{key}, after, cur.Version, next.KeepUntil().UnixMilli()).Text()
		if err != nil {
			return was, fmt.Errorf("storing an address's codes: %w", err)
		}
		if res == "ok" {
			return next, refused
		}
	}
	return account.EmailCode{}, ErrConflict
}

// claimScript KEYS: the confirmation's codes, the address's claim. ARGV:
// the codes' json (the code spent), their expected version, their expiry
// in Unix milliseconds, the account id. The claim is checked and made,
// and the code spent, in one step: an address another account claimed
// first is 'taken' and nothing is written.
var claimScript = redis.NewScript(`
local cur = redis.call('GET', KEYS[1])
local v = '0'
if cur then v = tostring(cjson.decode(cur)['version']) end
if v ~= ARGV[2] then return 'conflict' end
local owner = redis.call('GET', KEYS[2])
if owner and owner ~= ARGV[4] then return 'taken' end
redis.call('SET', KEYS[1], ARGV[1], 'PXAT', ARGV[3])
redis.call('SET', KEYS[2], ARGV[4])
return 'ok'
`)

// ClaimEmail checks a code typed to confirm an address for an account
// (verify: EmailCode.Verify on the account's confirmation codes) and, if
// it is the one sent, claims the address for the account and spends the
// code in one script: exactly one account ever holds an address, the
// first to confirm it. A refused code is returned as it is, its attempt
// counted as ModifyCode counts it. An address another account claimed is
// ErrEmailTaken, and then nothing changes (the code is not spent). An
// address the account claimed already is claimed again, harmlessly.
func (s *Accounts) ClaimEmail(ctx context.Context, tenant, env, email, accountID string, verify func(account.EmailCode) (account.EmailCode, string, error)) error {
	key, claim := confirmKey(tenant, env, email, accountID), addressKey(tenant, env, email)
	for range 5 {
		cur, err := s.loadCode(ctx, key)
		if err != nil {
			return err
		}
		was := fromCodeRecord(cur)
		next, id, refused := verify(was)
		if refused == nil && id != accountID {
			return fmt.Errorf("confirming an address for account %s: the code is account %q's", accountID, id)
		}
		after, err := json.Marshal(toCodeRecord(next, cur.Version+1))
		if err != nil {
			return fmt.Errorf("encoding an address's codes: %w", err)
		}
		var res string
		if refused != nil {
			before, _ := json.Marshal(toCodeRecord(was, cur.Version))
			now, _ := json.Marshal(toCodeRecord(next, cur.Version))
			if bytes.Equal(before, now) {
				return refused
			}
			res, err = codeScript.Run(ctx, s.rdb, []string{key}, after, cur.Version, next.KeepUntil().UnixMilli()).Text()
		} else {
			res, err = claimScript.Run(ctx, s.rdb, []string{key, claim}, after, cur.Version, next.KeepUntil().UnixMilli(), accountID).Text()
		}
		switch {
		case err != nil:
			return fmt.Errorf("claiming an address for account %s: %w", accountID, err)
		case res == "taken":
			return ErrEmailTaken
		case res == "ok":
			return refused
		}
	}
	return ErrConflict
}

func toCodeRecord(c account.EmailCode, version int64) codeRecord {
	return codeRecord{AccountID: c.AccountID, Salt: c.Salt, Hash: c.Hash, IssuedAt: c.IssuedAt.UTC(), ExpiresAt: c.ExpiresAt.UTC(),
		Attempts: c.Attempts, WindowStart: c.WindowStart.UTC(), Issued: c.Issued, Version: version}
}

func fromCodeRecord(r codeRecord) account.EmailCode {
	return account.EmailCode{AccountID: r.AccountID, Salt: r.Salt, Hash: r.Hash, IssuedAt: r.IssuedAt, ExpiresAt: r.ExpiresAt,
		Attempts: r.Attempts, WindowStart: r.WindowStart, Issued: r.Issued}
}

// CeremonyKind is what a ceremony is for.
type CeremonyKind string

// The ceremonies.
const (
	// CeremonySignUp registers a new person's first passkey.
	CeremonySignUp CeremonyKind = "signup"
	// CeremonySignIn asks any passkey of the deployment to sign in.
	CeremonySignIn CeremonyKind = "signin"
)

// Ceremony is a WebAuthn ceremony in flight: what it is for, the
// relying party's session data (go-webauthn's, kept as its JSON), and for
// a sign-up the account it will create.
type Ceremony struct {
	Kind        CeremonyKind    `json:"kind"`
	Tenant      string          `json:"tenant"`
	Environment string          `json:"environment"`
	AccountID   string          `json:"accountId,omitempty"`
	DisplayName string          `json:"displayName,omitempty"`
	Email       string          `json:"email,omitempty"`
	WebAuthn    json.RawMessage `json:"webauthn"`
}

// SaveCeremony keeps a ceremony under its cookie's hash for ttl.
func (s *Accounts) SaveCeremony(ctx context.Context, hash string, c Ceremony, ttl time.Duration) error {
	b, err := json.Marshal(c)
	if err != nil {
		return fmt.Errorf("encoding a ceremony: %w", err)
	}
	if err := s.rdb.Set(ctx, ceremonyKey(hash), b, ttl).Err(); err != nil {
		return fmt.Errorf("saving a ceremony: %w", err)
	}
	return nil
}

// TakeCeremony returns the ceremony under the hash and removes it in the
// same step: a ceremony's challenge is answered once, whatever the
// answer, and a replayed answer finds nothing (ErrCeremonyNotFound).
func (s *Accounts) TakeCeremony(ctx context.Context, hash string) (Ceremony, error) {
	raw, err := s.rdb.GetDel(ctx, ceremonyKey(hash)).Bytes()
	if errors.Is(err, redis.Nil) {
		return Ceremony{}, ErrCeremonyNotFound
	}
	if err != nil {
		return Ceremony{}, fmt.Errorf("taking a ceremony: %w", err)
	}
	var c Ceremony
	if err := json.Unmarshal(raw, &c); err != nil {
		return Ceremony{}, fmt.Errorf("decoding a ceremony: %w", err)
	}
	return c, nil
}

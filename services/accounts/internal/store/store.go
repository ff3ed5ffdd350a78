// Package store keeps the accounts service's state in Redis: one JSON
// record per account (its attestation and its OAuth clients inside it, or
// a person's address and passkeys), an index from a client id to its
// account, each operator's list of the accounts it registered, and per
// client the account tokens it holds, so that revoking the client revokes
// them; and for people (people.go) the address index, the codes sent to
// addresses, the WebAuthn ceremonies in flight and the account sessions;
// and organisations with their members and invitations (organizations.go).
//
// An account's keys share the hash tag {a:<accountId>}; an operator's list
// has the tag of the operator, an address's keys the tag of the address.
// Every change of an account is a compare and set on the record's version
// (one script), retried a few times.
package store

import (
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

const prefix = "pc:acct:"

// ErrNotFound is an account (or client) that does not exist.
var ErrNotFound = errors.New("account not found")

// ErrConflict is an account that changed under every retry.
var ErrConflict = errors.New("account changed concurrently")

func accountTag(id string) string { return "{a:" + id + "}" }

func accountKey(id string) string { return prefix + accountTag(id) + ":rec" }

// clientTokensKey is the sorted set of the account tokens a client holds,
// scored by their expiry in milliseconds.
func clientTokensKey(accountID, clientID string) string {
	return prefix + accountTag(accountID) + ":tokens:" + clientID
}

func clientIndexKey(clientID string) string { return prefix + "client:" + clientID }

// operatorKey is the sorted set of the accounts an operator registered in
// a tenant and environment. The ids are hashed so that no character of
// theirs can end the hash tag early.
func operatorKey(tenant, env, partnerID string) string {
	sum := sha256.Sum256([]byte(tenant + "\x00" + env + "\x00" + partnerID))
	return prefix + "{o:" + hex.EncodeToString(sum[:12]) + "}:accounts"
}

// record is an account as stored.
type record struct {
	ID                string          `json:"id"`
	Tenant            string          `json:"tenant"`
	Environment       string          `json:"environment"`
	Kind              string          `json:"kind"`
	DisplayName       string          `json:"displayName"`
	OperatorPartnerID string          `json:"operatorPartnerId"`
	Status            string          `json:"status"`
	Attestation       *attestation    `json:"attestation,omitempty"`
	Clients           []clientRecord  `json:"clients,omitempty"`
	Email             string          `json:"email,omitempty"`
	EmailVerifiedAt   time.Time       `json:"emailVerifiedAt,omitzero"`
	Passkeys          []passkeyRecord `json:"passkeys,omitempty"`
	CreatedAt         time.Time       `json:"createdAt"`
	Version           int64           `json:"version"`
}

// passkeyRecord is a person's credential as stored; the byte fields are
// base64 in the JSON.
type passkeyRecord struct {
	CredentialID    []byte    `json:"credentialId"`
	PublicKey       []byte    `json:"publicKey"`
	AttestationType string    `json:"attestationType"`
	AAGUID          []byte    `json:"aaguid,omitempty"`
	SignCount       uint32    `json:"signCount"`
	Transports      []string  `json:"transports,omitempty"`
	BackupEligible  bool      `json:"backupEligible"`
	BackupState     bool      `json:"backupState"`
	CreatedAt       time.Time `json:"createdAt"`
	LastUsedAt      time.Time `json:"lastUsedAt,omitzero"`
}

type attestation struct {
	Model                 string    `json:"model"`
	Provider              string    `json:"provider"`
	Contact               string    `json:"contact"`
	AcceptsResponsibility bool      `json:"acceptsResponsibility"`
	AttestedBy            string    `json:"attestedBy"`
	AttestedAt            time.Time `json:"attestedAt"`
}

type clientRecord struct {
	ID         string    `json:"id"`
	SecretHash string    `json:"secretHash"`
	Scopes     []string  `json:"scopes"`
	CreatedAt  time.Time `json:"createdAt"`
	RevokedAt  time.Time `json:"revokedAt,omitzero"`
}

// Versioned is an account with the version it was loaded at.
type Versioned struct {
	account.Account
	Version int64
}

func toRecord(a Versioned) record {
	r := record{ID: a.ID, Tenant: a.Tenant, Environment: a.Environment, Kind: string(a.Kind), DisplayName: a.DisplayName,
		OperatorPartnerID: a.OperatorPartnerID, Status: string(a.Status), Email: a.Email, EmailVerifiedAt: a.EmailVerifiedAt.UTC(),
		CreatedAt: a.CreatedAt.UTC(), Version: a.Version}
	for _, p := range a.Passkeys {
		r.Passkeys = append(r.Passkeys, passkeyRecord{CredentialID: p.CredentialID, PublicKey: p.PublicKey, AttestationType: p.AttestationType,
			AAGUID: p.AAGUID, SignCount: p.SignCount, Transports: p.Transports, BackupEligible: p.BackupEligible, BackupState: p.BackupState,
			CreatedAt: p.CreatedAt.UTC(), LastUsedAt: p.LastUsedAt.UTC()})
	}
	if a.Status == account.StatusVerified {
		att := a.Attestation
		r.Attestation = &attestation{Model: att.Model, Provider: att.Provider, Contact: att.Contact,
			AcceptsResponsibility: att.AcceptsResponsibility, AttestedBy: att.AttestedBy, AttestedAt: att.AttestedAt.UTC()}
	}
	for _, c := range a.Clients {
		scopes := make([]string, len(c.Scopes))
		for i, s := range c.Scopes {
			scopes[i] = string(s)
		}
		r.Clients = append(r.Clients, clientRecord{ID: c.ID, SecretHash: c.SecretHash, Scopes: scopes,
			CreatedAt: c.CreatedAt.UTC(), RevokedAt: c.RevokedAt.UTC()})
	}
	return r
}

func fromRecord(r record) Versioned {
	a := account.Account{ID: r.ID, Tenant: r.Tenant, Environment: r.Environment, Kind: account.Kind(r.Kind),
		DisplayName: r.DisplayName, OperatorPartnerID: r.OperatorPartnerID, Status: account.Status(r.Status), CreatedAt: r.CreatedAt,
		Email: r.Email, EmailVerifiedAt: r.EmailVerifiedAt}
	for _, p := range r.Passkeys {
		a.Passkeys = append(a.Passkeys, account.Passkey{CredentialID: p.CredentialID, PublicKey: p.PublicKey, AttestationType: p.AttestationType,
			AAGUID: p.AAGUID, SignCount: p.SignCount, Transports: p.Transports, BackupEligible: p.BackupEligible, BackupState: p.BackupState,
			CreatedAt: p.CreatedAt, LastUsedAt: p.LastUsedAt})
	}
	if att := r.Attestation; att != nil {
		a.Attestation = account.Attestation{Model: att.Model, Provider: att.Provider, Contact: att.Contact,
			AcceptsResponsibility: att.AcceptsResponsibility, AttestedBy: att.AttestedBy, AttestedAt: att.AttestedAt}
	}
	for _, c := range r.Clients {
		scopes := make([]account.Scope, len(c.Scopes))
		for i, s := range c.Scopes {
			scopes[i] = account.Scope(s)
		}
		a.Clients = append(a.Clients, account.Client{ID: c.ID, AccountID: r.ID, SecretHash: c.SecretHash, Scopes: scopes,
			CreatedAt: c.CreatedAt, RevokedAt: c.RevokedAt})
	}
	return Versioned{Account: a, Version: r.Version}
}

// updateScript KEYS: record. ARGV: json, expected version.
var updateScript = redis.NewScript(`
local cur = redis.call('GET', KEYS[1])
if not cur then return 'not_found' end
if tostring(cjson.decode(cur)['version']) ~= ARGV[2] then return 'conflict' end
redis.call('SET', KEYS[1], ARGV[1])
return 'ok'
`)

// Accounts is the account store.
type Accounts struct {
	rdb redis.UniversalClient
}

// New returns the account store on rdb.
func New(rdb redis.UniversalClient) *Accounts { return &Accounts{rdb: rdb} }

// Create stores a new account and lists it under its operator. The two
// keys are in different slots: the record is written first, so a crash in
// between leaves an account its operator does not see listed (it still
// reads it by id), never a listed account that does not exist.
func (s *Accounts) Create(ctx context.Context, a account.Account) error {
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
	if err := s.rdb.ZAdd(ctx, operatorKey(a.Tenant, a.Environment, a.OperatorPartnerID),
		redis.Z{Score: float64(a.CreatedAt.UnixMilli()), Member: a.ID}).Err(); err != nil {
		return fmt.Errorf("listing account %s under its operator: %w", a.ID, err)
	}
	return nil
}

// Get loads one account by id; the caller checks whose it is.
func (s *Accounts) Get(ctx context.Context, id string) (Versioned, error) {
	raw, err := s.rdb.Get(ctx, accountKey(id)).Bytes()
	if errors.Is(err, redis.Nil) {
		return Versioned{}, ErrNotFound
	}
	if err != nil {
		return Versioned{}, fmt.Errorf("loading account %s: %w", id, err)
	}
	var r record
	if err := json.Unmarshal(raw, &r); err != nil {
		return Versioned{}, fmt.Errorf("decoding account %s: %w", id, err)
	}
	return fromRecord(r), nil
}

// ListByOperator loads the accounts an operator registered in a tenant and
// environment, oldest first.
func (s *Accounts) ListByOperator(ctx context.Context, tenant, env, partnerID string) ([]account.Account, error) {
	ids, err := s.rdb.ZRange(ctx, operatorKey(tenant, env, partnerID), 0, -1).Result()
	if err != nil {
		return nil, fmt.Errorf("listing accounts: %w", err)
	}
	out := make([]account.Account, 0, len(ids))
	for _, id := range ids {
		a, err := s.Get(ctx, id)
		if err != nil {
			return nil, err
		}
		out = append(out, a.Account)
	}
	return out, nil
}

// Modify loads the account, applies change and stores the result if no
// other writer changed the account in between, retrying a few times. A
// refusal from change is returned as it is, and nothing is stored.
func (s *Accounts) Modify(ctx context.Context, id string, change func(account.Account) (account.Account, error)) (account.Account, error) {
	for range 5 {
		cur, err := s.Get(ctx, id)
		if err != nil {
			return account.Account{}, err
		}
		next, err := change(cur.Account)
		if err != nil {
			return cur.Account, err
		}
		b, err := json.Marshal(toRecord(Versioned{Account: next, Version: cur.Version + 1}))
		if err != nil {
			return cur.Account, fmt.Errorf("encoding account %s: %w", id, err)
		}
		res, err := updateScript.Run(ctx, s.rdb, []string{accountKey(id)}, b, cur.Version).Text()
		if err != nil {
			return cur.Account, fmt.Errorf("updating account %s: %w", id, err)
		}
		switch res {
		case "ok":
			return next, nil
		case "not_found":
			return account.Account{}, ErrNotFound
		}
	}
	return account.Account{}, ErrConflict
}

// IndexClient records which account clientID belongs to, so that the
// token endpoint, which is given only the client id, finds it. It is
// written after the account holds the client, so an indexed client always
// exists.
func (s *Accounts) IndexClient(ctx context.Context, clientID, accountID string) error {
	if err := s.rdb.Set(ctx, clientIndexKey(clientID), accountID, 0).Err(); err != nil {
		return fmt.Errorf("indexing client %s: %w", clientID, err)
	}
	return nil
}

// ClientAccount loads the account a client belongs to, with the client.
func (s *Accounts) ClientAccount(ctx context.Context, clientID string) (account.Account, account.Client, error) {
	accountID, err := s.rdb.Get(ctx, clientIndexKey(clientID)).Result()
	if errors.Is(err, redis.Nil) {
		return account.Account{}, account.Client{}, ErrNotFound
	}
	if err != nil {
		return account.Account{}, account.Client{}, fmt.Errorf("looking up client %s: %w", clientID, err)
	}
	a, err := s.Get(ctx, accountID)
	if err != nil {
		return account.Account{}, account.Client{}, err
	}
	c, ok := a.Client(clientID)
	if !ok {
		return account.Account{}, account.Client{}, ErrNotFound
	}
	return a.Account, c, nil
}

// HoldToken records that a client holds the account token publicID until
// expiresAt, and drops the tokens that have expired.
func (s *Accounts) HoldToken(ctx context.Context, accountID, clientID, publicID string, expiresAt, now time.Time) error {
	key := clientTokensKey(accountID, clientID)
	_, err := s.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.ZRemRangeByScore(ctx, key, "-inf", fmt.Sprint(now.UnixMilli()))
		p.ZAdd(ctx, key, redis.Z{Score: float64(expiresAt.UnixMilli()), Member: publicID})
		p.PExpireAt(ctx, key, expiresAt)
		return nil
	})
	if err != nil {
		return fmt.Errorf("recording token of client %s: %w", clientID, err)
	}
	return nil
}

// HeldTokens lists the public ids of the tokens a client holds that have
// not expired at now.
func (s *Accounts) HeldTokens(ctx context.Context, accountID, clientID string, now time.Time) ([]string, error) {
	ids, err := s.rdb.ZRangeByScore(ctx, clientTokensKey(accountID, clientID),
		&redis.ZRangeBy{Min: fmt.Sprint(now.UnixMilli()), Max: "+inf"}).Result()
	if err != nil {
		return nil, fmt.Errorf("listing tokens of client %s: %w", clientID, err)
	}
	return ids, nil
}

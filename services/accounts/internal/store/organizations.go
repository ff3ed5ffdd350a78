// Organisations' keys: an organisation is an account (acct_…), so its
// keys carry its account's hash tag, and one script writes its record
// and its members' index together.
//
//	pc:acct:{a:<orgId>}:org             the organisation: name, members, invitations (JSON, compare and set on its version)
//	pc:acct:{a:<orgId>}:members         its members' index: account id → role (a hash, rewritten by the same script)
//	pc:acct:{a:<personId>}:organizations the organisations a person is listed in (a set; may list more, never fewer)
//	pc:acct:{a:<orgId>}:acting:<personId> the sessions a member acts for the organisation with (public ids of libs/auth credentials; a set, expiring with the last of them)
//
// The person's list is in the person's slot, not the organisation's, so
// it cannot be written in the organisation's script on a cluster. It is
// written before a person joins (AddToPersonList) and trimmed after one
// leaves (RemoveFromPersonList, which lists the organisation again if the
// person joined it again meanwhile), and every read of it keeps only the
// organisations whose members' index names the person: a crash in
// between lists an organisation the person is not in, which no read
// shows, and never hides one the person is in. An invitation's token is
// kept only as its SHA-256, inside the record.

package store

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/pcourt/pcourt/services/accounts/internal/organization"
)

// ErrOrganizationNotFound is an organisation that does not exist.
var ErrOrganizationNotFound = errors.New("organisation not found")

func organizationKey(id string) string { return prefix + accountTag(id) + ":org" }

func membersKey(id string) string { return prefix + accountTag(id) + ":members" }

func actingKey(orgID, personID string) string {
	return prefix + accountTag(orgID) + ":acting:" + personID
}

// AddActingSession records that person personID acts for organisation
// orgID with the session credential publicID, until expiresAt: the
// sessions EndActing revokes when the person stops being a member.
func (s *Accounts) AddActingSession(ctx context.Context, orgID, personID, publicID string, expiresAt time.Time) error {
	key := actingKey(orgID, personID)
	_, err := s.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.SAdd(ctx, key, publicID)
		p.ExpireGT(ctx, key, time.Until(expiresAt))
		p.ExpireNX(ctx, key, time.Until(expiresAt))
		return nil
	})
	if err != nil {
		return fmt.Errorf("recording an acting session of %s for %s: %w", personID, orgID, err)
	}
	return nil
}

// TakeActingSessions returns, and forgets, the sessions person personID
// acts for organisation orgID with.
func (s *Accounts) TakeActingSessions(ctx context.Context, orgID, personID string) ([]string, error) {
	key := actingKey(orgID, personID)
	var members *redis.StringSliceCmd
	_, err := s.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		members = p.SMembers(ctx, key)
		p.Del(ctx, key)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("taking the acting sessions of %s for %s: %w", personID, orgID, err)
	}
	return members.Val(), nil
}

func personOrganizationsKey(personID string) string {
	return prefix + accountTag(personID) + ":organizations"
}

// organizationRecord is an organisation as stored.
type organizationRecord struct {
	ID          string             `json:"id"`
	Tenant      string             `json:"tenant"`
	Environment string             `json:"environment"`
	DisplayName string             `json:"displayName"`
	CreatedAt   time.Time          `json:"createdAt"`
	Members     []memberRecord     `json:"members"`
	Invitations []invitationRecord `json:"invitations"`
	Version     int64              `json:"version"`
}

type memberRecord struct {
	AccountID   string    `json:"accountId"`
	DisplayName string    `json:"displayName"`
	Email       string    `json:"email"`
	Role        string    `json:"role"`
	JoinedAt    time.Time `json:"joinedAt"`
}

type invitationRecord struct {
	ID        string    `json:"id"`
	Email     string    `json:"email"`
	TokenHash string    `json:"tokenHash"`
	InvitedBy string    `json:"invitedBy"`
	CreatedAt time.Time `json:"createdAt"`
	ExpiresAt time.Time `json:"expiresAt"`
}

func toOrganizationRecord(o organization.Organization, version int64) organizationRecord {
	r := organizationRecord{ID: o.ID(), Tenant: o.Tenant(), Environment: o.Environment(), DisplayName: o.DisplayName(),
		CreatedAt: o.CreatedAt().UTC(), Members: []memberRecord{}, Invitations: []invitationRecord{}, Version: version}
	for _, m := range o.Members() {
		r.Members = append(r.Members, memberRecord{AccountID: m.AccountID, DisplayName: m.DisplayName, Email: m.Email,
			Role: string(m.Role), JoinedAt: m.JoinedAt.UTC()})
	}
	for _, inv := range o.Invitations() {
		r.Invitations = append(r.Invitations, invitationRecord{ID: inv.ID, Email: inv.Email, TokenHash: inv.TokenHash,
			InvitedBy: inv.InvitedBy, CreatedAt: inv.CreatedAt.UTC(), ExpiresAt: inv.ExpiresAt.UTC()})
	}
	return r
}

func fromOrganizationRecord(r organizationRecord) organization.Organization {
	members := make([]organization.Member, len(r.Members))
	for i, m := range r.Members {
		members[i] = organization.Member{AccountID: m.AccountID, DisplayName: m.DisplayName, Email: m.Email,
			Role: organization.Role(m.Role), JoinedAt: m.JoinedAt}
	}
	invitations := make([]organization.Invitation, len(r.Invitations))
	for i, inv := range r.Invitations {
		invitations[i] = organization.Invitation{ID: inv.ID, Email: inv.Email, TokenHash: inv.TokenHash,
			InvitedBy: inv.InvitedBy, CreatedAt: inv.CreatedAt, ExpiresAt: inv.ExpiresAt}
	}
	return organization.Restore(r.ID, r.Tenant, r.Environment, r.DisplayName, r.CreatedAt, members, invitations)
}

// organizationScript KEYS: the record, the members' index. ARGV: the
// record's json, its expected version ("0": none stored, a creation),
// then the members as account id, role pairs. The record and the index
// are written together or not at all.
var organizationScript = redis.NewScript(`
local cur = redis.call('GET', KEYS[1])
local v = '0'
if cur then v = tostring(cjson.decode(cur)['version']) end
if v ~= ARGV[2] then return 'conflict' end
redis.call('SET', KEYS[1], ARGV[1])
redis.call('DEL', KEYS[2])
if #ARGV > 2 then redis.call('HSET', KEYS[2], unpack(ARGV, 3)) end
return 'ok'
`)

// save writes o at version, if the stored one is expected ("conflict"
// otherwise).
func (s *Accounts) saveOrganization(ctx context.Context, o organization.Organization, expected int64) (string, error) {
	b, err := json.Marshal(toOrganizationRecord(o, expected+1))
	if err != nil {
		return "", fmt.Errorf("encoding organisation %s: %w", o.ID(), err)
	}
	args := []any{b, expected}
	for _, m := range o.Members() {
		args = append(args, m.AccountID, string(m.Role))
	}
	res, err := organizationScript.Run(ctx, s.rdb, []string{organizationKey(o.ID()), membersKey(o.ID())}, args...).Text()
	if err != nil {
		return "", fmt.Errorf("storing organisation %s: %w", o.ID(), err)
	}
	return res, nil
}

// CreateOrganization stores a new organisation with its members' index,
// and lists it for its creator first (see the file's comment). An id
// already stored is an error, and nothing is overwritten.
func (s *Accounts) CreateOrganization(ctx context.Context, o organization.Organization) error {
	for _, m := range o.Members() {
		if err := s.AddToPersonList(ctx, m.AccountID, o.ID()); err != nil {
			return err
		}
	}
	res, err := s.saveOrganization(ctx, o, 0)
	if err != nil {
		return err
	}
	if res != "ok" {
		return fmt.Errorf("creating organisation %s: id taken", o.ID())
	}
	return nil
}

// Organization loads an organisation; the caller checks who may see it
// (organization.View).
func (s *Accounts) Organization(ctx context.Context, id string) (organization.Organization, error) {
	o, _, err := s.loadOrganization(ctx, id)
	return o, err
}

func (s *Accounts) loadOrganization(ctx context.Context, id string) (organization.Organization, int64, error) {
	raw, err := s.rdb.Get(ctx, organizationKey(id)).Bytes()
	if errors.Is(err, redis.Nil) {
		return organization.Organization{}, 0, ErrOrganizationNotFound
	}
	if err != nil {
		return organization.Organization{}, 0, fmt.Errorf("loading organisation %s: %w", id, err)
	}
	var r organizationRecord
	if err := json.Unmarshal(raw, &r); err != nil {
		return organization.Organization{}, 0, fmt.Errorf("decoding organisation %s: %w", id, err)
	}
	return fromOrganizationRecord(r), r.Version, nil
}

// ModifyOrganization loads the organisation, applies change and stores
// the result with its members' index if no other writer changed the
// organisation in between, retrying a few times (ErrConflict after). A
// refusal from change is returned as it is, and nothing is stored. Of
// two acts decided on the same state only one is stored; the other is
// decided again on the state the first left, so two owners removing each
// other leave one owner, and one invitation accepted twice at once adds
// one member.
func (s *Accounts) ModifyOrganization(ctx context.Context, id string, change func(organization.Organization) (organization.Organization, error)) (organization.Organization, error) {
	for range 5 {
		cur, version, err := s.loadOrganization(ctx, id)
		if err != nil {
			return organization.Organization{}, err
		}
		next, err := change(cur)
		if err != nil {
			return cur, err
		}
		res, err := s.saveOrganization(ctx, next, version)
		if err != nil {
			return cur, err
		}
		if res == "ok" {
			return next, nil
		}
	}
	return organization.Organization{}, ErrConflict
}

// Membership returns the role of person personID in organisation orgID,
// and whether the person is a member at all, from the organisation's
// members' index: what the rest of the platform asks before a person
// acts for an organisation. An organisation that does not exist has no
// members.
func (s *Accounts) Membership(ctx context.Context, orgID, personID string) (organization.Role, bool, error) {
	if orgID == "" || personID == "" {
		return "", false, nil
	}
	role, err := s.rdb.HGet(ctx, membersKey(orgID), personID).Result()
	if errors.Is(err, redis.Nil) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("reading the membership of %s in %s: %w", personID, orgID, err)
	}
	return organization.Role(role), true, nil
}

// AddToPersonList lists organisation orgID for person personID, before
// the person joins it (see the file's comment).
func (s *Accounts) AddToPersonList(ctx context.Context, personID, orgID string) error {
	if err := s.rdb.SAdd(ctx, personOrganizationsKey(personID), orgID).Err(); err != nil {
		return fmt.Errorf("listing organisation %s for %s: %w", orgID, personID, err)
	}
	return nil
}

// RemoveFromPersonList drops organisation orgID from person personID's
// list, after the person left it. A person who joined it again in the
// meantime (AddToPersonList came before this) is listed again: the
// members' index, read after the removal, decides.
func (s *Accounts) RemoveFromPersonList(ctx context.Context, personID, orgID string) error {
	if err := s.rdb.SRem(ctx, personOrganizationsKey(personID), orgID).Err(); err != nil {
		return fmt.Errorf("unlisting organisation %s for %s: %w", orgID, personID, err)
	}
	if _, member, err := s.Membership(ctx, orgID, personID); err != nil || !member {
		return err
	}
	return s.AddToPersonList(ctx, personID, orgID)
}

// OrganizationsOf loads the organisations person personID is a member
// of, by name: those of its list whose members' index names the person.
// An organisation listed that does not name the person (a join refused or
// in flight, a leave whose unlisting did not happen) is left out, and
// left in the list: a join in flight may yet name the person.
func (s *Accounts) OrganizationsOf(ctx context.Context, personID string) ([]organization.Organization, error) {
	ids, err := s.rdb.SMembers(ctx, personOrganizationsKey(personID)).Result()
	if err != nil {
		return nil, fmt.Errorf("listing the organisations of %s: %w", personID, err)
	}
	var out []organization.Organization
	for _, id := range ids {
		_, member, err := s.Membership(ctx, id, personID)
		if err != nil {
			return nil, err
		}
		if !member {
			continue
		}
		o, err := s.Organization(ctx, id)
		if err != nil {
			return nil, err
		}
		out = append(out, o)
	}
	slices.SortFunc(out, func(a, b organization.Organization) int {
		return cmp.Or(strings.Compare(a.DisplayName(), b.DisplayName()), strings.Compare(a.ID(), b.ID()))
	})
	return out, nil
}

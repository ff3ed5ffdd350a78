package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/pcourt/pcourt/services/compat-edge/internal/inventory"
)

// contactsKey maps a partner id to the address its notices go to.
const contactsKey = "pc:edge:contacts"

// SetContact sets (or, with "", removes) a partner's notice address.
func (s *Store) SetContact(ctx context.Context, partner, address string) error {
	var err error
	if address == "" {
		err = s.rdb.HDel(ctx, contactsKey, partner).Err()
	} else {
		err = s.rdb.HSet(ctx, contactsKey, partner, address).Err()
	}
	if err != nil {
		return fmt.Errorf("setting the contact of %s: %w", partner, err)
	}
	return nil
}

// Contact returns a partner's notice address, "" when none is set.
func (s *Store) Contact(ctx context.Context, partner string) (string, error) {
	v, err := s.rdb.HGet(ctx, contactsKey, partner).Result()
	if errors.Is(err, redis.Nil) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("reading the contact of %s: %w", partner, err)
	}
	return v, nil
}

// Contacts returns every partner's notice address.
func (s *Store) Contacts(ctx context.Context) (map[string]string, error) {
	m, err := s.rdb.HGetAll(ctx, contactsKey).Result()
	if err != nil {
		return nil, fmt.Errorf("reading contacts: %w", err)
	}
	return m, nil
}

// NoticeState is where one notice stands.
type NoticeState string

// The states. Sending is claimed and not yet confirmed: a notice left
// there by a crash is not sent again (it may have gone out), and is
// reported as such.
const (
	NoticeSending       NoticeState = "sending"
	NoticeSent          NoticeState = "sent"
	NoticeFailed        NoticeState = "failed"
	NoticeUndeliverable NoticeState = "undeliverable"
)

// MaxNoticeAttempts bounds the sends of one notice the server refused.
const MaxNoticeAttempts = 5

// Notice is the record of one credential's notice of one milestone.
type Notice struct {
	Family inventory.Family `json:"family"`
	// Since is the start day (YYYY-MM-DD) of the window the notice is
	// about when it is a route's own (the route joined the family after
	// general availability); "" for the family's window.
	Since      string      `json:"since,omitempty"`
	Credential string      `json:"credential"`
	Milestone  string      `json:"milestone"`
	State      NoticeState `json:"state"`
	Partner    string      `json:"partner,omitempty"`
	To         string      `json:"to,omitempty"`
	Attempts   int         `json:"attempts"`
	At         time.Time   `json:"at"`
	// Detail says why a notice failed or could not be delivered.
	Detail string `json:"detail,omitempty"`
}

// noticesKey holds one family's notices, field <credential>|<milestone>,
// followed by |<since> for a route's own window.
func noticesKey(f inventory.Family) string { return "pc:edge:notices:{" + string(f) + "}" }

func noticeField(n Notice) string {
	if n.Since != "" {
		return n.Credential + "|" + n.Milestone + "|" + n.Since
	}
	return n.Credential + "|" + n.Milestone
}

// claimScript takes a notice for sending: a new one, or one the server
// refused fewer than ARGV[3] times. Anything else (sent, undeliverable,
// possibly sent) is never taken again. Returns the record written, or
// false.
var claimScript = redis.NewScript(`
local cur = redis.call('HGET', KEYS[1], ARGV[1])
local rec = cjson.decode(ARGV[2])
if cur then
  local c = cjson.decode(cur)
  if c.state ~= 'failed' or c.attempts >= tonumber(ARGV[3]) then return false end
  rec.attempts = c.attempts
end
rec.attempts = rec.attempts + 1
local out = cjson.encode(rec)
redis.call('HSET', KEYS[1], ARGV[1], out)
return out
`)

// ClaimNotice takes a notice for sending, atomically: true when this
// caller may send it now. A notice is claimed at most once, except after
// the server refused it (up to MaxNoticeAttempts).
func (s *Store) ClaimNotice(ctx context.Context, n Notice) (Notice, bool, error) {
	n.State, n.Attempts = NoticeSending, 0
	raw, err := json.Marshal(n)
	if err != nil {
		return Notice{}, false, err
	}
	out, err := claimScript.Run(ctx, s.rdb, []string{noticesKey(n.Family)}, noticeField(n), string(raw), MaxNoticeAttempts).Text()
	if errors.Is(err, redis.Nil) {
		return Notice{}, false, nil
	}
	if err != nil {
		return Notice{}, false, fmt.Errorf("claiming the %s notice of %s: %w", n.Milestone, n.Credential, err)
	}
	var got Notice
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		return Notice{}, false, err
	}
	return got, true, nil
}

// FinishNotice records the outcome of a claimed notice.
func (s *Store) FinishNotice(ctx context.Context, n Notice) error {
	raw, err := json.Marshal(n)
	if err != nil {
		return err
	}
	if err := s.rdb.HSet(ctx, noticesKey(n.Family), noticeField(n), raw).Err(); err != nil {
		return fmt.Errorf("recording the %s notice of %s: %w", n.Milestone, n.Credential, err)
	}
	return nil
}

// Notices returns a family's notices, by credential then time.
func (s *Store) Notices(ctx context.Context, f inventory.Family) ([]Notice, error) {
	m, err := s.rdb.HGetAll(ctx, noticesKey(f)).Result()
	if err != nil {
		return nil, fmt.Errorf("reading %s notices: %w", f, err)
	}
	out := make([]Notice, 0, len(m))
	for field, v := range m {
		var n Notice
		if err := json.Unmarshal([]byte(v), &n); err != nil {
			return nil, fmt.Errorf("notice %s: %w", field, err)
		}
		out = append(out, n)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Credential != out[j].Credential {
			return strings.Compare(out[i].Credential, out[j].Credential) < 0
		}
		return out[i].At.Before(out[j].At)
	})
	return out, nil
}

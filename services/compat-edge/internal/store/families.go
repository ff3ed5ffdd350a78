// Package store keeps the edge's own state in Redis, under its own prefix
// pc:edge: the durable compatibility settings of each family (the admin
// API's, and the CompatibilityFamily layer the compat-controller writes),
// the legacy-use ledger, the partners' contacts, the milestone notices and
// the admin audit. Every write that must check before it changes is one
// Lua script over one key, so it runs unchanged on Redis Cluster.
package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/pcourt/pcourt/services/compat-edge/internal/inventory"
	"github.com/pcourt/pcourt/services/compat-edge/internal/policy"
)

// Store is the edge's Redis state.
type Store struct {
	rdb redis.UniversalClient
}

// New returns a store over rdb.
func New(rdb redis.UniversalClient) *Store { return &Store{rdb: rdb} }

// familyKey holds one family's settings as a hash: ga, stage, brownouts
// (JSON) and one ext:<integration> field per approved extension.
func familyKey(f inventory.Family) string { return "pc:edge:compat:family:{" + string(f) + "}" }

const extPrefix = "ext:"

// ErrShortened is the class of ShortenedError.
var ErrShortened = errors.New("an approved extension cannot be shortened or withdrawn")

// ShortenedError refuses a change that would bring an integration's
// approved deadline forward or withdraw it: partners planned on it.
type ShortenedError struct {
	Family      inventory.Family
	Integration string
	Current     policy.Date
	Requested   policy.Date // zero: the change withdraws it
}

func (e *ShortenedError) Error() string {
	req := e.Requested.String()
	if req == "" {
		req = "none"
	}
	return fmt.Sprintf("%s: extension of %s is %s; %s would shorten it", e.Family, e.Integration, e.Current, req)
}

// Is makes errors.Is(err, ErrShortened) hold.
func (e *ShortenedError) Is(target error) bool { return target == ErrShortened }

// Load returns a family's durable settings; the zero Settings when none
// were saved.
func (s *Store) Load(ctx context.Context, f inventory.Family) (policy.Settings, error) {
	rec, err := s.rdb.HGetAll(ctx, familyKey(f)).Result()
	if err != nil {
		return policy.Settings{}, fmt.Errorf("reading %s settings: %w", f, err)
	}
	st, err := fromRecord(rec)
	if err != nil {
		return policy.Settings{}, fmt.Errorf("%s settings: %w", f, err)
	}
	return st, nil
}

// LoadAll returns every family's settings as the admin API saved them.
func (s *Store) LoadAll(ctx context.Context) (map[inventory.Family]policy.Settings, error) {
	out := map[inventory.Family]policy.Settings{}
	for _, f := range inventory.Families {
		st, err := s.Load(ctx, f)
		if err != nil {
			return nil, err
		}
		out[f] = st
	}
	return out, nil
}

// saveScript replaces a family's settings unless that would shorten or
// withdraw an approved extension, which it reports as
// {"shortened", integration, current, requested} and changes nothing.
// KEYS[1] the family; ARGV: ga, stage, brownouts, then integration/date
// pairs. Dates are YYYY-MM-DD, so text order is date order.
var saveScript = redis.NewScript(`
local want = {}
for i = 4, #ARGV, 2 do want[ARGV[i]] = ARGV[i+1] end
local cur = redis.call('HGETALL', KEYS[1])
for i = 1, #cur, 2 do
  local f, v = cur[i], cur[i+1]
  if string.sub(f, 1, 4) == 'ext:' then
    local id = string.sub(f, 5)
    local w = want[id]
    if w == nil or w < v then return {'shortened', id, v, w or ''} end
  end
end
redis.call('DEL', KEYS[1])
local fields = {'stage', ARGV[2], 'brownouts', ARGV[3]}
if ARGV[1] ~= '' then table.insert(fields, 'ga'); table.insert(fields, ARGV[1]) end
for id, d in pairs(want) do table.insert(fields, 'ext:' .. id); table.insert(fields, d) end
redis.call('HSET', KEYS[1], unpack(fields))
return {'ok'}
`)

// Save replaces a family's settings. It refuses settings that do not
// validate, and, with a *ShortenedError, any that would bring an approved
// extension forward or withdraw it.
func (s *Store) Save(ctx context.Context, f inventory.Family, st policy.Settings) error {
	if !f.Valid() {
		return fmt.Errorf("unknown family %q", f)
	}
	if err := st.Validate(); err != nil {
		return fmt.Errorf("%s settings: %w", f, err)
	}
	stage := st.Stage
	if stage == "" {
		stage = policy.Warn
	}
	spans := make([]span, 0, len(st.Brownouts))
	for _, b := range st.Brownouts {
		spans = append(spans, span{Start: b.Start.UTC(), End: b.End.UTC()})
	}
	brownouts, err := json.Marshal(spans)
	if err != nil {
		return err
	}
	args := []any{st.GA.String(), string(stage), string(brownouts)}
	for _, id := range (&policy.Window{Extensions: st.Extensions}).SortedExtensions() {
		args = append(args, id, st.Extensions[id].String())
	}
	res, err := saveScript.Run(ctx, s.rdb, []string{familyKey(f)}, args...).StringSlice()
	if err != nil {
		return fmt.Errorf("saving %s settings: %w", f, err)
	}
	if len(res) == 4 && res[0] == "shortened" {
		cur, _ := policy.ParseDate(res[2])
		req, _ := policy.ParseDate(res[3])
		return &ShortenedError{Family: f, Integration: res[1], Current: cur, Requested: req}
	}
	return nil
}

// ApproveExtension sets an integration's deadline, leaving the rest of the
// family's settings as they are; a date earlier than one already approved
// is refused with a *ShortenedError.
func (s *Store) ApproveExtension(ctx context.Context, f inventory.Family, integration string, until policy.Date) error {
	// Load and Save race only with another administrator's change; the
	// script still refuses any shortening, whoever wins.
	st, err := s.Load(ctx, f)
	if err != nil {
		return err
	}
	ext := map[string]policy.Date{}
	for id, d := range st.Extensions {
		ext[id] = d
	}
	ext[integration] = until
	st.Extensions = ext
	return s.Save(ctx, f, st)
}

type span struct {
	Start time.Time `json:"start"`
	End   time.Time `json:"end"`
}

func fromRecord(rec map[string]string) (policy.Settings, error) {
	var st policy.Settings
	var err error
	if v := rec["ga"]; v != "" {
		if st.GA, err = policy.ParseDate(v); err != nil {
			return policy.Settings{}, err
		}
	}
	st.Stage = policy.Stage(rec["stage"])
	if v := rec["brownouts"]; v != "" {
		var spans []span
		if err := json.Unmarshal([]byte(v), &spans); err != nil {
			return policy.Settings{}, fmt.Errorf("brownouts: %w", err)
		}
		for _, b := range spans {
			st.Brownouts = append(st.Brownouts, policy.Span{Start: b.Start, End: b.End})
		}
	}
	for field, v := range rec {
		id, ok := strings.CutPrefix(field, extPrefix)
		if !ok {
			continue
		}
		d, err := policy.ParseDate(v)
		if err != nil {
			return policy.Settings{}, fmt.Errorf("extension of %s: %w", id, err)
		}
		if st.Extensions == nil {
			st.Extensions = map[string]policy.Date{}
		}
		st.Extensions[id] = d
	}
	return st, st.Validate()
}

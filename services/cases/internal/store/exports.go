package store

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/pcourt/pcourt/services/cases/internal/procedure"
)

// Evidence-export notifications and their receipts.
//
// A partner lists its notifications across every case, so the index cannot
// live beside one case; but it must be written in the step that records
// the event (no notification without its event, no event unlisted). Each
// shard therefore keeps its own index of the notifications of its cases,
// written by the save script with the case's other keys:
//
//	export-index   sorted set, every score 0, ordered by member:
//	               <tenant>␟<environment>␟<partner>␟<inverted ms>␟<event id>
//	export-notes   hash: <tenant>␟<environment>␟<partner>␟<event id> → note JSON
//	export-receipts hash: the same field → receipt JSON, set once
//
// The inverted time (9999999999999 − readyAt ms, 13 digits) makes the
// lexical order newest first. A partner's page reads at most limit+1
// members from each shard after its cursor and merges them, so a page
// costs a bounded number of reads however many notifications exist.
// An event id names its case, and so its shard: a receipt is one step on
// that shard's keys, and only a partner the note was written for has one.

const (
	sepKey     = "\x1f" // within a member or field
	sepPart    = "\x1d" // between an entry's member, field and note
	sepEntry   = "\x1e" // between entries
	invertBase = 9999999999999
)

// Errors of the export notifications.
var (
	ErrExportNotFound = errors.New("export notification not found")
	ErrBadCursor      = errors.New("invalid export notification cursor")
)

// ExportNote is what an evidence_export_ready event says to each of its
// recipients: whose evidence is exported, of which case, since when.
type ExportNote struct {
	CaseID     string
	Side       procedure.Side
	ReadyAt    time.Time
	Recipients []procedure.Partner
}

type noteJSON struct {
	CaseID  string `json:"caseId"`
	Side    string `json:"side"`
	ReadyAt string `json:"readyAt"`
}

// entries encodes the note for the save script: per recipient, its index
// member and note field without the event id, which the script appends,
// and the note. A nil note has none.
func (n *ExportNote) entries() string {
	if n == nil || len(n.Recipients) == 0 {
		return ""
	}
	note, err := json.Marshal(noteJSON{CaseID: n.CaseID, Side: string(n.Side), ReadyAt: procedure.Timestamp(n.ReadyAt)})
	if err != nil {
		panic(fmt.Sprintf("store: encoding an export note: %v", err)) // strings only: cannot fail
	}
	inv := fmt.Sprintf("%013d", invertBase-n.ReadyAt.UnixMilli())
	var out []string
	for _, p := range n.Recipients {
		pk := partnerKey(p)
		out = append(out, pk+inv+sepKey+sepPart+pk+sepPart+string(note))
	}
	return strings.Join(out, sepEntry)
}

func partnerKey(p procedure.Partner) string {
	return p.Tenant + sepKey + p.Environment + sepKey + p.PartnerID + sepKey
}

// ExportNotification is a notification as its recipient reads it.
type ExportNotification struct {
	EventID string
	CaseID  string
	Side    procedure.Side
	ReadyAt time.Time
	Receipt *ExportReceipt // nil until the partner records one
}

// ExportReceipt is a partner's receipt of a notification.
type ExportReceipt struct {
	ReceivedAt time.Time `json:"receivedAt"`
}

// ExportNotifications returns up to limit of the partner's notifications,
// newest first, after cursor ("" for the first page), and the cursor of
// the next page ("" when this is the last).
func (s *Cases) ExportNotifications(ctx context.Context, p procedure.Partner, cursor string, limit int) ([]ExportNotification, string, error) {
	pk := partnerKey(p)
	min := "[" + pk
	if cursor != "" {
		tail, err := base64.RawURLEncoding.DecodeString(cursor)
		if err != nil || !validTail(string(tail)) {
			return nil, "", ErrBadCursor
		}
		min = "(" + pk + string(tail)
	}
	var tails []string
	for _, tag := range s.Tags() {
		members, err := s.rdb.ZRangeByLex(ctx, shardKeys(tag).exportIndex, &redis.ZRangeBy{Min: min, Max: "[" + pk + "\xff", Count: int64(limit + 1)}).Result()
		if err != nil {
			return nil, "", fmt.Errorf("listing export notifications: %w", err)
		}
		for _, m := range members {
			tails = append(tails, strings.TrimPrefix(m, pk))
		}
	}
	slices.Sort(tails)
	next := ""
	if len(tails) > limit {
		tails = tails[:limit]
		next = base64.RawURLEncoding.EncodeToString([]byte(tails[limit-1]))
	}
	out := make([]ExportNotification, 0, len(tails))
	for _, tail := range tails {
		_, eventID, _ := strings.Cut(tail, sepKey)
		n, err := s.exportNotification(ctx, p, eventID)
		if err != nil {
			return nil, "", err
		}
		out = append(out, n)
	}
	return out, next, nil
}

// validTail reports whether a cursor names an index position: 13 digits,
// the separator, an event id.
func validTail(t string) bool {
	inv, id, ok := strings.Cut(t, sepKey)
	if !ok || len(inv) != 13 || strings.ContainsAny(id, sepKey+sepPart+sepEntry) {
		return false
	}
	_, err := strconv.ParseUint(inv, 10, 64)
	return err == nil
}

// ExportNotification returns one of the partner's notifications, or
// ErrExportNotFound when the event id is not one sent to that partner
// (another partner's, another tenant's, or no notification at all).
func (s *Cases) ExportNotification(ctx context.Context, p procedure.Partner, eventID string) (ExportNotification, error) {
	return s.exportNotification(ctx, p, eventID)
}

func (s *Cases) exportNotification(ctx context.Context, p procedure.Partner, eventID string) (ExportNotification, error) {
	k, ok := s.eventKeys(eventID)
	if !ok {
		return ExportNotification{}, ErrExportNotFound
	}
	field := partnerKey(p) + eventID
	v, err := s.rdb.HGet(ctx, k.exportNotes, field).Result()
	if errors.Is(err, redis.Nil) {
		return ExportNotification{}, ErrExportNotFound
	}
	if err != nil {
		return ExportNotification{}, fmt.Errorf("reading export notification %s: %w", eventID, err)
	}
	n, err := decodeNote(eventID, v)
	if err != nil {
		return ExportNotification{}, err
	}
	r, err := s.rdb.HGet(ctx, k.exportReceipts, field).Result()
	switch {
	case errors.Is(err, redis.Nil):
	case err != nil:
		return ExportNotification{}, fmt.Errorf("reading the receipt of %s: %w", eventID, err)
	default:
		var rec ExportReceipt
		if err := json.Unmarshal([]byte(r), &rec); err != nil {
			return ExportNotification{}, fmt.Errorf("decoding the receipt of %s: %w", eventID, err)
		}
		n.Receipt = &rec
	}
	return n, nil
}

func decodeNote(eventID, v string) (ExportNotification, error) {
	var nj noteJSON
	if err := json.Unmarshal([]byte(v), &nj); err != nil {
		return ExportNotification{}, fmt.Errorf("decoding export notification %s: %w", eventID, err)
	}
	at, err := time.Parse(time.RFC3339Nano, nj.ReadyAt)
	if err != nil {
		return ExportNotification{}, fmt.Errorf("decoding export notification %s: %w", eventID, err)
	}
	return ExportNotification{EventID: eventID, CaseID: nj.CaseID, Side: procedure.Side(nj.Side), ReadyAt: at}, nil
}

// receiptScript: KEYS notes, receipts; ARGV field, receipt JSON. Returns
// {0} when no such notification was sent to the partner, {1, receipt}
// when recorded now, {2, receipt} with the receipt recorded before.
var receiptScript = redis.NewScript(`
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 0 then return {0} end
local r = redis.call('HGET', KEYS[2], ARGV[1])
if r then return {2, r} end
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
return {1, ARGV[2]}
`)

// RecordExportReceipt records the partner's receipt of a notification at
// now, once per event id: a second call returns the first receipt and
// first false. ErrExportNotFound: the notification was not sent to p.
func (s *Cases) RecordExportReceipt(ctx context.Context, p procedure.Partner, eventID string, now time.Time) (ExportReceipt, bool, error) {
	k, ok := s.eventKeys(eventID)
	if !ok {
		return ExportReceipt{}, false, ErrExportNotFound
	}
	body, err := json.Marshal(ExportReceipt{ReceivedAt: now.UTC().Truncate(time.Millisecond)})
	if err != nil {
		return ExportReceipt{}, false, fmt.Errorf("encoding the receipt of %s: %w", eventID, err)
	}
	v, err := receiptScript.Run(ctx, s.rdb, []string{k.exportNotes, k.exportReceipts}, partnerKey(p)+eventID, body).Slice()
	if err != nil {
		return ExportReceipt{}, false, fmt.Errorf("recording the receipt of %s: %w", eventID, err)
	}
	if n, _ := v[0].(int64); n == 0 {
		return ExportReceipt{}, false, ErrExportNotFound
	}
	var rec ExportReceipt
	if err := json.Unmarshal([]byte(str(v[1])), &rec); err != nil {
		return ExportReceipt{}, false, fmt.Errorf("decoding the receipt of %s: %w", eventID, err)
	}
	first, _ := v[0].(int64)
	return rec, first == 1, nil
}

// eventKeys returns the keys of the shard of the case an event id
// ("case-event:<caseId>:<sequence>") names.
func (s *Cases) eventKeys(eventID string) (keys, bool) {
	rest, ok := strings.CutPrefix(eventID, "case-event:")
	if !ok {
		return keys{}, false
	}
	i := strings.LastIndexByte(rest, ':')
	if i <= 0 {
		return keys{}, false
	}
	if _, err := strconv.ParseInt(rest[i+1:], 10, 64); err != nil {
		return keys{}, false
	}
	return s.keysFor(rest[:i]), true
}

// shardKeys returns the shard-wide keys of a tag.
func shardKeys(tag string) keys {
	base := "pc:cases:" + tag
	return keys{tag: tag, exportIndex: base + ":export-index", exportNotes: base + ":export-notes", exportReceipts: base + ":export-receipts", caseIndex: base + ":case-index"}
}

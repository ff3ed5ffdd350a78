// Package reshard moves a service's Redis data from one shard count to
// another (libs/outbox.Sharding). The key layout belongs to each store, so
// a store describes it as a Layout and this package does the moving.
//
// A move is the procedure of docs/redis.md ("Resharding"):
//
//  1. Refuse while any outbox stream of either count holds an entry: the
//     service's writers must be stopped and its relay drained first, or an
//     event would be left in a stream no relay of the new count reads.
//     Refuse too while a key under a tag is one the layout does not name:
//     it would be left behind.
//  2. Every entity whose tag changes has each of its keys copied to its new
//     tag (DUMP, then RESTORE with the key's remaining time to live and
//     REPLACE), each copy checked, and only then its old keys deleted, its
//     primary key last. Keys of two tags are in two cluster slots, so no
//     step can do both atomically; in this order a crash leaves the entity
//     whole at its old tag until its new copy is complete, and a rerun
//     finds what is left under the old tag and does the same steps again
//     (RESTORE REPLACE of an unchanged source writes the same value).
//  3. Every member of a shard-wide key (an index, a deadline set) is added
//     to the same key of the shard its entity now has, then removed from
//     the old one: a rerun moves only what is still misplaced.
//  4. Markers that say a shard-wide key is complete are deleted, so the
//     service checks its indexes again at its next start; the outbox
//     streams of shards the new count does not have are deleted (they are
//     empty: step 1).
//  5. Verify: as many entities as before, every entity key and every
//     shard-wide member under the tag the new count gives it.
//
// Nothing here is a transaction: the service must not run during a move.
package reshard

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/pcourt/pcourt/libs/outbox"
)

// Kind is the Redis type of a shard-wide key.
type Kind int

// The kinds of shard-wide keys a layout may have.
const (
	SortedSet Kind = iota
	Hash
	Set
)

// ShardKey is a key every shard has once, whose members each belong to one
// entity: pc:<service>:<tag>:<Name>.
type ShardKey struct {
	Name string
	Kind Kind
	// Owner returns the id of the entity a member (a sorted set's or a
	// set's member, a hash's field) belongs to; false for a member that
	// names none, which stays where it is and is reported.
	Owner func(member string) (string, bool)
}

// Layout is how a store lays out its keys under a shard tag
// "pc:<Service>:<tag>:<rest>".
type Layout struct {
	Service string
	// Entity returns, for the rest of a key after its tag, the id of the
	// entity it belongs to and whether it is the entity's primary key (the
	// one whose presence makes the entity exist: deleted last); false for
	// a key that is not an entity's.
	Entity    func(rest string) (id string, primary, ok bool)
	ShardKeys []ShardKey
	// Markers are shard-wide keys (names after the tag) deleted under
	// every tag, so the service rebuilds what they mark at its next start.
	Markers []string
}

// Options of a run.
type Options struct {
	// DryRun reports what would move and changes nothing.
	DryRun bool
	// Limit stops the run after moving that many entities (0: no limit),
	// before the shard-wide keys: a later run finishes. It spreads a large
	// move over several runs, and is how tests stop a run midway.
	Limit int
	// Log receives a line per entity moved (or, in a dry run, that would
	// move) and the summary; nil discards them.
	Log io.Writer
}

// Report is what a run did, or in a dry run would do.
type Report struct {
	Entities      int // entities found, under either count's tags
	EntitiesMoved int
	KeysMoved     int
	MembersMoved  int
	// Unowned counts shard-wide members whose entity the layout could not
	// name; they were left where they were.
	Unowned int
	// Complete is false when the run stopped at Options.Limit.
	Complete bool
}

// ErrOutboxNotEmpty is returned, before anything moves, while an outbox
// stream still holds entries.
var ErrOutboxNotEmpty = errors.New("an outbox stream is not empty: stop the service's writers and let its relay drain every stream first (docs/redis.md, Resharding)")

// ErrUnknownKeys is returned, before anything moves, when a key under a
// shard tag is neither an entity's nor one the layout names.
var ErrUnknownKeys = errors.New("keys the store's reshard layout does not know: add them to its Layout before resharding")

// Run moves the data of layout from the shard count from to the count to.
func Run(ctx context.Context, rdb redis.UniversalClient, layout Layout, from, to int, opts Options) (Report, error) {
	old := outbox.Sharding{Service: layout.Service, Count: from}
	next := outbox.Sharding{Service: layout.Service, Count: to}
	if err := old.Validate(); err != nil {
		return Report{}, fmt.Errorf("reshard from: %w", err)
	}
	if err := next.Validate(); err != nil {
		return Report{}, fmt.Errorf("reshard to: %w", err)
	}
	if layout.Entity == nil {
		return Report{}, errors.New("reshard: layout without Entity")
	}
	log := opts.Log
	if log == nil {
		log = io.Discard
	}
	m := &mover{rdb: rdb, layout: layout, next: next, log: log, dry: opts.DryRun}
	allTags := union(old.Tags(), next.Tags())

	if err := m.checkDrained(ctx, allTags); err != nil {
		return Report{}, err
	}
	byTag, err := m.entitiesByTag(ctx, allTags)
	if err != nil {
		return Report{}, err
	}
	if len(m.unknown) > 0 {
		// A key the layout does not name would be left under its old tag
		// and lost to the service: the store's Layout must say where it goes.
		slices.Sort(m.unknown)
		return Report{}, fmt.Errorf("%w: %s", ErrUnknownKeys, strings.Join(m.unknown, ", "))
	}
	before := entities(byTag)
	rep := Report{Entities: len(before)}

	// Entities: only the tags of the old count can hold one to move (an
	// entity under a tag only the new count has was put there by this
	// move, at its new place).
	for _, tag := range old.Tags() {
		ents := byTag[tag]
		for _, id := range slices.Sorted(maps.Keys(ents)) {
			if next.Tag(id) == tag {
				continue
			}
			if opts.Limit > 0 && rep.EntitiesMoved == opts.Limit {
				fmt.Fprintf(log, "stopped at the limit of %d entities; run again to finish\n", opts.Limit)
				return rep, nil
			}
			n, err := m.moveEntity(ctx, tag, id, ents[id])
			if err != nil {
				return rep, err
			}
			rep.EntitiesMoved++
			rep.KeysMoved += n
		}
	}

	// Shard-wide keys: a member may have been added to its new shard by an
	// interrupted run and still be under its old one, so every tag of
	// either count is read.
	for _, tag := range allTags {
		for _, sk := range layout.ShardKeys {
			moved, unowned, err := m.moveMembers(ctx, tag, sk)
			if err != nil {
				return rep, err
			}
			rep.MembersMoved += moved
			rep.Unowned += unowned
		}
	}
	if !opts.DryRun {
		if err := m.dropMarkersAndStreams(ctx, old, next); err != nil {
			return rep, err
		}
		if err := m.verify(ctx, allTags, len(before)); err != nil {
			return rep, err
		}
	}
	rep.Complete = true
	verb := "moved"
	if opts.DryRun {
		verb = "would move"
	}
	fmt.Fprintf(log, "%s %d→%d: %d entities found, %s %d (%d keys) and %d shard-wide members; %d members name no entity\n",
		layout.Service, from, to, rep.Entities, verb, rep.EntitiesMoved, rep.KeysMoved, rep.MembersMoved, rep.Unowned)
	return rep, nil
}

type mover struct {
	rdb     redis.UniversalClient
	layout  Layout
	next    outbox.Sharding
	log     io.Writer
	dry     bool
	unknown []string // keys under a tag the layout does not name, from the last scan
}

func (m *mover) prefix(tag string) string { return "pc:" + m.layout.Service + ":" + tag + ":" }

// checkDrained refuses while any outbox stream of either count holds an
// entry. The relay deletes an entry once Kafka has it, so an empty stream
// has nothing pending either.
func (m *mover) checkDrained(ctx context.Context, tags []string) error {
	s := outbox.Sharding{Service: m.layout.Service}
	var full []string
	for _, tag := range tags {
		n, err := m.rdb.XLen(ctx, s.Stream(tag)).Result()
		if err != nil && !errors.Is(err, redis.Nil) {
			return fmt.Errorf("reading outbox %s: %w", s.Stream(tag), err)
		}
		if n > 0 {
			full = append(full, fmt.Sprintf("%s (%d)", s.Stream(tag), n))
		}
	}
	if len(full) > 0 {
		return fmt.Errorf("%w: %s", ErrOutboxNotEmpty, strings.Join(full, ", "))
	}
	return nil
}

// entity is the keys found of one entity under one tag.
type entity struct {
	keys    []string // the rest after the tag
	primary string   // among keys, or "" if already gone
}

// entitiesByTag scans the service's keys once (SCAN over the whole key
// space costs the same whatever its pattern, so not once per tag) and
// groups the entity keys under tags by tag and entity.
func (m *mover) entitiesByTag(ctx context.Context, tags []string) (map[string]map[string]*entity, error) {
	m.unknown = nil
	service := "pc:" + m.layout.Service + ":"
	keys, err := m.scan(ctx, escapeGlob(service+"{"+m.layout.Service+".")+"*")
	if err != nil {
		return nil, err
	}
	out := map[string]map[string]*entity{}
	for _, tag := range tags {
		out[tag] = map[string]*entity{}
	}
	for _, k := range keys {
		end := strings.Index(k, "}:")
		if end < 0 {
			continue
		}
		tag, rest := k[len(service):end+1], k[end+2:]
		ents, ok := out[tag]
		if !ok { // a tag neither count has
			continue
		}
		id, primary, ok := m.layout.Entity(rest)
		if !ok {
			if !m.known(rest) {
				m.unknown = append(m.unknown, k)
			}
			continue
		}
		e := ents[id]
		if e == nil {
			e = &entity{}
			ents[id] = e
		}
		e.keys = append(e.keys, rest)
		if primary {
			e.primary = rest
		}
	}
	return out, nil
}

// known reports whether a key under a tag that is no entity's is one the
// layout names: a shard-wide key, a marker, or the outbox.
func (m *mover) known(rest string) bool {
	if rest == "outbox" || slices.Contains(m.layout.Markers, rest) {
		return true
	}
	return slices.ContainsFunc(m.layout.ShardKeys, func(sk ShardKey) bool { return sk.Name == rest })
}

// entities returns every entity id found, under any tag.
func entities(byTag map[string]map[string]*entity) map[string]bool {
	all := map[string]bool{}
	for _, ents := range byTag {
		for id, e := range ents {
			if e.primary != "" {
				all[id] = true
			}
		}
	}
	return all
}

// moveEntity copies every key of an entity from tag to its new tag, checks
// each copy, then deletes the old keys, the primary last.
func (m *mover) moveEntity(ctx context.Context, tag, id string, e *entity) (int, error) {
	to := m.next.Tag(id)
	fmt.Fprintf(m.log, "%s %s: %s → %s (%d keys)\n", m.layout.Service, id, tag, to, len(e.keys))
	if m.dry {
		return len(e.keys), nil
	}
	order := slices.Clone(e.keys)
	slices.Sort(order)
	if e.primary != "" { // the primary last: the entity exists at its old tag until the end
		order = slices.DeleteFunc(order, func(k string) bool { return k == e.primary })
		order = append(order, e.primary)
	}
	copied := make([]string, 0, len(order))
	for _, rest := range order {
		ok, err := m.copyKey(ctx, m.prefix(tag)+rest, m.prefix(to)+rest)
		if err != nil {
			return 0, fmt.Errorf("moving %s %s: %w", m.layout.Service, id, err)
		}
		if ok {
			copied = append(copied, rest)
		}
	}
	for _, rest := range copied {
		if err := m.rdb.Del(ctx, m.prefix(tag)+rest).Err(); err != nil {
			return 0, fmt.Errorf("moving %s %s: deleting %s: %w", m.layout.Service, id, m.prefix(tag)+rest, err)
		}
	}
	return len(copied), nil
}

// copyKey writes src's value to dst with src's remaining time to live and
// checks it is there (a key without expiry); false when src no longer
// exists (it expired).
func (m *mover) copyKey(ctx context.Context, src, dst string) (bool, error) {
	dump, err := m.rdb.Dump(ctx, src).Result()
	if errors.Is(err, redis.Nil) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("DUMP %s: %w", src, err)
	}
	ttl, err := m.rdb.PTTL(ctx, src).Result()
	if err != nil {
		return false, fmt.Errorf("PTTL %s: %w", src, err)
	}
	switch {
	case ttl == -2*time.Nanosecond || ttl == -2*time.Millisecond: // gone since the DUMP
		return false, nil
	case ttl < 0: // no expiry
		ttl = 0
	}
	if err := m.rdb.RestoreReplace(ctx, dst, ttl, dump).Err(); err != nil {
		return false, fmt.Errorf("RESTORE %s: %w", dst, err)
	}
	if ttl > 0 { // it may expire as soon as written, as its source does
		return true, nil
	}
	n, err := m.rdb.Exists(ctx, dst).Result()
	if err != nil {
		return false, fmt.Errorf("checking %s: %w", dst, err)
	}
	if n != 1 {
		return false, fmt.Errorf("%s is not there after RESTORE", dst)
	}
	return true, nil
}

// moveMembers moves every member of the shard-wide key sk under tag whose
// entity's shard is another to the same key of that shard: added there,
// then removed here.
func (m *mover) moveMembers(ctx context.Context, tag string, sk ShardKey) (moved, unowned int, err error) {
	src := m.prefix(tag) + sk.Name
	dstOf := func(member string) (string, bool) {
		id, ok := sk.Owner(member)
		if !ok {
			unowned++
			return "", false
		}
		to := m.next.Tag(id)
		if to == tag {
			return "", false
		}
		moved++
		return m.prefix(to) + sk.Name, true
	}
	fail := func(err error) (int, int, error) { return moved, unowned, fmt.Errorf("moving %s: %w", src, err) }
	switch sk.Kind {
	case SortedSet:
		zs, err := m.rdb.ZRangeWithScores(ctx, src, 0, -1).Result()
		if err != nil {
			return fail(err)
		}
		for _, z := range zs {
			member := z.Member.(string)
			dst, ok := dstOf(member)
			if !ok || m.dry {
				continue
			}
			if err := m.rdb.ZAdd(ctx, dst, z).Err(); err != nil {
				return fail(err)
			}
			if err := m.rdb.ZRem(ctx, src, member).Err(); err != nil {
				return fail(err)
			}
		}
	case Hash:
		fields, err := m.rdb.HGetAll(ctx, src).Result()
		if err != nil {
			return fail(err)
		}
		for _, f := range slices.Sorted(maps.Keys(fields)) {
			dst, ok := dstOf(f)
			if !ok || m.dry {
				continue
			}
			if err := m.rdb.HSet(ctx, dst, f, fields[f]).Err(); err != nil {
				return fail(err)
			}
			if err := m.rdb.HDel(ctx, src, f).Err(); err != nil {
				return fail(err)
			}
		}
	case Set:
		members, err := m.rdb.SMembers(ctx, src).Result()
		if err != nil {
			return fail(err)
		}
		slices.Sort(members)
		for _, member := range members {
			dst, ok := dstOf(member)
			if !ok || m.dry {
				continue
			}
			if err := m.rdb.SAdd(ctx, dst, member).Err(); err != nil {
				return fail(err)
			}
			if err := m.rdb.SRem(ctx, src, member).Err(); err != nil {
				return fail(err)
			}
		}
	default:
		return fail(fmt.Errorf("unknown kind %d", sk.Kind))
	}
	return moved, unowned, nil
}

// dropMarkersAndStreams deletes the markers under every tag and the (empty)
// outbox streams of the tags the new count does not have.
func (m *mover) dropMarkersAndStreams(ctx context.Context, old, next outbox.Sharding) error {
	for _, tag := range union(old.Tags(), next.Tags()) {
		for _, name := range m.layout.Markers {
			if err := m.rdb.Del(ctx, m.prefix(tag)+name).Err(); err != nil {
				return fmt.Errorf("deleting %s: %w", m.prefix(tag)+name, err)
			}
		}
	}
	for _, tag := range old.Tags() {
		if slices.Contains(next.Tags(), tag) {
			continue
		}
		if err := m.rdb.Del(ctx, old.Stream(tag)).Err(); err != nil {
			return fmt.Errorf("deleting %s: %w", old.Stream(tag), err)
		}
	}
	return nil
}

// verify checks the move: as many entities as before, each key of each
// under the tag the new count gives it, and every shard-wide member too.
func (m *mover) verify(ctx context.Context, tags []string, want int) error {
	var problems []string
	byTag, err := m.entitiesByTag(ctx, tags)
	if err != nil {
		return err
	}
	found := entities(byTag)
	for _, tag := range tags {
		for id, e := range byTag[tag] {
			if m.next.Tag(id) != tag {
				problems = append(problems, fmt.Sprintf("%s %s has %d keys under %s", m.layout.Service, id, len(e.keys), tag))
			}
		}
		for _, sk := range m.layout.ShardKeys {
			members, err := m.members(ctx, m.prefix(tag)+sk.Name, sk.Kind)
			if err != nil {
				return err
			}
			for _, member := range members {
				if id, ok := sk.Owner(member); ok && m.next.Tag(id) != tag {
					problems = append(problems, fmt.Sprintf("%s member %q under %s", sk.Name, member, tag))
				}
			}
		}
	}
	if len(found) != want {
		problems = append(problems, fmt.Sprintf("%d entities after the move, %d before", len(found), want))
	}
	if len(problems) > 0 {
		slices.Sort(problems)
		return fmt.Errorf("reshard verification failed: %s", strings.Join(problems, "; "))
	}
	return nil
}

func (m *mover) members(ctx context.Context, key string, kind Kind) ([]string, error) {
	switch kind {
	case SortedSet:
		return m.rdb.ZRange(ctx, key, 0, -1).Result()
	case Hash:
		return m.rdb.HKeys(ctx, key).Result()
	default:
		return m.rdb.SMembers(ctx, key).Result()
	}
}

// scan returns the keys matching pattern, on every primary of a cluster.
func (m *mover) scan(ctx context.Context, pattern string) ([]string, error) {
	var mu sync.Mutex
	var out []string
	scan := func(ctx context.Context, c redis.Cmdable) error {
		iter := c.Scan(ctx, 0, pattern, 1000).Iterator()
		for iter.Next(ctx) {
			mu.Lock() // ForEachMaster visits the nodes concurrently
			out = append(out, iter.Val())
			mu.Unlock()
		}
		return iter.Err()
	}
	var err error
	if cluster, ok := m.rdb.(*redis.ClusterClient); ok {
		err = cluster.ForEachMaster(ctx, func(ctx context.Context, node *redis.Client) error { return scan(ctx, node) })
	} else {
		err = scan(ctx, m.rdb)
	}
	if err != nil {
		return nil, fmt.Errorf("scanning %s: %w", pattern, err)
	}
	// SCAN may return a key twice; a key is visited once.
	slices.Sort(out)
	return slices.Compact(out), nil
}

// escapeGlob escapes the characters SCAN's MATCH treats specially, so a
// tag's braces and the rest match themselves.
func escapeGlob(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`*?[]\`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

func union(a, b []string) []string {
	out := slices.Clone(a)
	for _, s := range b {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

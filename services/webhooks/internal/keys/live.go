package keys

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pcourt/pcourt/libs/webhook/signature"
)

// Live is the keyring of the moment: it reloads the key directory so that
// a key added by a rotation (a new file in the mounted Secret) is published
// and later signs, and a removed one goes, without a restart. A directory
// that fails to load leaves the keys as they were: a half-written Secret
// never takes the signing key away.
type Live struct {
	cfg    Config
	dir    string
	logger *slog.Logger
	ring   atomic.Pointer[Ring]

	mu  sync.Mutex // one reload at a time
	ids []string   // the key ids of the ring, sorted
}

// NewLive loads dir once; it fails when the first load does.
func NewLive(cfg Config, dir string, logger *slog.Logger) (*Live, error) {
	l := &Live{cfg: cfg, dir: dir, logger: logger}
	if _, err := l.Reload(time.Now()); err != nil {
		return nil, err
	}
	return l, nil
}

// Static is a Live over a fixed ring (development's ephemeral keys):
// it never reloads.
func Static(r *Ring, logger *slog.Logger) *Live {
	l := &Live{logger: logger}
	l.ring.Store(r)
	return l
}

// Reload reads the directory again and swaps the ring in when its keys
// changed; changed reports whether they did. Each added or removed key is
// logged by id and state, never more.
func (l *Live) Reload(now time.Time) (changed bool, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	ks, err := LoadDir(l.cfg, l.dir)
	if err != nil {
		return false, err
	}
	ring, err := New(l.cfg, ks...)
	if err != nil {
		return false, err
	}
	ids := make([]string, len(ks))
	for i, k := range ks {
		ids[i] = k.ID
	}
	slices.Sort(ids)
	if l.ring.Load() != nil && slices.Equal(ids, l.ids) {
		return false, nil
	}
	for _, id := range ids {
		if !slices.Contains(l.ids, id) {
			l.logger.Info("webhook signing key loaded", "kid", id, "state", ring.stateByID(id, now))
		}
	}
	for _, id := range l.ids {
		if !slices.Contains(ids, id) {
			l.logger.Info("webhook signing key removed", "kid", id)
		}
	}
	l.ring.Store(ring)
	l.ids = ids
	return true, nil
}

// Watch reloads every interval until ctx ends. A failed reload is logged
// and the keys stay as they were.
func (l *Live) Watch(ctx context.Context, interval time.Duration) error {
	if l.dir == "" {
		<-ctx.Done()
		return nil
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
			if _, err := l.Reload(time.Now()); err != nil {
				l.logger.ErrorContext(ctx, "reloading webhook signing keys failed; keeping the loaded ones", "dir", l.dir, "err", err)
			}
		}
	}
}

// Ring returns the ring of the moment.
func (l *Live) Ring() *Ring { return l.ring.Load() }

// Signer returns the active signer of env at now.
func (l *Live) Signer(env signature.Environment, now time.Time) (*signature.Signer, error) {
	return l.ring.Load().Signer(env, now)
}

// Published returns the keys to publish at now.
func (l *Live) Published(env signature.Environment, now time.Time) []signature.JWK {
	return l.ring.Load().Published(env, now)
}

// States lists every key of env with its state at now.
func (l *Live) States(env signature.Environment, now time.Time) []Status {
	return l.ring.Load().States(env, now)
}

// Timelines is Ring.Timelines of the ring of the moment.
func (l *Live) Timelines(env signature.Environment) []Timeline {
	return l.ring.Load().Timelines(env)
}

// Timeline is one key's rotation instants; RetiredAt and ExpiresAt are
// zero while no newer key has activated.
type Timeline struct {
	ID          string
	Environment signature.Environment
	ActivatesAt time.Time
	RetiredAt   time.Time // the successor's activation: it stops signing
	ExpiresAt   time.Time // RetiredAt plus the grace: it stops being published
}

// Timelines lists every key of env (both when env is empty), oldest first.
func (r *Ring) Timelines(env signature.Environment) []Timeline {
	var out []Timeline
	for _, e := range []signature.Environment{signature.Live, signature.Sandbox} {
		if env != "" && env != e {
			continue
		}
		ks := r.keys[e]
		for i, k := range ks {
			tl := Timeline{ID: k.ID, Environment: e, ActivatesAt: k.ActivatesAt}
			if i+1 < len(ks) {
				tl.RetiredAt = ks[i+1].ActivatesAt
				tl.ExpiresAt = tl.RetiredAt.Add(r.cfg.RetiredGrace)
			}
			out = append(out, tl)
		}
	}
	return out
}

// stateByID is the state of key id at now.
func (r *Ring) stateByID(id string, now time.Time) State {
	for _, ks := range r.keys {
		for i, k := range ks {
			if k.ID == id {
				return r.stateOf(ks, i, now)
			}
		}
	}
	return State(fmt.Sprintf("unknown key %s", id))
}

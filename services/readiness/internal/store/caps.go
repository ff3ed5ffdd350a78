package store

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// Cap limits settlements in fixed windows: at most Limit per Window.
type Cap struct {
	Limit  int
	Window time.Duration
}

// Enabled reports whether the cap limits anything.
func (c Cap) Enabled() bool { return c.Limit > 0 && c.Window > 0 }

// CapReached says which cap refused a settlement and when to try again.
type CapReached struct {
	Scope      string // "payer" or "global"
	RetryAfter time.Duration
}

func (e *CapReached) Error() string {
	return fmt.Sprintf("%s settlement cap reached; retry after %s", e.Scope, e.RetryAfter)
}

// Caps counts settlements per payer and in total.
type Caps struct {
	rdb    redis.UniversalClient
	payer  Cap
	global Cap
}

// NewCaps returns the counters; a zero Cap is no limit.
func NewCaps(rdb redis.UniversalClient, payer, global Cap) *Caps {
	return &Caps{rdb: rdb, payer: payer, global: global}
}

// Reservation is a counted settlement that can be given back.
type Reservation struct {
	keys []string
}

// reserveScript counts one more settlement in the window unless that would
// pass the limit. KEYS[1] counter; ARGV limit, window ms. Returns 0 when
// counted, else the window's remaining milliseconds.
var reserveScript = redis.NewScript(`
local n = redis.call('INCR', KEYS[1])
if n == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
if n > tonumber(ARGV[1]) then
  redis.call('DECR', KEYS[1])
  local ttl = redis.call('PTTL', KEYS[1])
  if ttl < 1 then ttl = 1 end
  return ttl
end
return 0
`)

// Reserve counts a settlement against the global and the payer's cap, or
// returns *CapReached and counts nothing.
func (c *Caps) Reserve(ctx context.Context, payer string, now time.Time) (Reservation, error) {
	var r Reservation
	for _, step := range []struct {
		scope string
		cap   Cap
		key   string
	}{
		{"global", c.global, "pc:readiness:cap:{global}:"},
		{"payer", c.payer, "pc:readiness:cap:{payer:" + strings.ToLower(payer) + "}:"},
	} {
		if !step.cap.Enabled() {
			continue
		}
		window := now.UnixMilli() / step.cap.Window.Milliseconds()
		key := step.key + strconv.FormatInt(window, 10)
		wait, err := reserveScript.Run(ctx, c.rdb, []string{key}, step.cap.Limit, step.cap.Window.Milliseconds()).Int64()
		if err != nil {
			c.Release(ctx, r)
			return Reservation{}, fmt.Errorf("counting %s settlements: %w", step.scope, err)
		}
		if wait > 0 {
			c.Release(ctx, r)
			return Reservation{}, &CapReached{Scope: step.scope, RetryAfter: time.Duration(wait) * time.Millisecond}
		}
		r.keys = append(r.keys, key)
	}
	return r, nil
}

// Release gives a reservation back: the settlement it counted did not happen.
func (c *Caps) Release(ctx context.Context, r Reservation) {
	for _, k := range r.keys {
		_ = c.rdb.Decr(context.WithoutCancel(ctx), k).Err() // best effort: the window expires anyway
	}
}

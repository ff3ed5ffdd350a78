package idempotency

import "github.com/redis/go-redis/v9"

// beginScript claims the key or reports why it cannot.
// KEYS[1] journal entry; ARGV fingerprint, lease token, lease ms, retention ms.
// Returns {"started"}, {"mismatch"}, {"in_flight"} or {"done", status, headers, body}.
// Redis's own clock decides lease expiry, so replicas with skewed clocks agree.
var beginScript = redis.NewScript(`
local now = redis.call('TIME')
local now_ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
local e = redis.call('HMGET', KEYS[1], 'state', 'fp', 'lease_until', 'status', 'headers', 'body')
if not e[1] then
  redis.call('HSET', KEYS[1], 'state', 'running', 'fp', ARGV[1], 'token', ARGV[2], 'lease_until', now_ms + tonumber(ARGV[3]))
  redis.call('PEXPIRE', KEYS[1], ARGV[4])
  return {'started'}
end
if e[2] ~= ARGV[1] then
  return {'mismatch'}
end
if e[1] == 'done' then
  return {'done', e[4], e[5], e[6]}
end
if tonumber(e[3]) > now_ms then
  return {'in_flight'}
end
redis.call('HSET', KEYS[1], 'token', ARGV[2], 'lease_until', now_ms + tonumber(ARGV[3]))
return {'started'}
`)

// completeScript stores the final answer if this attempt still holds the lease.
// KEYS[1] journal entry; ARGV token, status, headers JSON, body, retention ms.
var completeScript = redis.NewScript(`
if redis.call('HGET', KEYS[1], 'token') ~= ARGV[1] then
  return 0
end
redis.call('HSET', KEYS[1], 'state', 'done', 'status', ARGV[2], 'headers', ARGV[3], 'body', ARGV[4])
redis.call('HDEL', KEYS[1], 'token', 'lease_until')
redis.call('PEXPIRE', KEYS[1], ARGV[5])
return 1
`)

// releaseScript forgets a transient outcome if this attempt still holds the lease.
var releaseScript = redis.NewScript(`
if redis.call('HGET', KEYS[1], 'token') == ARGV[1] and redis.call('HGET', KEYS[1], 'state') == 'running' then
  return redis.call('DEL', KEYS[1])
end
return 0
`)

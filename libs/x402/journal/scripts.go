package journal

import (
	"github.com/redis/go-redis/v9"

	"github.com/pcourt/pcourt/libs/outbox"
)

// Every script: KEYS[1] the payment record, KEYS[2] the owner's unfinished
// index of the shard (payment id scored by when to reconcile), KEYS[3] the
// shard's outbox. Times come from Redis's clock so replicas with skewed
// clocks agree.

const luaNow = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
`

// claimScript ARGV: owner, resource, fingerprint, payload hash, token, lease
// ms, requirements, payload, payer, id, retention ms, ref.
//
// Another owner or resource comes first: a payment that bought one thing
// is used, whatever else differs, and learns nothing more.
var claimScript = redis.NewScript(luaNow + `
local r = redis.call('HMGET', KEYS[1], 'state', 'owner', 'resource', 'fp', 'payload_hash', 'lease_until')
local state = r[1]
if not state then
  redis.call('HSET', KEYS[1], 'state', 'verifying', 'owner', ARGV[1], 'resource', ARGV[2], 'fp', ARGV[3],
    'payload_hash', ARGV[4], 'token', ARGV[5], 'lease_until', now + tonumber(ARGV[6]),
    'requirements', ARGV[7], 'payload', ARGV[8], 'payer', ARGV[9], 'ref', ARGV[12], 'created', now)
  redis.call('PEXPIRE', KEYS[1], ARGV[11])
  return {'claimed'}
end
if r[2] ~= ARGV[1] or r[3] ~= ARGV[2] then return {'already_used'} end
if r[5] ~= ARGV[4] then return {'payload_mismatch'} end
if r[4] ~= ARGV[3] then return {'request_mismatch'} end
if state == 'settled' or state == 'refused' or state == 'pending' then return {state} end
if tonumber(r[6]) > now then return {'in_progress'} end
if state == 'verifying' then
  -- The request that claimed it died before settling anything: run again.
  redis.call('HSET', KEYS[1], 'token', ARGV[5], 'lease_until', now + tonumber(ARGV[6]), 'ref', ARGV[12])
  return {'claimed'}
end
-- settling with a lapsed lease: its outcome is unknown until reconciled.
redis.call('HSET', KEYS[1], 'state', 'pending')
redis.call('HDEL', KEYS[1], 'token')
redis.call('ZADD', KEYS[2], now, ARGV[10])
return {'pending'}
`)

// releaseScript ARGV: token, id.
var releaseScript = redis.NewScript(`
if redis.call('HGET', KEYS[1], 'token') == ARGV[1] and redis.call('HGET', KEYS[1], 'state') == 'verifying' then
  redis.call('DEL', KEYS[1])
  redis.call('ZREM', KEYS[2], ARGV[2])
  return 1
end
return 0
`)

// startSettlingScript ARGV: token, receipt, lease ms, id. A claim whose
// lease lapsed may not start: another payment may have been allowed to
// take its place meanwhile (see Standing).
var startSettlingScript = redis.NewScript(luaNow + `
local r = redis.call('HMGET', KEYS[1], 'token', 'state', 'lease_until')
if r[1] ~= ARGV[1] or r[2] ~= 'verifying' or tonumber(r[3]) <= now then
  return 0
end
local lease_until = now + tonumber(ARGV[3])
redis.call('HSET', KEYS[1], 'state', 'settling', 'receipt', ARGV[2], 'lease_until', lease_until)
redis.call('ZADD', KEYS[2], lease_until, ARGV[4])
return 1
`)

// markPendingScript ARGV: token, id.
var markPendingScript = redis.NewScript(luaNow + `
if redis.call('HGET', KEYS[1], 'token') ~= ARGV[1] or redis.call('HGET', KEYS[1], 'state') ~= 'settling' then
  return 0
end
redis.call('HSET', KEYS[1], 'state', 'pending')
redis.call('HDEL', KEYS[1], 'token')
redis.call('ZADD', KEYS[2], now, ARGV[2])
return 1
`)

// recordSettledScript ARGV: settlement, id, retention ms, fulfilled (1/0),
// fulfil-after ms, has event (1/0), then the event's outbox.ArgCount
// values. An unfulfilled settlement stays in the unfinished index for the
// owner's reconciler.
var recordSettledScript = outbox.Script(luaNow + `
local state = redis.call('HGET', KEYS[1], 'state')
if state ~= 'settling' and state ~= 'pending' then
  return 0
end
redis.call('HSET', KEYS[1], 'state', 'settled', 'settlement', ARGV[1], 'fulfilled', ARGV[4])
redis.call('HDEL', KEYS[1], 'token', 'lease_until')
redis.call('PEXPIRE', KEYS[1], ARGV[3])
if ARGV[4] == '1' then
  redis.call('ZREM', KEYS[2], ARGV[2])
else
  redis.call('ZADD', KEYS[2], now + tonumber(ARGV[5]), ARGV[2])
end
if ARGV[6] == '1' then outbox_append(KEYS[3], 7) end
return 1
`)

// recordRefusedScript ARGV: settlement, reason, id, retention ms.
var recordRefusedScript = redis.NewScript(`
local state = redis.call('HGET', KEYS[1], 'state')
if state ~= 'settling' and state ~= 'pending' then
  return 0
end
redis.call('HSET', KEYS[1], 'state', 'refused', 'settlement', ARGV[1], 'reason', ARGV[2], 'fulfilled', '1')
redis.call('HDEL', KEYS[1], 'token', 'lease_until', 'receipt')
redis.call('PEXPIRE', KEYS[1], ARGV[4])
redis.call('ZREM', KEYS[2], ARGV[3])
return 1
`)

// fulfilledScript ARGV: id.
var fulfilledScript = redis.NewScript(`
if redis.call('HGET', KEYS[1], 'state') ~= 'settled' then return 0 end
redis.call('HSET', KEYS[1], 'fulfilled', '1')
redis.call('ZREM', KEYS[2], ARGV[1])
return 1
`)

// standingScript: the state, with a verifying record whose lease lapsed
// reported as abandoned.
var standingScript = redis.NewScript(luaNow + `
local r = redis.call('HMGET', KEYS[1], 'state', 'lease_until')
if not r[1] then return '' end
if r[1] == 'verifying' and tonumber(r[2]) <= now then return 'abandoned' end
return r[1]
`)

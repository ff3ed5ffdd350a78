package store

import (
	"github.com/redis/go-redis/v9"

	"github.com/pcourt/pcourt/libs/outbox"
)

// Every script: KEYS[1] the payment record, KEYS[2] the shard's unfinished
// index (payment id scored by when to reconcile), KEYS[3] the shard's outbox.
// Times come from Redis's clock so replicas with skewed clocks agree.

const luaNow = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
`

// claimScript ARGV: fingerprint, payload hash, token, lease ms, requirements,
// payload, payer, id, retention ms.
var claimScript = redis.NewScript(luaNow + `
local r = redis.call('HMGET', KEYS[1], 'state', 'fp', 'payload_hash', 'lease_until', 'report', 'settlement', 'reason')
local state = r[1]
if not state then
  redis.call('HSET', KEYS[1], 'state', 'verifying', 'fp', ARGV[1], 'payload_hash', ARGV[2], 'token', ARGV[3],
    'lease_until', now + tonumber(ARGV[4]), 'requirements', ARGV[5], 'payload', ARGV[6], 'payer', ARGV[7], 'created', now)
  redis.call('PEXPIRE', KEYS[1], ARGV[9])
  return {'claimed'}
end
if r[3] ~= ARGV[2] then return {'payload_mismatch'} end
if r[2] ~= ARGV[1] then return {'request_mismatch'} end
if state == 'settled' or state == 'refused' then
  return {state, r[5] or '', r[6] or '', r[7] or ''}
end
if state == 'pending' then return {'pending'} end
if tonumber(r[4]) > now then return {'in_progress'} end
if state == 'verifying' then
  -- The request that claimed it died before settling anything: run again.
  redis.call('HSET', KEYS[1], 'token', ARGV[3], 'lease_until', now + tonumber(ARGV[4]))
  return {'claimed'}
end
-- settling with a lapsed lease: its outcome is unknown until reconciled.
redis.call('HSET', KEYS[1], 'state', 'pending')
redis.call('HDEL', KEYS[1], 'token')
redis.call('ZADD', KEYS[2], now, ARGV[8])
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

// startSettlingScript ARGV: token, report, lease ms, id.
var startSettlingScript = redis.NewScript(luaNow + `
if redis.call('HGET', KEYS[1], 'token') ~= ARGV[1] or redis.call('HGET', KEYS[1], 'state') ~= 'verifying' then
  return 0
end
local lease_until = now + tonumber(ARGV[3])
redis.call('HSET', KEYS[1], 'state', 'settling', 'report', ARGV[2], 'lease_until', lease_until)
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

// recordSettledScript ARGV: settlement, id, retention ms, then the outbox
// event's outbox.ArgCount values.
var recordSettledScript = outbox.Script(`
local state = redis.call('HGET', KEYS[1], 'state')
if state ~= 'settling' and state ~= 'pending' then
  return 0
end
redis.call('HSET', KEYS[1], 'state', 'settled', 'settlement', ARGV[1])
redis.call('HDEL', KEYS[1], 'token', 'lease_until')
redis.call('PEXPIRE', KEYS[1], ARGV[3])
redis.call('ZREM', KEYS[2], ARGV[2])
outbox_append(KEYS[3], 4)
return 1
`)

// recordRefusedScript ARGV: settlement, reason, id, retention ms.
var recordRefusedScript = redis.NewScript(`
local state = redis.call('HGET', KEYS[1], 'state')
if state ~= 'settling' and state ~= 'pending' then
  return 0
end
redis.call('HSET', KEYS[1], 'state', 'refused', 'settlement', ARGV[1], 'reason', ARGV[2])
redis.call('HDEL', KEYS[1], 'token', 'lease_until', 'report')
redis.call('PEXPIRE', KEYS[1], ARGV[4])
redis.call('ZREM', KEYS[2], ARGV[3])
return 1
`)

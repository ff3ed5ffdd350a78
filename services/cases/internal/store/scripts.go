package store

import (
	"github.com/redis/go-redis/v9"

	"github.com/pcourt/pcourt/libs/outbox"
)

// The writing scripts share an ARGV layout after their first value:
//
//	[2] record  [3] status  [4] next deadline ms or ""  [5] case id
//	[6] event id prefix  [7..12] the outbox values (outbox.ArgCount)
//	[13] the case's index members (index.go)
//	[14] n, then per event: body head, body tail, envelope head, envelope
//	     tail, export entries ("" for none; exports.go)
//
// KEYS: [1] case hash, [2] docket, [3] deadlines, [4] outbox stream,
// [5] the script's own (applied set or documents), [6] the shard's export
// index, [7] its export notes, [8] its case index.
const luaRecord = `
local function index_exports(entries, id)
  for entry in string.gmatch(entries, '[^\30]+') do
    local member, field, note = string.match(entry, '^([^\29]*)\29([^\29]*)\29(.*)$')
    redis.call('ZADD', KEYS[6], 0, member .. id)
    redis.call('HSET', KEYS[7], field .. id, note)
  end
end

local function index_case()
  for member in string.gmatch(ARGV[13], '[^\30]+') do
    redis.call('ZADD', KEYS[8], 0, member)
  end
end

local function record_events()
  local at = 7
  local n = tonumber(ARGV[14])
  local seq = tonumber(redis.call('HGET', KEYS[1], 'seq') or '0')
  for i = 0, n - 1 do
    local b = 15 + i * 5
    seq = seq + 1
    local id = ARGV[6] .. seq
    local body = ARGV[b] .. id .. '","sequence":' .. seq .. ARGV[b + 1]
    redis.call('RPUSH', KEYS[2], body)
    ARGV[at] = id
    ARGV[at + 5] = ARGV[b + 2] .. body .. ARGV[b + 3]
    outbox_append(KEYS[4], at)
    if ARGV[b + 4] ~= '' then index_exports(ARGV[b + 4], id) end
  end
  redis.call('HSET', KEYS[1], 'seq', seq)
end

local function schedule()
  if ARGV[4] == '' then
    redis.call('ZREM', KEYS[3], ARGV[5])
  else
    redis.call('ZADD', KEYS[3], ARGV[4], ARGV[5])
  end
end
`

// openScript: ARGV[1] the case-opened event id; KEYS[5] the applied set.
// Returns 1 when applied, 0 for a repeated event, 2 when the case exists
// under another opening event.
var openScript = outbox.Script(luaRecord + `
if redis.call('SISMEMBER', KEYS[5], ARGV[1]) == 1 then return 0 end
if redis.call('EXISTS', KEYS[1]) == 1 then
  redis.call('SADD', KEYS[5], ARGV[1])
  return 2
end
redis.call('HSET', KEYS[1], 'record', ARGV[2], 'status', ARGV[3], 'version', 1, 'seq', 0)
record_events()
schedule()
index_case()
redis.call('SADD', KEYS[5], ARGV[1])
return 1
`)

// saveScript: ARGV[1] the version the case must still have; after the
// events, pairs of document digest and content, kept in KEYS[5] (the
// case's documents hash) in the same step. Documents are content-addressed
// and never overwritten.
var saveScript = outbox.Script(luaRecord + `
if redis.call('HGET', KEYS[1], 'version') ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'record', ARGV[2], 'status', ARGV[3])
redis.call('HINCRBY', KEYS[1], 'version', 1)
record_events()
schedule()
index_case()
local d = 15 + tonumber(ARGV[14]) * 5
while ARGV[d] do
  redis.call('HSETNX', KEYS[5], ARGV[d], ARGV[d + 1])
  d = d + 2
end
return 1
`)

// rescheduleScript: KEYS case, deadlines; ARGV version, next ms or "", id.
var rescheduleScript = redis.NewScript(`
if redis.call('HGET', KEYS[1], 'version') ~= ARGV[1] then return 0 end
if ARGV[2] == '' then
  redis.call('ZREM', KEYS[2], ARGV[3])
else
  redis.call('ZADD', KEYS[2], ARGV[2], ARGV[3])
end
return 1
`)

// claimScript: KEYS deadlines; ARGV now ms, lease ms, limit. It returns
// id, due ms, id, due ms, ...: when each claimed deadline fell due (or its
// last claim lapsed), for the scheduler's lag.
var claimScript = redis.NewScript(`
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'WITHSCORES', 'LIMIT', 0, tonumber(ARGV[3]))
local until_ms = tonumber(ARGV[1]) + tonumber(ARGV[2])
for i = 1, #due, 2 do
  redis.call('ZADD', KEYS[1], 'XX', until_ms, due[i])
end
return due
`)

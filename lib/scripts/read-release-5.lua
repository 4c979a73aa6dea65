-- Release one read hold of an owner (layout: read-write-holds.lua); when that frees the lock,
-- wake one waiting writer (readers never wait for readers). Idempotent per request id, like
-- release-hold.lua: the owner's log goes with its last read hold, and a record answers a resent
-- final release.
-- KEYS[1] lock hash
-- KEYS[2] readers: owner id -> end of its read lease, server ms
-- KEYS[3] writers' waiter set
-- KEYS[4] writers' wake channel prefix (+ client id)
-- KEYS[5] record prefix: answers of calls whose hold is gone (release-hold.lua)
-- ARGV[1] owner id
-- ARGV[2] lease to extend the owner's read lease to when read holds remain, ms ('0': keep)
-- ARGV[3] request of this call (request-window.lua)
-- ARGV[4] publish command: 'publish', 'spublish' or 'publish-cluster' (wake-one.lua)
-- ARGV[5] how long the record of a final release answers a resend, ms
-- Returns the owner's remaining read hold count (0: released); -1 when it held none (also when
-- its lease had ended).
--- @include "includes/ended-holds.lua"
--- @include "includes/read-write-holds.lua"
--- @include "includes/call-log.lua"
--- @include "includes/wake-one.lua"
local now = server_ms()
rw_prune(KEYS[1], KEYS[2], now)

local field, log_field = 'r:' .. ARGV[1], 'log:r:' .. ARGV[1]
local state = redis.call('HMGET', KEYS[1], field, log_field)
local held, log = tonumber(state[1]), state[2]
local logged = logged_call(log, ARGV[3])
if logged then return logged end

local record = record_key(KEYS[5], 'r:r:', ARGV[1])
if not held then return logged_call(redis.call('GET', record), ARGV[3]) or -1 end

if held > 1 then
  local left = held - 1
  redis.call('HSET', KEYS[1], field, left, log_field, log_call(log, ARGV[3], left))
  if ARGV[2] ~= '0' then
    rw_extend_read(KEYS[2], ARGV[1], now + tonumber(ARGV[2]))
    rw_settle(KEYS[1], KEYS[2])
  end
  return left
end

redis.call('HDEL', KEYS[1], field, log_field)
redis.call('ZREM', KEYS[2], ARGV[1])
record_final(record, log, ARGV[3], ARGV[5])
if rw_settle(KEYS[1], KEYS[2]) then wake_one(KEYS[3], KEYS[4], ARGV[4]) end
return 0

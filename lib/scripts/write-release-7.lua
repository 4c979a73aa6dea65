-- Release one write hold of an owner (layout: read-write-holds.lua). When it was the last one,
-- every waiting reader is woken at once (the lock is free, or the writer downgraded to reading);
-- if no reader waits and the lock is free, one waiting writer is woken. Idempotent per request
-- id, like release-hold.lua: the writer's log goes with its last write hold, and a record answers
-- a resent final release.
-- KEYS[1] lock hash
-- KEYS[2] readers: owner id -> end of its read lease, server ms
-- KEYS[3] readers' waiter set
-- KEYS[4] readers' wake channel prefix (+ client id)
-- KEYS[5] writers' waiter set
-- KEYS[6] writers' wake channel prefix (+ client id)
-- KEYS[7] record prefix: answers of calls whose hold is gone (release-hold.lua)
-- ARGV[1] owner id
-- ARGV[2] lease to extend the write lease to when write holds remain, ms ('0': keep)
-- ARGV[3] request of this call (request-window.lua)
-- ARGV[4] publish command: 'publish', 'spublish' or 'publish-cluster' (wake-one.lua)
-- ARGV[5] how long the record of a final release answers a resend, ms
-- Returns the owner's remaining write hold count (0: released); -1 when it held none (also
-- when its lease had ended).
--- @include "includes/ended-holds.lua"
--- @include "includes/read-write-holds.lua"
--- @include "includes/call-log.lua"
--- @include "includes/wake-one.lua"
--- @include "includes/wake-all.lua"
local now = server_ms()
rw_prune(KEYS[1], KEYS[2], now)

local log_field = 'log:w:' .. ARGV[1]
local state = redis.call('HMGET', KEYS[1], 'writer', 'writes', log_field)
local logged = logged_call(state[3], ARGV[3])
if logged then return logged end

local record = record_key(KEYS[7], 'r:w:', ARGV[1])
if state[1] ~= ARGV[1] then return logged_call(redis.call('GET', record), ARGV[3]) or -1 end

local held = tonumber(state[2])
if held > 1 then
  local left = held - 1
  redis.call('HSET', KEYS[1], 'writes', left, log_field, log_call(state[3], ARGV[3], left))
  if ARGV[2] ~= '0' then
    rw_extend_write(KEYS[1], now + tonumber(ARGV[2]))
    rw_settle(KEYS[1], KEYS[2])
  end
  return left
end

redis.call('HDEL', KEYS[1], 'writer', 'writes', 'wuntil', log_field)
record_final(record, state[3], ARGV[3], ARGV[5], true)
local free = rw_settle(KEYS[1], KEYS[2])
if wake_all(KEYS[3], KEYS[4], ARGV[4]) == 0 and free then wake_one(KEYS[5], KEYS[6], ARGV[4]) end
return 0

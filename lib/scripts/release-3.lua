-- Release one hold of an owner; when the lock becomes free, wake one waiting client.
-- Idempotent per call: while holds remain, the ids of the calls that released them are logged
-- in the lock hash itself (release-log.lua). The log goes with the hash: no key outlives the
-- lock. (A resent final release finds the owner gone; see base-lock.ts.)
-- KEYS[1] lock hash: owner id -> hold count, and 'released:' .. owner id -> release log
-- KEYS[2] waiter set
-- KEYS[3] wake channel prefix (+ client id)
-- ARGV[1] owner id
-- ARGV[2] TTL to set when holds remain, ms ('0' leaves the TTL as it is)
-- ARGV[3] request id of this call (no '=' or ';')
-- ARGV[4] publish command: 'publish', 'spublish' or 'publish-cluster' (wake-one.lua)
-- Returns the owner's remaining hold count (0: released); -1 when the owner held nothing.
local log_field = 'released:' .. ARGV[1]
local state = redis.call('HMGET', KEYS[1], ARGV[1], log_field)
local held, log = tonumber(state[1]), state[2]
local logged = logged_release(log, ARGV[3])
if logged then return logged end

if not held then return -1 end

if held > 1 then
  local left = held - 1
  redis.call('HSET', KEYS[1], ARGV[1], left, log_field, log_release(log, ARGV[3], left))
  if ARGV[2] ~= '0' then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
  return left
end

-- The lock is exclusive: the hash holds only this owner (its log, a fenced lock's token). It is
-- free now.
redis.call('DEL', KEYS[1])
wake_one(KEYS[2], KEYS[3], ARGV[4])
return 0

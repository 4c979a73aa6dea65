-- Release one hold of an owner; when the lock becomes free, wake one waiting client.
-- Idempotent per call: while holds remain, the ids of the calls that released them are logged
-- in the lock hash itself, so a call that ioredis resends after a reconnect (or a caller
-- retries) is answered from the log and never decrements twice. The log goes with the hash:
-- no key outlives the lock. (A resent final release finds the owner gone; see base-lock.ts.)
-- KEYS[1] lock hash: owner id -> hold count, and 'released:' .. owner id -> release log
-- KEYS[2] waiter set
-- KEYS[3] wake channel prefix (+ client id)
-- ARGV[1] owner id
-- ARGV[2] TTL to set when holds remain, ms ('0' leaves the TTL as it is)
-- ARGV[3] request id of this call (no '=' or ';')
-- ARGV[4] publish command: 'publish' or 'spublish'
-- Returns the owner's remaining hold count (0: released); -1 when the owner held nothing.
local log_field = 'released:' .. ARGV[1]
local log = redis.call('HGET', KEYS[1], log_field)
if log then
  local _, at = string.find(log, ARGV[3] .. '=', 1, true)
  if at then return tonumber(string.match(log, '^%d+', at + 1)) end
end

if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 0 then return -1 end

local left = redis.call('HINCRBY', KEYS[1], ARGV[1], -1)
if left > 0 then
  log = (log or '') .. ARGV[3] .. '=' .. left .. ';'
  -- Only the latest calls can still be resent: keep the log short.
  if #log > 512 then log = string.sub(log, string.find(log, ';', #log - 512, true) + 1) end
  redis.call('HSET', KEYS[1], log_field, log)
  if ARGV[2] ~= '0' then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
  return left
end

redis.call('HDEL', KEYS[1], ARGV[1], log_field)
-- An empty hash is deleted by Redis itself: the lock is free.
if redis.call('EXISTS', KEYS[1]) == 0 then wake_one(KEYS[2], KEYS[3], ARGV[4]) end
return 0

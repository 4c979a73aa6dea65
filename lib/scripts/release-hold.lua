-- Shared function, prepended by the registry (after release-log.lua) to the scripts that release
-- a hold of an exclusive lock.
-- release_hold(lock, owner, reexpire_ms, request_id): releases one hold of `owner` on `lock`
-- (a hash: owner id -> hold count, and 'released:' .. owner id -> release log).
-- Idempotent per call (release-log.lua); the log goes with the hash: no key outlives the lock.
-- (A resent final release finds the owner gone; see base-lock.ts.)
-- reexpire_ms: TTL to set when holds remain, ms ('0' leaves the TTL as it is).
-- request_id: the id of this call (no '=' or ';').
-- Returns the owner's remaining hold count; 0 means the lock is free now (its hash deleted by
-- this call: logged answers are never 0); -1 when the owner held nothing.
local function release_hold(lock, owner, reexpire_ms, request_id)
  local log_field = 'released:' .. owner
  local state = redis.call('HMGET', lock, owner, log_field)
  local held, log = tonumber(state[1]), state[2]
  local logged = logged_release(log, request_id)
  if logged then return logged end

  if not held then return -1 end

  if held > 1 then
    local left = held - 1
    redis.call('HSET', lock, owner, left, log_field, log_release(log, request_id, left))
    if reexpire_ms ~= '0' then redis.call('PEXPIRE', lock, reexpire_ms) end
    return left
  end

  -- The lock is exclusive: the hash holds only this owner (its log, a fenced lock's token). It is
  -- free now.
  redis.call('DEL', lock)
  return 0
end

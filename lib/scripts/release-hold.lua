-- Shared function, prepended by the registry to the scripts that release a hold.
-- release_hold(lock, owner, reexpire_ms, request_id): releases one hold of `owner` on `lock`
-- (a hash: owner id -> hold count, and 'released:' .. owner id -> release log).
-- Idempotent per call: while holds remain, the ids of the calls that released them are logged
-- in the lock hash itself, so a call that ioredis resends after a reconnect (or a caller
-- retries) is answered from the log and never decrements twice. The log goes with the hash:
-- no key outlives the lock. (A resent final release finds the owner gone; see base-lock.ts.)
-- reexpire_ms: TTL to set when holds remain, ms ('0' leaves the TTL as it is).
-- request_id: the id of this call (no '=' or ';').
-- Returns the owner's remaining hold count; 0 means the lock is free now (its hash deleted by
-- this call: logged answers are never 0); -1 when the owner held nothing.
local function release_hold(lock, owner, reexpire_ms, request_id)
  local log_field = 'released:' .. owner
  local state = redis.call('HMGET', lock, owner, log_field)
  local held, log = tonumber(state[1]), state[2]
  if log then
    local _, at = string.find(log, request_id .. '=', 1, true)
    if at then return tonumber(string.match(log, '^%d+', at + 1)) end
  end

  if not held then return -1 end

  if held > 1 then
    local left = held - 1
    log = (log or '') .. request_id .. '=' .. left .. ';'
    -- Only the latest calls can still be resent: keep the log short.
    if #log > 512 then log = string.sub(log, string.find(log, ';', #log - 512, true) + 1) end
    redis.call('HSET', lock, owner, left, log_field, log)
    if reexpire_ms ~= '0' then redis.call('PEXPIRE', lock, reexpire_ms) end
    return left
  end

  -- The lock is exclusive: the hash holds only this owner (and its bookkeeping). It is free now.
  redis.call('DEL', lock)
  return 0
end

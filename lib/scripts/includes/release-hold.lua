--- @include "ended-holds.lua"
--- @include "call-log.lua"

-- For the scripts that release a hold of an exclusive lock.
-- release_hold(lock, record_prefix, owner, reexpire_ms, request, record_ms, state): releases one hold
-- of `owner` on `lock` (a hash: owner id -> hold count, 'log:' .. owner id -> call log).
-- Idempotent per call (call-log.lua): a release is answered from the owner's log while it holds,
-- and once its hold has ended from the record of its client (ended-holds.lua), which the final
-- release writes and keeps at least record_ms.
-- reexpire_ms: TTL the lock keeps at least when holds remain, ms ('0' leaves it as it is).
-- state: the owner's {count, log} when the caller has read them already (HMGET), else nil.
-- Returns the owner's remaining hold count; 0 means the lock is free now; -1 when the owner
-- held nothing (its lease ran out, or it never held).
local function release_hold(lock, record_prefix, owner, reexpire_ms, request, record_ms, state)
  local log_field = 'log:' .. owner
  state = state or redis.call('HMGET', lock, owner, log_field)
  local held, log = tonumber(state[1]), state[2]
  local logged = logged_call(log, request)
  if logged then return logged end

  local record = record_key(record_prefix, 'r:', owner)
  if not held then
    return logged_call(redis.call('GET', record), request) or -1
  end

  if held > 1 then
    local left = held - 1
    redis.call('HSET', lock, owner, left, log_field, log_call(log, request, left))
    if reexpire_ms ~= '0' then extend_ttl(lock, reexpire_ms) end
    return left
  end

  -- The lock is exclusive: the hash holds only this owner (its log, a fenced lock's token). It is
  -- free now.
  redis.call('DEL', lock)
  record_final(record, log, request, record_ms, true)
  return 0
end

--- @include "call-log.lua"

-- For the acquire scripts of the exclusive locks (lock hash: owner id -> hold count, 'log:' .. owner id -> call log).
-- enter_hold(lock, owner, request, lease_ms, free): `owner` takes the lock (`free`: the key
-- does not exist) or re-enters it; a resent call that was applied before changes nothing.
-- The TTL is set to lease_ms when taken, and only ever extended on re-entry.
-- Returns 'taken', 'reentered', 'resent' (answered from the log), or nil when another owner
-- holds the lock.
local function enter_hold(lock, owner, request, lease_ms, free)
  local log_field = 'log:' .. owner
  if free then
    redis.call('HSET', lock, owner, 1, log_field, call_id(request) .. '=1;')
    redis.call('PEXPIRE', lock, lease_ms)
    return 'taken'
  end
  local state = redis.call('HMGET', lock, owner, log_field)
  if not state[1] then return nil end
  if logged_call(state[2], request) then return 'resent' end
  local holds = tonumber(state[1]) + 1
  redis.call('HSET', lock, owner, holds, log_field, log_call(state[2], request, holds))
  extend_ttl(lock, lease_ms)
  return 'reentered'
end

-- Shared functions, prepended by the registry to every script that changes a hold.
-- Each changing call carries a request id. Its answer is logged in a hash field of the owner
-- ('log:' .. holder), so a call that ioredis resends after a reconnect (or a caller retries) is
-- answered from the log and applied once. The log is a string of 'request id=holds;' entries
-- (request ids hold no '=' or ';') and goes away with the owner's hold (into the record of its
-- client, ended-holds.lua).

-- logged_call(log, request_id): the hold count the logged call answered, or nil if not logged.
local function logged_call(log, request_id)
  if not log then return nil end
  -- Anchored at an entry's start: request id 'a' must not match an entry of '1a'.
  local _, at = string.find(';' .. log, ';' .. request_id .. '=', 1, true)
  if not at then return nil end
  return tonumber(string.match(log, '^%d+', at))
end

-- log_call(log, request_id, holds): the log with this call added. Only the latest calls can
-- still be resent: keep it short.
local function log_call(log, request_id, holds)
  log = (log or '') .. request_id .. '=' .. holds .. ';'
  if #log > 512 then log = string.sub(log, string.find(log, ';', #log - 512, true) + 1) end
  return log
end

-- extend_ttl(key, ms): the key lives at least `ms` more; never shortens it (a nested hold with a
-- shorter lease must not cut an outer one).
local function extend_ttl(key, ms)
  if redis.call('PTTL', key) < tonumber(ms) then redis.call('PEXPIRE', key, ms) end
end

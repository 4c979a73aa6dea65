--- @include "request-window.lua"

-- The call log of every script that changes a hold. Each changing call carries a request (request-window.lua). Its answer is logged
-- in a hash field of the owner ('log:' .. holder), so a call that ioredis resends after a reconnect
-- (or a caller retries) is answered from the log and applied once. The log is a string of
-- '<call id>=<answer>;' entries and goes away with the owner's hold (into the record of its
-- client, ended-holds.lua). Once it is longer than LOG_PRUNE_AT characters, a write drops the
-- entries of calls its client has seen answered: what is left is bounded by the calls in use.

-- logged_call(log, request): the answer the logged call got, or nil if it is not logged.
local function logged_call(log, request)
  if not log then return nil end
  -- Anchored at an entry's start: call id 'a' must not match an entry of '1a'.
  local _, at = string.find(';' .. log, ';' .. call_id(request) .. '=', 1, true)
  if not at then return nil end
  return tonumber(string.match(log, '^%d+', at))
end

-- log_call(log, request, answer): the log with this call added.
local LOG_PRUNE_AT = 256
local function log_call(log, request, answer)
  log = (log or '') .. call_id(request) .. '=' .. answer .. ';'
  if #log > LOG_PRUNE_AT then log = forget_answered(log, request) end
  return log
end

-- extend_ttl(key, ms): the key lives at least `ms` more; never shortens it (a nested hold with a
-- shorter lease must not cut an outer one).
local function extend_ttl(key, ms)
  if redis.call('PTTL', key) < tonumber(ms) then redis.call('PEXPIRE', key, ms) end
end

-- client_request(request): for a record of the caller's client (forceUnlock's, a latch's), keyed
-- by the client id its request carries: that id, and the request without it. An argument with no
-- client id ('<call id>' alone) is its own record.
local function client_request(request)
  local client, own = string.match(request, '^([^:]*):(.*)$')
  if not client then return request, request end
  return client, own
end

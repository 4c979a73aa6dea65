-- Shared functions, prepended by the registry to the release scripts.
-- A release that leaves holds behind logs its request id in a hash field, so a call that ioredis
-- resends after a reconnect (or a caller retries) is answered from the log and never decrements
-- twice. The log is a string of 'request id=holds left;' entries (request ids hold no '=' or ';').

-- logged_release(log, request_id): the hold count the logged call left, or nil if not logged.
local function logged_release(log, request_id)
  if not log then return nil end
  local _, at = string.find(log, request_id .. '=', 1, true)
  if not at then return nil end
  return tonumber(string.match(log, '^%d+', at + 1))
end

-- log_release(log, request_id, left): the log with this call added. Only the latest calls can
-- still be resent: keep it short.
local function log_release(log, request_id, left)
  log = (log or '') .. request_id .. '=' .. left .. ';'
  if #log > 512 then log = string.sub(log, string.find(log, ';', #log - 512, true) + 1) end
  return log
end

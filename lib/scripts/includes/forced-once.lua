--- @include "call-log.lua"

-- For the force-unlock scripts.
-- force_once(record_prefix, request, force): runs `force` (a function returning 1 when it
-- deleted a lock, else 0) once per request ('<client id>:<seq>/<gap>', request-window.lua). A
-- resend (the reply was lost) gets the first answer from the record of the caller's client
-- (record_prefix .. 'f:' .. client id: a call log, call-log.lua, one key per lock and client that
-- lives a minute after its latest call), and never deletes a lock taken since.
local function force_once(record_prefix, request, force)
  local client, own = client_request(request)
  local record = record_prefix .. 'f:' .. client
  local log = redis.call('GET', record)
  local done = logged_call(log, own)
  if done then return done end
  local removed = force()
  redis.pcall('SET', record, log_call(log, own, removed), 'PX', 60000)
  return removed
end

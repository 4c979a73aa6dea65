-- Shared function, prepended by the registry to the force-unlock scripts.
-- force_once(record_prefix, request_id, force): runs `force` (a function returning 1 when it
-- deleted a lock, else 0) once per request id. A resend (the reply was lost) gets the first
-- answer from a record kept a minute, and never deletes a lock taken since.
local function force_once(record_prefix, request_id, force)
  local record = record_prefix .. 'f:' .. request_id
  local done = redis.call('GET', record)
  if done then return tonumber(done) end
  local removed = force()
  redis.pcall('SET', record, removed, 'PX', 60000)
  return removed
end

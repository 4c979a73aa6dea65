-- Shared functions, prepended by the registry (first, before call-log.lua) to the scripts that
-- release a hold. A release that ends an owner's hold deletes the owner's call log with it; the
-- answers a resend may still ask for go to the record of the owner's client on that lock: one
-- key per lock, kind of hold and client (record prefix .. tag .. client id), overwritten by each
-- final release, never one key per release. It is a call log of its own ('request id=holds;'
-- entries, call-log.lua): the ended owner's log and the final release, after the entries of the
-- client's earlier ended holds on the lock, so that releases of one client in flight at once (a
-- partial and the final one, or the final releases of two owners) are each answered right when
-- a resend replays them in order.

-- record_key(prefix, tag, owner): the record of `owner`'s client. Owner ids are
-- `client id:context id` (the context id holds no ':').
local function record_key(prefix, tag, owner)
  return prefix .. tag .. (string.match(owner, '^(.*):') or owner)
end

-- record_final(key, log, request_id, record_ms): the final release `request_id` of an owner whose
-- call log was `log` goes on the record, which lives at least record_ms more. Only the latest
-- calls can still be resent: the record keeps its last 160 characters or so. pcall: whatever
-- Redis says to the record, the release it follows has happened and must not turn into an error.
local function record_final(key, log, request_id, record_ms)
  local ms = tonumber(record_ms)
  local entries = redis.pcall('GET', key)
  if type(entries) == 'string' then
    local left = redis.pcall('PTTL', key)
    if type(left) == 'number' and left > ms then ms = left end
  else
    entries = ''
  end
  entries = entries .. (log or '') .. request_id .. '=0;'
  if #entries > 160 then entries = string.sub(entries, string.find(entries, ';', #entries - 160, true) + 1) end
  redis.pcall('SET', key, entries, 'PX', ms)
end

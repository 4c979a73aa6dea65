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
-- call log was `log` goes on the record, which lives at least record_ms more. APPEND, not a
-- read and a rewrite: the record grows by one entry per final release, and is cut back to its
-- latest RECORD_KEEP characters or so once it passes RECORD_CAP (only the latest calls can still
-- be resent). pcall: whatever Redis says to the record, the release it follows has happened and
-- must not turn into an error.
local RECORD_CAP, RECORD_KEEP = 320, 160
local function record_final(key, log, request_id, record_ms)
  local entry = (log or '') .. request_id .. '=0;'
  local length = redis.pcall('APPEND', key, entry)
  if type(length) ~= 'number' then return end
  if length == #entry then
    redis.pcall('PEXPIRE', key, record_ms)
  elseif type(redis.pcall('PEXPIRE', key, record_ms, 'GT')) == 'table' then
    -- Redis 6.2 has no GT: never shorten what the earlier entries need.
    local left = redis.pcall('PTTL', key)
    if type(left) == 'number' and left < tonumber(record_ms) then redis.pcall('PEXPIRE', key, record_ms) end
  end
  if length > RECORD_CAP then
    local entries = redis.pcall('GET', key)
    if type(entries) == 'string' then
      local cut = string.find(entries, ';', #entries - RECORD_KEEP, true)
      if cut then redis.pcall('SET', key, string.sub(entries, cut + 1), 'KEEPTTL') end
    end
  end
end

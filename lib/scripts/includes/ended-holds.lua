--- @include "request-window.lua"

-- For the scripts that release a hold. A release that ends an owner's hold deletes the owner's call
-- log with it; the answers a resend may still ask for go to the record of the owner's client on
-- that lock: one key per lock, kind of hold and client (record prefix .. tag .. client id),
-- appended to by each final release, never one key per release. It is a call log of its own
-- ('<call id>=<answer>;' entries, call-log.lua): the ended owner's log and the final release,
-- after the entries of the client's earlier ended holds on the lock, so that releases of one
-- client in flight at once (a partial and the final one, or the final releases of two owners) are
-- each answered right when a resend replays them in order.

-- record_key(prefix, tag, owner): the record of `owner`'s client. Owner ids are
-- `client id:context id` (the context id holds no ':').
local function record_key(prefix, tag, owner)
  return prefix .. tag .. (string.match(owner, '^(.*):') or owner)
end

-- RECORD_MAX_MS (lib/options.ts): the longest any client asks a record to answer.
local RECORD_MAX_MS = 60000

-- record_alone(key, log, request, record_ms): the record is this call's entry and the entries that
-- can still be resent: any other client's (ids '<client id>:<seq>', calls for an adopted hold,
-- which this client's window says nothing of) and this client's own numbered at or above this
-- call's oldest call in use. A background retry keeps its gap-0 id while the client's later calls
-- run, so the log and the record may hold later calls of the client (a release of the same owner
-- applied meanwhile, whose reply was lost): forget_answered keeps them. One SET ... GET; a second
-- SET only when the old record held entries that can still be resent.
local function record_alone(key, log, request, record_ms)
  local entry = call_id(request) .. '=0;'
  if log then entry = forget_answered(log, request) .. entry end
  local old = redis.pcall('SET', key, entry, 'PX', record_ms, 'GET')
  if type(old) == 'string' and old ~= '' then
    local kept = forget_answered(old, request)
    -- Their own record_ms is unknown here: keep them as long as any client asks.
    if kept ~= '' then redis.pcall('SET', key, kept .. entry, 'PX', RECORD_MAX_MS) end
  end
end

-- record_final(key, log, request, record_ms, alone): the final release `request` of an owner whose
-- call log was `log` goes on the record, which lives at least record_ms more. APPEND, not a read
-- and a rewrite: the record grows by one entry per final release; once it is longer than
-- RECORD_PRUNE_AT characters the entries of calls the client has seen answered go
-- (request-window.lua), so it keeps the calls in use. pcall: whatever Redis says to the record,
-- the release it follows has happened and must not turn into an error.
-- `alone`: the hold was exclusive (no other hold of the lock, of this client or another, while
-- it held). With no older call of the client in use (gap 0) and its own id (no client tag), the
-- own entries below it are answered and will never be sent again: one SET replaces the record
-- with the entries that can still be resent (record_alone). Shared holds (readers) append.
local RECORD_PRUNE_AT = 256
local function record_final(key, log, request, record_ms, alone)
  if alone and string.sub(request, -2) == '/0' and not string.find(request, ':', 1, true) then
    return record_alone(key, log, request, record_ms)
  end
  local entry = (log or '') .. call_id(request) .. '=0;'
  local length = redis.pcall('APPEND', key, entry)
  if type(length) ~= 'number' then return end
  if length == #entry then
    redis.pcall('PEXPIRE', key, record_ms)
  elseif type(redis.pcall('PEXPIRE', key, record_ms, 'GT')) == 'table' then
    -- Redis 6.2 has no GT: never shorten what the earlier entries need.
    local left = redis.pcall('PTTL', key)
    if type(left) == 'number' and left < tonumber(record_ms) then redis.pcall('PEXPIRE', key, record_ms) end
  end
  if length > RECORD_PRUNE_AT then
    local entries = redis.pcall('GET', key)
    if type(entries) == 'string' then redis.pcall('SET', key, forget_answered(entries, request), 'KEEPTTL') end
  end
end

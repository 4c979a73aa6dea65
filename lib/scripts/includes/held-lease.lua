--- @include "server-time.lua"
--- @include "read-write-holds.lua"

-- For the scripts that move a lease (extend, hand off, adopt). They read and lengthen ONE hold of any kind, named
-- as the watchdog names it (RenewTarget): a kind and a holder.
--   'lock'   an exclusive lock (plain, fair, fenced): main = lock hash, holder = owner id
--   'read'   a read hold: main = read-write hash, readers = its readers set, holder = 'r:' .. owner
--   'write'  the write hold: main and readers as for 'read', holder = 'w:' .. owner
--   'permit' a semaphore acquisition: main = the permit set, holder = its member

-- held_state(kind, main, readers, holder, now): the hold's count and the ms left of its lease,
-- or nil when the holder holds nothing (released, expired, taken over).
local function held_state(kind, main, readers, holder, now)
  if kind == 'lock' then
    local count = redis.call('HGET', main, holder)
    if not count then return nil end
    return tonumber(count), redis.call('PTTL', main)
  elseif kind == 'read' then
    local ends = tonumber(redis.call('ZSCORE', readers, string.sub(holder, 3)) or '0')
    local count = redis.call('HGET', main, holder)
    if ends <= now or not count then return nil end
    return tonumber(count), ends - now
  elseif kind == 'write' then
    local writer = redis.call('HMGET', main, 'writer', 'writes', 'wuntil')
    if writer[1] ~= string.sub(holder, 3) or tonumber(writer[3]) <= now then return nil end
    return tonumber(writer[2]), tonumber(writer[3]) - now
  end
  local ends = tonumber(redis.call('ZSCORE', main, holder) or '0')
  if ends <= now then return nil end
  return 1, ends - now
end

-- move_hold(kind, main, readers, holder, ms, now, exact): the hold's lease ends `ms` from now:
-- exactly (`exact`: a hand-off sets the gap, sooner or later than before) or no earlier (an
-- extension never shortens a lease a re-entry or a longer extension set further). Only this
-- holder's lease moves: the other readers of a read-write lock and the other permits of a
-- semaphore keep theirs (their keys are never cut short under them).
local function move_hold(kind, main, readers, holder, ms, now, exact)
  if kind == 'lock' then
    -- An exclusive lock's hash is this holder's alone.
    if exact or redis.call('PTTL', main) < ms then redis.call('PEXPIRE', main, ms) end
  elseif kind == 'read' then
    if exact then
      redis.call('ZADD', readers, now + ms, string.sub(holder, 3))
    else
      rw_extend_read(readers, string.sub(holder, 3), now + ms)
    end
    rw_settle(main, readers)
  elseif kind == 'write' then
    if exact then redis.call('HSET', main, 'wuntil', now + ms) else rw_extend_write(main, now + ms) end
    rw_settle(main, readers)
  else
    redis.call('ZADD', main, exact and 'XX' or 'GT', now + ms, holder)
    if redis.call('PTTL', main) < ms then redis.call('PEXPIRE', main, ms) end
  end
end

-- kept_state(kind, main, readers, holder, ms, now, count, left): keeps the hold at least `ms`
-- (0: as it is, answering the `count` and `left` already read) and answers its state then.
local function kept_state(kind, main, readers, holder, ms, now, count, left)
  if ms <= 0 then return count, left end
  move_hold(kind, main, readers, holder, ms, now, false)
  return held_state(kind, main, readers, holder, now)
end

-- fencing_token(kind, main): a fenced lock's token, '' for every other kind.
local function fencing_token(kind, main)
  if kind ~= 'lock' then return '' end
  return redis.call('HGET', main, 'token') or ''
end

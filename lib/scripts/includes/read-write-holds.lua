--- @include "server-time.lua"

-- For the read-write lock scripts. A read-write lock is two keys, always expiring together:
--   hash    'writer' -> owner id of the write holder (absent: no writer)
--           'writes' -> its write hold count
--           'wuntil' -> when its write lease ends, server ms
--           'r:' .. owner id -> that owner's read hold count
--           'log:w:' / 'log:r:' .. owner id -> call logs (call-log.lua)
--   readers sorted set: owner id -> when that owner's read lease ends, server ms
-- Each reader has its own lease; both keys expire when the longest hold ends, so a lock whose
-- holders all died disappears by itself.

-- rw_prune(hash, readers, now): drops holds whose lease has ended. Nothing else removes a dead
-- reader while other holds keep the keys alive.
local function rw_prune(hash, readers, now)
  local dead = redis.call('ZRANGEBYSCORE', readers, '-inf', now)
  if #dead > 0 then
    for _, owner in ipairs(dead) do
      redis.call('HDEL', hash, 'r:' .. owner, 'log:r:' .. owner)
    end
    redis.call('ZREMRANGEBYSCORE', readers, '-inf', now)
  end
  local writer = redis.call('HMGET', hash, 'writer', 'wuntil')
  if writer[1] and tonumber(writer[2]) <= now then
    redis.call('HDEL', hash, 'writer', 'writes', 'wuntil', 'log:w:' .. writer[1])
  end
end

-- rw_settle(hash, readers): lets both keys expire with the hold that ends last, or deletes them
-- when no hold is left. Returns true when the lock is free.
local function rw_settle(hash, readers)
  local wuntil = tonumber(redis.call('HGET', hash, 'wuntil') or '0')
  local longest = tonumber(redis.call('ZRANGE', readers, -1, -1, 'WITHSCORES')[2] or '0')
  local ends = math.max(wuntil, longest)
  if ends == 0 then
    redis.call('DEL', hash, readers)
    return true
  end
  redis.call('PEXPIREAT', hash, ends)
  if longest > 0 then redis.call('PEXPIREAT', readers, ends) end
  return false
end

-- rw_extend_read(readers, owner, ends): the owner's read lease ends no earlier than `ends`.
-- Leases are extended, never shortened: a short nested hold does not cut a long one.
local function rw_extend_read(readers, owner, ends)
  local current = tonumber(redis.call('ZSCORE', readers, owner) or '0')
  if ends > current then redis.call('ZADD', readers, ends, owner) end
end

-- rw_extend_write(hash, ends): the writer's lease ends no earlier than `ends`.
local function rw_extend_write(hash, ends)
  local current = tonumber(redis.call('HGET', hash, 'wuntil') or '0')
  if ends > current then redis.call('HSET', hash, 'wuntil', ends) end
end

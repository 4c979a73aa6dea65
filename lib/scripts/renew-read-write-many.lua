-- Watchdog renewal of many read and write holds of read-write locks in one call (layout:
-- read-write-holds.lua). Renews only a hold whose owner still has it and whose lease has not
-- ended: never re-acquires, and never keeps another reader alive.
-- The keys are read from ARGV so one body serves both ways of calling it (see renew-many.lua):
-- KEYS          all the keys below when they share one slot; on a Redis 7 Cluster node batch
--               only the first (for routing; the others live on its node)
-- ARGV[1]       new lease, ms
-- ARGV[2]       n, the number of holds
-- ARGV[1+2i]    lock hash of hold i (i = 1..n)
-- ARGV[2+2i]    its readers sorted set
-- ARGV[2+2n+i]  hold i: 'r:' or 'w:' followed by the owner id
-- Returns a table, one entry per hold: 1 renewed; 0 the lock is gone; 2 the owner no longer
-- has that hold but others hold the lock.
--- @include "includes/server-time.lua"
--- @include "includes/read-write-holds.lua"
--- @include "includes/renew-outcome.lua"
local now = server_ms()
local ends = now + tonumber(ARGV[1])
local n = tonumber(ARGV[2])
local renewed = {}
for i = 1, n do
  local hash, readers, hold = ARGV[1 + 2 * i], ARGV[2 + 2 * i], ARGV[2 + 2 * n + i]
  local owner = string.sub(hold, 3)
  local alive
  if string.sub(hold, 1, 1) == 'r' then
    local lease_end = tonumber(redis.call('ZSCORE', readers, owner) or '0')
    alive = lease_end > now and redis.call('HEXISTS', hash, hold) == 1
    if alive then rw_extend_read(readers, owner, ends) end
  else
    local writer = redis.call('HMGET', hash, 'writer', 'wuntil')
    alive = writer[1] == owner and tonumber(writer[2]) > now
    if alive then rw_extend_write(hash, ends) end
  end
  if alive then rw_settle(hash, readers) end
  renewed[i] = renew_outcome(alive, hash)
end
return renewed

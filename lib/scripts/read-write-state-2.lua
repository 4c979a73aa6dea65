-- Read-only look at a read-write lock (layout: read-write-holds.lua) for the queries; holds
-- whose lease has ended count as gone even before a script prunes them.
-- KEYS[1] lock hash
-- KEYS[2] readers: owner id -> end of its read lease, server ms
-- ARGV[1] owner id asking
-- Returns { ms left of the write lease (-2: no writer), the asking owner's write hold count,
--           number of readers, ms left of the longest read lease (-2: no reader),
--           the asking owner's read hold count }.
--- @include "includes/server-time.lua"
local now = server_ms()
local state = redis.call('HMGET', KEYS[1], 'writer', 'writes', 'wuntil', 'r:' .. ARGV[1])
local write_left, own_writes = -2, 0
if state[1] and tonumber(state[3]) > now then
  write_left = tonumber(state[3]) - now
  if state[1] == ARGV[1] then own_writes = tonumber(state[2]) end
end

local readers = redis.call('ZCOUNT', KEYS[2], '(' .. now, '+inf')
local read_left, own_reads = -2, 0
if readers > 0 then
  read_left = tonumber(redis.call('ZRANGE', KEYS[2], -1, -1, 'WITHSCORES')[2]) - now
  if tonumber(redis.call('ZSCORE', KEYS[2], ARGV[1]) or '0') > now then own_reads = tonumber(state[4] or '0') end
end
return { write_left, own_writes, readers, read_left, own_reads }

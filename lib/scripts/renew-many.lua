-- Watchdog renewal of many held locks in one call. Renews only where the expected owner still
-- holds the lock: never re-acquires, and never shortens a longer lease a re-entry set.
-- The lock keys are read from ARGV so that one body serves both ways of calling it:
-- KEYS      the lock keys, when they all share one slot (standalone, or one slot of a Cluster);
--           on a Redis 7 Cluster node batch, only the first (it routes the call to its node);
--           a script without a `#!lua` line may touch the others, which all live on that node
-- ARGV[1]       new TTL, ms
-- ARGV[2]       n, the number of locks
-- ARGV[2+i]     lock key i (i = 1..n)
-- ARGV[2+n+i]   owner id expected to hold lock key i
-- Returns a table, one entry per lock: 1 renewed; 0 the key is gone; 2 other owners hold it.
--- @include "includes/renew-outcome.lua"
local n = tonumber(ARGV[2])
local renewed = {}
for i = 1, n do
  local key, owner = ARGV[2 + i], ARGV[2 + n + i]
  local held = redis.call('HEXISTS', key, owner) == 1
  if held and redis.call('PTTL', key) < tonumber(ARGV[1]) then redis.call('PEXPIRE', key, ARGV[1]) end
  renewed[i] = renew_outcome(held, key)
end
return renewed

-- Watchdog renewal of many held locks in one call (all KEYS in one slot on a Cluster).
-- Renews only where the expected owner still holds the lock: never re-acquires.
-- KEYS[i]   lock hash i
-- ARGV[1]   new TTL, ms
-- ARGV[i+1] owner id expected to hold KEYS[i]
-- Returns a table, one entry per key: 1 renewed; 0 the key is gone; 2 other owners hold it.
local renewed = {}
for i = 1, #KEYS do
  if redis.call('HEXISTS', KEYS[i], ARGV[i + 1]) == 1 then
    redis.call('PEXPIRE', KEYS[i], ARGV[1])
    renewed[i] = 1
  elseif redis.call('EXISTS', KEYS[i]) == 1 then
    renewed[i] = 2
  else
    renewed[i] = 0
  end
end
return renewed

-- Watchdog renewal of many semaphore permits in one call (layout: semaphore.lua). Renews only a
-- permit whose lease has not ended: never re-grants, never shortens.
-- The keys are read from ARGV so one body serves both ways of calling it (see renew-many.lua):
-- KEYS          the permit sets when they share one slot; on a Redis 7 Cluster node batch only
--               the first (for routing; the others live on its node)
-- ARGV[1]       new lease, ms
-- ARGV[2]       n, the number of permits
-- ARGV[2+i]     permit set of permit i (i = 1..n)
-- ARGV[2+n+i]   its member '<count>:<permit id>'
-- Returns a table, one entry per permit: 1 renewed; 0 gone (its lease ended or it was released).
--- @include "includes/server-time.lua"
local now = server_ms()
local ttl = tonumber(ARGV[1])
local n = tonumber(ARGV[2])
local renewed = {}
for i = 1, n do
  local key, member = ARGV[2 + i], ARGV[2 + n + i]
  local lease_end = redis.call('ZSCORE', key, member)
  if lease_end and tonumber(lease_end) > now then
    redis.call('ZADD', key, 'GT', now + ttl, member)
    if redis.call('PTTL', key) < ttl then redis.call('PEXPIRE', key, ttl) end
    renewed[i] = 1
  else
    renewed[i] = 0
  end
end
return renewed

-- How many permits are free for a semaphore object with this limit: limit - unexpired permits
-- out (ended leases not yet pruned are not counted). Writes nothing.
-- KEYS[1] permits (semaphore.lua)
-- ARGV[1] limit
-- Returns the free permits, at least 0.
--- @include "includes/semaphore.lua"
local now = server_ms()
local out = tonumber(redis.call('ZSCORE', KEYS[1], '#') or '0')
for _, member in ipairs(redis.call('ZRANGE', KEYS[1], SEM_LEASES, now, 'BYSCORE')) do
  out = out - sem_count(member)
end
return math.max(0, tonumber(ARGV[1]) - out)

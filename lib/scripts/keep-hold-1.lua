-- runExclusive after its function settled: the run's hold stays in Redis until `atLeastFor` after
-- the start, then expires by itself. Never lengthens the lease: a resent call, which comes later,
-- finds a shorter TTL and changes nothing.
-- KEYS[1] lock hash (acquire-2.lua)
-- ARGV[1] owner id of the run
-- ARGV[2] how much longer to keep the lock, ms (> 0)
-- Returns 1 when the owner still held the lock (its TTL is at most ARGV[2] now), else 0.
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 0 then return 0 end
if redis.call('PTTL', KEYS[1]) > tonumber(ARGV[2]) then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 1

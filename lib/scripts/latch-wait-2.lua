-- Count-down latch: is it open? If not, register the caller's client in the waiter set, which a
-- count down to 0 wakes (one notice per client). The set expires when no client has registered
-- for a while: it cannot outlive clients that all died.
-- KEYS[1] latch hash: 'count' -> count left
-- KEYS[2] waiter set: client id -> registration time (ms)
-- ARGV[1] client id ('' only asks, never registers)
-- ARGV[2] ms the client sleeps at most before it registers again
-- Returns the count left; 0 when the latch is open (unset or counted down).
--- @include "includes/server-time.lua"
local count = tonumber(redis.call('HGET', KEYS[1], 'count') or '0')
if count == 0 or ARGV[1] == '' then return count end
if redis.call('ZSCORE', KEYS[2], ARGV[1]) == false then redis.call('ZADD', KEYS[2], server_ms(), ARGV[1]) end
local keep = tonumber(ARGV[2]) + 1000
if redis.call('PTTL', KEYS[2]) < keep then redis.call('PEXPIRE', KEYS[2], keep) end
return count

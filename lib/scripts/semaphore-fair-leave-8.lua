-- Fair semaphore: a waiting call gave up (its wait ran out, it was aborted, its client closed):
-- it leaves the queue at once; if it was the head, the next head is told when it fits. Leases
-- that ended (pruned here) wake waiters for their permits.
-- KEYS: the common keys (semaphore.lua)
-- ARGV[1] waiter id
-- ARGV[2] limit
-- ARGV[3] publish command
-- Returns 1 when the waiter was queued, 0 when it was not (any more).
--- @include "includes/semaphore.lua"
--- @include "includes/semaphore-waiters.lua"
local rank = redis.call('ZRANK', KEYS[6], ARGV[1])
if rank == false then return 0 end
redis.call('ZREM', KEYS[6], ARGV[1])
redis.call('ZREM', KEYS[7], ARGV[1])
local now = server_ms()
local out, freed = sem_prune(KEYS[1], now)
local free = tonumber(ARGV[2]) - out
if rank == 0 then
  sem_turn(KEYS[6], KEYS[7], KEYS[8], ARGV[3], -1, free, now)
elseif freed > 0 then
  sem_turn(KEYS[6], KEYS[7], KEYS[8], ARGV[3], free - freed, free, now)
end
if freed > 0 then sem_wake(KEYS[2], KEYS[3], KEYS[5], KEYS[4], ARGV[3], free, now) end
return 1

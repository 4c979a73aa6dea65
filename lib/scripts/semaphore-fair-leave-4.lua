-- Fair semaphore: a waiting call gave up (its wait ran out, it was aborted, its client closed):
-- it leaves the queue at once; if it was the head, the next head is told when it fits.
-- KEYS[1] permits   KEYS[2] queue   KEYS[3] timeouts   KEYS[4] turn channel prefix
-- ARGV[1] waiter id
-- ARGV[2] limit
-- ARGV[3] publish command
-- Returns 1 when the waiter was queued, 0 when it was not (any more).
local rank = redis.call('ZRANK', KEYS[2], ARGV[1])
if rank == false then return 0 end
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('ZREM', KEYS[3], ARGV[1])
if rank == 0 then
  local out = sem_prune(KEYS[1], server_ms())
  sem_turn(KEYS[2], KEYS[3], KEYS[4], ARGV[3], -1, tonumber(ARGV[2]) - out)
end
return 1

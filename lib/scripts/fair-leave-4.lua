-- A waiting call gave up (its wait ran out, it was aborted, its client closed): it leaves the
-- queue at once, so it delays nobody behind it.
-- KEYS[1] lock hash
-- KEYS[2] queue: waiter id -> ticket
-- KEYS[3] timeouts: waiter id -> server time (ms) at which it loses its place
-- KEYS[4] turn channel prefix (+ client id)
-- ARGV[1] waiter id
-- ARGV[2] publish command: 'publish', 'spublish' or 'publish-cluster' (wake-one.lua)
-- Returns 1 when the waiter was queued, 0 when it was not (any more).
--- @include "includes/fair-queue.lua"
local rank = redis.call('ZRANK', KEYS[2], ARGV[1])
if rank == false then return 0 end
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('ZREM', KEYS[3], ARGV[1])
-- A head leaving a free lock may have been told it was its turn: the turn passes on.
if rank == 0 and redis.call('EXISTS', KEYS[1]) == 0 then notify_head(KEYS[2], KEYS[3], KEYS[4], ARGV[2]) end
return 1

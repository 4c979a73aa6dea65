-- Delete a fair lock whoever holds it, and tell the head of the queue that it is its turn.
-- KEYS[1] lock hash
-- KEYS[2] queue: waiter id -> ticket
-- KEYS[3] timeouts: waiter id -> server time (ms) at which it loses its place
-- KEYS[4] turn channel prefix (+ client id)
-- ARGV[1] publish command: 'publish', 'spublish' or 'publish-cluster' (wake-one.lua)
-- Returns 1 when a lock was deleted, 0 when there was none.
if redis.call('DEL', KEYS[1]) == 0 then return 0 end
notify_head(KEYS[2], KEYS[3], KEYS[4], ARGV[1])
return 1

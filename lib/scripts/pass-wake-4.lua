-- A client was woken but has no local waiter left (they gave up or acquired meanwhile):
-- leave the waiter set and, if the lock is free, hand the wake-up on to the next client.
-- KEYS[1] lock hash
-- KEYS[2] waiter set the client leaves
-- KEYS[3] waiter set to wake the next client from: the same set for an exclusive lock; the
--         writers' set for a reader of a read-write lock (the other readers were woken too)
-- KEYS[4] wake channel prefix (+ client id) of that set
-- ARGV[1] client id passing the wake-up on
-- ARGV[2] publish command: 'publish', 'spublish' or 'publish-cluster' (wake-one.lua)
-- Returns 1 when another client was woken, 0 otherwise.
--- @include "includes/wake-one.lua"
redis.call('ZREM', KEYS[2], ARGV[1])
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
return wake_one(KEYS[3], KEYS[4], ARGV[2])

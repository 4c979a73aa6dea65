-- Delete the lock whoever holds it, and wake one waiting client.
-- KEYS[1] lock hash
-- KEYS[2] waiter set
-- KEYS[3] wake channel prefix (+ client id)
-- ARGV[1] publish command: 'publish', 'spublish' or 'publish-cluster' (wake-one.lua)
-- Returns 1 when a lock was deleted, 0 when there was none.
if redis.call('DEL', KEYS[1]) == 0 then return 0 end
wake_one(KEYS[2], KEYS[3], ARGV[1])
return 1

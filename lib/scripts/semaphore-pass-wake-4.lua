-- A client was woken but has no local waiter left to use it (they gave up or got permits
-- meanwhile): leave the waiter set, and hand the free permits on to the next clients.
-- KEYS[1] permits   KEYS[2] waiter set   KEYS[3] need hints   KEYS[4] wake channel prefix
-- ARGV[1] client id
-- ARGV[2] limit
-- ARGV[3] publish command
-- ARGV[4] permits the unused notice was for
-- Returns nothing.
local now = server_ms()
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('HDEL', KEYS[3], ARGV[1])
local out = sem_prune(KEYS[1], now)
sem_wake(KEYS[2], KEYS[3], KEYS[4], ARGV[3], math.min(tonumber(ARGV[2]) - out, tonumber(ARGV[4])))

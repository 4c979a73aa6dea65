-- Count-down latch: one count down. At 0 the key is deleted and every waiting client is woken
-- with one notice each (wake-all.lua). Never below 0; on an unset latch nothing is written.
-- Once per request id (a record answers a resend for a minute).
-- KEYS[1] latch hash: 'count' -> count left
-- KEYS[2] waiter set: client id -> registration time (ms)
-- KEYS[3] wake channel prefix (+ client id)
-- KEYS[4] record prefix ('l:' .. request id -> answer)
-- ARGV[1] request id, unique across clients
-- ARGV[2] publish command: 'publish', 'spublish' or 'publish-cluster'
-- Returns the count left (0 also for an unset latch).
local record = KEYS[4] .. 'l:' .. ARGV[1]
local done = redis.call('GET', record)
if done then return tonumber(done) end
local count = tonumber(redis.call('HGET', KEYS[1], 'count'))
if not count then return 0 end
local left = 0
if count <= 1 then
  redis.call('DEL', KEYS[1])
  wake_all(KEYS[2], KEYS[3], ARGV[2])
else
  left = redis.call('HINCRBY', KEYS[1], 'count', -1)
end
redis.pcall('SET', record, left, 'PX', 60000)
return left

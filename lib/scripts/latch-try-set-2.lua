-- Count-down latch: set the count if the latch is not set (absent: an unset latch, or one that
-- reached 0, whose key is gone). Once per request id: the answer is kept in a record for a
-- minute, so a resend (after the latch may even have reached 0 again) changes nothing.
-- KEYS[1] latch hash: 'count' -> count left
-- KEYS[2] record prefix ('l:' .. request id -> answer)
-- ARGV[1] count, a whole number >= 1
-- ARGV[2] request id, unique across clients (no ':' needed, any string)
-- Returns 1 when this call set the count, 0 when the latch was set already.
local record = KEYS[2] .. 'l:' .. ARGV[2]
local done = redis.call('GET', record)
if done then return tonumber(done) end
local set = 0
if redis.call('EXISTS', KEYS[1]) == 0 then
  redis.call('HSET', KEYS[1], 'count', ARGV[1])
  set = 1
end
redis.pcall('SET', record, set, 'PX', 60000)
return set

-- Count-down latch: one count down. At 0 the key is deleted and every waiting client is woken
-- with one notice each (wake-all.lua). Never below 0; on an unset latch nothing is written.
-- Once per request: the answer goes to the record of the caller's client, which answers a resend
-- (a call log, call-log.lua, one key per latch and client, kept a minute after its latest call).
-- KEYS[1] latch hash: 'count' -> count left
-- KEYS[2] waiter set: client id -> registration time (ms)
-- KEYS[3] wake channel prefix (+ client id)
-- KEYS[4] record prefix ('l:' .. client id -> the client's call log)
-- ARGV[1] request of this call, '<client id>:<seq>/<gap>' (request-window.lua)
-- ARGV[2] publish command: 'publish', 'spublish' or 'publish-cluster'
-- Returns the count left (0 also for an unset latch).
--- @include "includes/call-log.lua"
--- @include "includes/wake-all.lua"
local client, own = client_request(ARGV[1])
local record = KEYS[4] .. 'l:' .. client
local log = redis.call('GET', record)
local done = logged_call(log, own)
if done then return done end
local count = tonumber(redis.call('HGET', KEYS[1], 'count'))
if not count then return 0 end
local left = 0
if count <= 1 then
  redis.call('DEL', KEYS[1])
  wake_all(KEYS[2], KEYS[3], ARGV[2])
else
  left = redis.call('HINCRBY', KEYS[1], 'count', -1)
end
redis.pcall('SET', record, log_call(log, own, left), 'PX', 60000)
return left

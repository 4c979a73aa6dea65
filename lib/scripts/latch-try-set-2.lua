-- Count-down latch: set the count if the latch is not set (absent: an unset latch, or one that
-- reached 0, whose key is gone). Once per request: the answer goes to the record of the caller's
-- client (as in latch-count-down-4.lua), so a resend (after the latch may even have reached 0
-- again) changes nothing.
-- KEYS[1] latch hash: 'count' -> count left
-- KEYS[2] record prefix ('l:' .. client id -> the client's call log)
-- ARGV[1] count, a whole number >= 1
-- ARGV[2] request of this call, '<client id>:<seq>/<gap>' (request-window.lua)
-- Returns 1 when this call set the count, 0 when the latch was set already.
--- @include "includes/call-log.lua"
local client, own = client_request(ARGV[2])
local record = KEYS[2] .. 'l:' .. client
local log = redis.call('GET', record)
local done = logged_call(log, own)
if done then return done end
local set = 0
if redis.call('EXISTS', KEYS[1]) == 0 then
  redis.call('HSET', KEYS[1], 'count', ARGV[1])
  set = 1
end
redis.pcall('SET', record, log_call(log, own, set), 'PX', 60000)
return set

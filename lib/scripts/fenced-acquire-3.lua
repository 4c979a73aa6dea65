-- Acquire or re-enter a fenced lock: the reentrant lock of acquire-2.lua, plus a fencing token.
-- Every acquisition from unlocked takes the next value of a counter that never expires and is
-- never reset, so its token is greater than every token given before for this name, also
-- after the lock expired or was force-unlocked; a re-entry (or a resent call) gets the holder's
-- token.
-- KEYS[1] lock hash: owner id -> hold count, 'log:' .. owner id -> call log, 'token' -> the
--         holder's token; TTL = the lease
-- KEYS[2] waiter set: client id -> server time of registration (ms)
-- KEYS[3] token counter (a plain integer key, kept forever)
-- ARGV[1] owner id
-- ARGV[2] lease, ms (a re-entry extends the TTL to it, never shortens it)
-- ARGV[3] client id
-- ARGV[4] waiter mode, as in acquire-2.lua
-- ARGV[5] request of this call (request-window.lua): a resend is applied once
-- Returns { token } when acquired or re-entered; otherwise the holder's PTTL in ms (-1 when the
-- key has no TTL), which bounds the caller's sleep.
--- @include "includes/waiter-set.lua"
--- @include "includes/enter-hold.lua"
local ttl = redis.call('PTTL', KEYS[1])
local entered = enter_hold(KEYS[1], ARGV[1], ARGV[5], ARGV[2], ttl == -2)
if entered then
  local token
  if entered == 'taken' then
    token = redis.call('INCR', KEYS[3])
    redis.call('HSET', KEYS[1], 'token', token)
  else
    token = redis.call('HGET', KEYS[1], 'token')
  end
  if entered ~= 'resent' then waiter_acquired(KEYS[2], ARGV[3], ARGV[4], tonumber(ARGV[2])) end
  return { tonumber(token) }
end

if ARGV[4] ~= '0' then register_waiter(KEYS[2], ARGV[3], ttl > 0 and ttl or tonumber(ARGV[2]), ARGV[4]) end
return ttl

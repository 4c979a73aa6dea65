-- Adopt a handed-off hold (locks.adopt(handle)): takes the one-shot claim hand-off-hold-3.lua
-- opened, so of two adopters exactly one gets the hold. A resend of the winning call (same
-- request id) is answered again; any other call finds the claim taken and gets -1.
-- KEYS[1] main key of the hold, KEYS[2] readers set (as in extend-hold-3.lua)
-- KEYS[3] the holder's claim record ('open:' .. handle id; 'adopted:' .. handle id .. ':' ..
--         request id once adopted, kept as long as the lease it found)
-- ARGV[1] kind: 'lock', 'read', 'write' or 'permit'
-- ARGV[2] holder (held-lease.lua)
-- ARGV[3] watchdog lease, ms: the hold lives at least this long from now; '0' for a fixed lease
--         (kept as it is)
-- ARGV[4] handle id
-- ARGV[5] request id of this call
-- Clears the holder's call log (call-log.lua) when it takes the claim.
-- Returns { hold count, ms left of its lease, fencing token or '' }; -1 when the hold ended, the
-- handle was adopted already, or a later hand-off replaced it.
--- @include "includes/server-time.lua"
--- @include "includes/held-lease.lua"
local now = server_ms()
local kind, holder = ARGV[1], ARGV[2]
local claim = redis.call('GET', KEYS[3])
local mine = 'adopted:' .. ARGV[4] .. ':' .. ARGV[5]
if claim ~= mine and claim ~= 'open:' .. ARGV[4] then return -1 end
local count, left = held_state(kind, KEYS[1], KEYS[2], holder, now)
if not count then return -1 end
if claim ~= mine then
  count, left = kept_state(kind, KEYS[1], KEYS[2], holder, tonumber(ARGV[3]), now, count, left)
  redis.call('SET', KEYS[3], mine, 'PX', math.max(1, left))
  -- The handing-off process no longer calls for this owner, and the adopter's request ids come
  -- from another counter: its call log must not answer them (call-log.lua).
  if kind ~= 'permit' then redis.call('HDEL', KEYS[1], 'log:' .. holder) end
end
return { count, left, fencing_token(kind, KEYS[1]) }

-- Extend a fixed-lease hold (lease.extend(ms)): its lease ends no earlier than `ms` from now
-- (held-lease.lua: never shortened). Applied once per request: a resend is answered from the
-- holder's extension record, a call log (call-log.lua) that lives as long as the longest
-- extension it answers.
-- KEYS[1] main key of the hold (lock hash, read-write hash, or permit set)
-- KEYS[2] readers set of a read-write lock (any key of the same slot for the other kinds)
-- KEYS[3] the holder's extension record: '<call id>=1;' entries
-- ARGV[1] kind: 'lock', 'read', 'write' or 'permit'
-- ARGV[2] holder (held-lease.lua)
-- ARGV[3] ms the lease lasts from now, at least
-- ARGV[4] request of this call (request-window.lua)
-- Returns 1 when extended (or this call was applied before), 0 when the holder holds nothing.
--- @include "includes/server-time.lua"
--- @include "includes/held-lease.lua"
--- @include "includes/call-log.lua"
local now = server_ms()
local record = redis.call('GET', KEYS[3])
if logged_call(record, ARGV[4]) then return 1 end
if not held_state(ARGV[1], KEYS[1], KEYS[2], ARGV[2], now) then return 0 end
local ms = tonumber(ARGV[3])
move_hold(ARGV[1], KEYS[1], KEYS[2], ARGV[2], ms, now, false)
redis.call('SET', KEYS[3], log_call(record, ARGV[4], 1), 'PX', math.max(ms, redis.call('PTTL', KEYS[3])))
return 1
